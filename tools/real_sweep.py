"""Sweep recordings through the command line as a user runs it: for each file, ``threads-cases
import FORMAT FILE``, then ``save`` of every turn (matchers drafted), then ``run`` of the
saved cases on every implementation; one line per file, and a total.

    python tools/real_sweep.py vcr DIR_OR_FILES...            # every file under the folders
    python tools/real_sweep.py inspect-ai log.eval --all-samples
    python tools/real_sweep.py swe-agent a.traj b.traj --keep /tmp/sweep

This is how issue 31's "every completed turn of real public files imports, saves and
replays pass on both implementations" is checked on files kept outside the repository
(third-party recordings are read, never committed). Exit status 1 when a file is refused,
a turn does not save, or a result is not ``pass``. ``threads-cases`` is the one on PATH.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["threads-cases", *map(str, args)], capture_output=True, text=True)


def _samples(path: Path) -> list[tuple[str, str]]:
    """(sample id, epoch) of every sample of an inspect-ai log (``.eval`` zip or ``.json``)."""
    if path.suffix == ".eval":
        names = zipfile.ZipFile(path).namelist()
        bases = [n[len("samples/") : -len(".json")] for n in names if n.startswith("samples/")]
        return [tuple(b.rsplit("_epoch_", 1)) for b in bases]  # type: ignore[misc]
    samples = json.loads(path.read_text("utf-8")).get("samples") or []
    return [(str(s["id"]), str(s.get("epoch", 1))) for s in samples]


def sweep_one(fmt: str, path: Path, work: Path, extra: list[str]) -> tuple[str, bool]:
    """One file (or one inspect-ai sample, ``extra`` naming it): its line, and whether every
    turn saved and passed."""
    log = work / "log.jsonl"
    done = _cli("import", fmt, path, *extra, "-o", log)
    if done.returncode != 0:
        first = (done.stderr.strip().splitlines() or ["?"])[0]
        return f"refused: {first[:160]}", False
    warnings = done.stderr.count("warning[")
    turns = json.loads(_cli("turns", log, "--format", "json").stdout)
    ok, verdicts = True, []
    for turn in turns:
        n = turn["index"]
        saved = _cli("save", log, "--turn", n, "--name", f"t{n}", "--dir", work / "cases")
        if saved.returncode != 0:
            ok = False
            verdicts.append(f"t{n}: not saved ({saved.stderr.strip()[:100]})")
            continue
        ran = _cli("run", work / "cases" / f"t{n}", "--format", "json")
        lines = [json.loads(x) for x in ran.stdout.splitlines() if x.strip()]
        got = {r["implementation"]: r["verdict"] for r in lines if r.get("kind") == "result"}
        ok = ok and bool(got) and set(got.values()) == {"pass"}
        verdicts.append(f"t{n} ({turn['status']}): " + " ".join(f"{k}={v}" for k, v in got.items()))
    return f"{len(turns)} turn(s), {warnings} warning(s); " + "; ".join(verdicts), ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("format", help="an import format: vcr, inspect-ai, swe-agent, openhands, ...")
    ap.add_argument("paths", nargs="+", type=Path, help="files, or folders of files")
    ap.add_argument("--all-samples", action="store_true", help="inspect-ai: every sample/epoch")
    ap.add_argument("--keep", type=Path, help="write the logs and cases here (default: a temp dir)")
    args = ap.parse_args()
    files = sorted(
        f for p in args.paths for f in ([p] if p.is_file() else p.rglob("*")) if f.is_file()
    )
    root = args.keep or Path(tempfile.mkdtemp(prefix="real-sweep-"))
    good = total = 0
    for k, path in enumerate(files):
        units = (
            [[]]
            if not args.all_samples
            else [["--sample", s, "--epoch", e] for s, e in _samples(path)]
        )
        for j, extra in enumerate(units):
            work = root / f"{k:03d}-{j:03d}"
            work.mkdir(parents=True, exist_ok=True)
            line, ok = sweep_one(args.format, path, work, extra)
            total += 1
            good += ok
            name = path.name + (f" sample {extra[1]} epoch {extra[3]}" if extra else "")
            print(f"{'ok ' if ok else 'BAD'} {name}: {line}", flush=True)
    print(f"{good} of {total} recording(s) imported, saved and passed on every implementation")
    return 0 if good == total else 1


if __name__ == "__main__":
    sys.exit(main())
