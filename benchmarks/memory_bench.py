"""Memory benchmark: canonical writing and checking stay within a small multiple of the file.

    python benchmarks/memory_bench.py [--keys 1000000] [--max-multiple 24]

For each input a case is generated under benchmarks/.work/ whose ``model.json`` holds one
large object (issue 19 section 2, issue 20 "the pretty and canonical writers stream"):

* ``keys``    a million integer-valued keys (about 12 MB): the orjson path of the writer;
* ``floats``  a million float-valued keys (about 19 MB): the streaming writer (floats are
  written by the JCS number rules, so orjson cannot write the document in one piece).

Each command (``fmt --check``, ``validate``, ``show --values``) runs in a fresh
subprocess; its peak RSS comes from ``wait4`` (the child's ``ru_maxrss``). The figure is

    (peak RSS - peak RSS of `python -c "import threads_cases.cli.app"`) / size of model.json

and the script exits 1 when any figure is above ``--max-multiple`` (24), so `nox -s bench`
fails when a writer goes back to keeping one encoded piece per value (that used 4.4 GB, a
multiple of about 370, on the 12 MB file). The multiple is dominated by the parsed value
itself: a Python dict entry of a short key costs about 100 bytes against 12 in the file.
The CPU seconds are printed for reference. Results go to benchmarks/.work/memory_results.json.

When ts/ is built, benchmarks/memory_ts.mjs measures the TypeScript writers (``canonicalDocument``
and ``canonicalLine``) on the same million float keys: peak RSS during the write over the
output's size, limit ``--max-ts-multiple`` (8; 3.2 and 4.4 measured on 2026-12-01, against 7.7
and 13.3 when the writer kept one string per value).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORK = HERE / ".work"
CASE = ROOT / "spec" / "conformance" / "cases" / "reads-notes"


def make_case(kind: str, keys: int) -> Path:
    dest = WORK / f"memory-{kind}-{keys}"
    if (dest / "model.json").is_file():
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(CASE, dest)
    model = json.loads((dest / "model.json").read_bytes())
    value = (lambda i: i + 0.5) if kind == "floats" else (lambda i: i)
    model["replies"][0]["message"]["content"][0]["input"] = {f"k{i}": value(i) for i in range(keys)}
    (dest / "model.json").write_text(json.dumps(model, separators=(",", ":")), "utf-8")
    return dest


def peak(cmd: list[str]) -> tuple[float, float]:
    """(peak RSS in MiB, CPU seconds) of a child process, from wait4."""
    env = {k: v for k, v in os.environ.items() if k != "THREADS_CASES_DEBUG"}
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=WORK, env=env
    )
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 1):  # 1: "not canonical" is the answer
        raise SystemExit(f"{cmd} failed with status {status}")
    return usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


COMMANDS = {
    "fmt --check": ["fmt", "--check"],
    "validate": ["validate"],
    "show --values": ["show", "--values"],
}


def ts_writers(keys: int) -> list[dict[str, Any]]:
    """The TypeScript writers' figures (benchmarks/memory_ts.mjs), or none without a build."""
    node = shutil.which("node")
    if node is None or not (ROOT / "ts" / "dist" / "src" / "core" / "canonical.js").is_file():
        print("(TypeScript writers skipped: build ts/ first)")
        return []
    rows = []
    for writer in ("canonicalDocument", "canonicalLine"):
        out = subprocess.run(
            [node, "--expose-gc", str(HERE / "memory_ts.mjs"), writer, str(keys)],
            capture_output=True,
            text=True,
            check=True,
        )
        rows.append(json.loads(out.stdout))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keys", type=int, default=1_000_000)
    ap.add_argument("--max-multiple", type=float, default=24.0)
    ap.add_argument("--max-ts-multiple", type=float, default=8.0)
    args = ap.parse_args(argv)
    WORK.mkdir(exist_ok=True)
    base, _ = peak([sys.executable, "-c", "import threads_cases.cli.app"])
    print(f"baseline (import the CLI): {base:.0f} MiB")
    results: list[dict[str, Any]] = []
    worst = 0.0
    for kind in ("keys", "floats"):
        case = make_case(kind, args.keys)
        size = (case / "model.json").stat().st_size / 2**20
        for name, cmd in COMMANDS.items():
            rss, cpu = peak([sys.executable, "-m", "threads_cases", *cmd, str(case)])
            multiple = (rss - base) / size
            worst = max(worst, multiple)
            flag = "" if multiple <= args.max_multiple else "  <- over the limit"
            print(
                f"{kind:7} {size:5.1f} MiB  {name:20} peak {rss:6.0f} MiB  "
                f"{multiple:5.1f}x the file  cpu {cpu:5.2f} s{flag}"
            )
            results.append(
                {
                    "input": kind,
                    "file_mib": round(size, 1),
                    "command": name,
                    "peak_mib": round(rss),
                    "multiple": round(multiple, 1),
                    "cpu_s": round(cpu, 2),
                }
            )
    ts_worst = 0.0
    for r in ts_writers(args.keys):
        ts_worst = max(ts_worst, r["multiple"])
        flag = "" if r["multiple"] <= args.max_ts_multiple else "  <- over the limit"
        print(
            f"ts      {r['output_mib']:5.1f} MiB  {r['writer']:20} peak {r['peak_mib']:6.0f} MiB  "
            f"{r['multiple']:5.1f}x the output  cpu {r['cpu_s']:5.2f} s{flag}"
        )
        results.append({"input": "ts-floats", **r})
    (WORK / "memory_results.json").write_text(json.dumps(results, indent=2), "utf-8")
    if worst > args.max_multiple:
        print(f"FAIL: peak memory {worst:.1f}x the file, over {args.max_multiple}x")
        return 1
    if ts_worst > args.max_ts_multiple:
        print(f"FAIL: a TypeScript writer peaked at {ts_worst:.1f}x its output")
        return 1
    print(f"ok: every command within {args.max_multiple}x the file (worst {worst:.1f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
