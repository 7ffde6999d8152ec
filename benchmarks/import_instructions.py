"""An importer and the orjson parse of the same file, in instructions (callgrind), which the
load of a shared machine does not move (issues 31 and 37: each importer at most 4x its parse).

    python benchmarks/import_instructions.py [--only claude-code openhands] [--mb 4]
    python benchmarks/import_instructions.py --tree /tmp/old --tree .   # two trees, in turns

Generates under benchmarks/.work/instructions/ the files of benchmarks/importers_bench.py's
generators at ``--mb`` MB (Claude Code: benchmarks/claude_gen.py; OpenHands:
benchmarks/eval_traj_bench.py's trajectory) and a tiny one of each. Runs
``valgrind --tool=callgrind`` (``PYTHONHASHSEED=0``, bytecode written) on three processes that
each import the package and import the tiny file (so the imports, the schema documents and
the validators compiled on first use are paid in all three), then: do nothing more, parse the
file with orjson (every line for JSON Lines, the whole file else: importers_bench.py's
baseline), or ``import_to_file`` it. The figure is (import - nothing) / (parse - nothing).
``--tree`` (repeatable) puts a source tree first on ``PYTHONPATH`` for its runs, so an older
tree (``git archive main | tar -x -C /tmp/old``) is counted beside this one. Needs valgrind.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORK = HERE / ".work" / "instructions"
sys.path.insert(0, str(HERE))

SCRIPT = """
import sys, orjson
import threads_cases.importers as imp
mode, fmt, tiny, src, out, base = sys.argv[1:7]
imp.import_to_file(fmt, tiny, out)
if mode == "parse":
    with open(src, "rb") as fh:
        data = fh.read()
    if base == "lines":
        for line in data.splitlines():
            orjson.loads(line)
    else:
        orjson.loads(data)
elif mode == "import":
    imp.import_to_file(fmt, src, out)
"""

#: format -> (baseline, writer of a file of about ``mb`` MB)
FORMATS = ("claude-code", "openhands")


def make(fmt: str, path: Path, mb: float) -> str:
    """Write a file of ``fmt`` of about ``mb`` MB to ``path``; its baseline."""
    if fmt == "claude-code":
        from claude_gen import generate

        generate(path, mb)
        return "lines"
    from eval_traj_bench import write_openhands

    write_openhands(path, max(2, int(mb * 190)))
    return "json"


def tree_env(tree: Path) -> dict[str, str]:
    """The environment of a run of ``tree``: bytecode written, hash seed 0, the tree first."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONHASHSEED"] = "0"
    env["PYTHONPATH"] = os.pathsep.join([str(tree), env.get("PYTHONPATH", "")])
    return env


def warm(tree: Path, fmt: str, tiny: Path) -> None:
    """One run outside valgrind, so that every module's bytecode is written before counting."""
    with tempfile.TemporaryDirectory() as tmp:
        args = ["nothing", fmt, str(tiny), str(tiny), f"{tmp}/out.jsonl", "json"]
        subprocess.run([sys.executable, "-c", SCRIPT, *args], env=tree_env(tree), check=True)


def instructions(tree: Path, mode: str, fmt: str, tiny: Path, src: Path, base: str) -> int:
    env = tree_env(tree)
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={tmp}/cg",
                sys.executable,
                "-c",
                SCRIPT,
                mode,
                fmt,
                str(tiny),
                str(src),
                f"{tmp}/out.jsonl",
                base,
            ],
            capture_output=True,
            text=True,
            check=True,
            env=env,
            cwd=tmp,
        )
    m = re.search(r"Collected : (\d+)", out.stderr)
    if m is None:
        raise SystemExit(f"no instruction count in valgrind's output:\n{out.stderr[-2000:]}")
    return int(m.group(1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", default=list(FORMATS), choices=FORMATS)
    ap.add_argument("--mb", type=float, default=4.0, help="size of each file (MB)")
    ap.add_argument("--tree", action="append", default=[], help="a source tree (repeatable)")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: skipped")
        return 0
    WORK.mkdir(parents=True, exist_ok=True)
    trees = [Path(t).resolve() for t in args.tree] or [ROOT]
    for fmt in args.only:
        ext = "jsonl" if fmt == "claude-code" else "json"
        src, tiny = WORK / f"{fmt}.{ext}", WORK / f"{fmt}-tiny.{ext}"
        base = make(fmt, src, args.mb)
        make(fmt, tiny, 0.01)
        for tree in trees:
            warm(tree, fmt, tiny)
            n = {m: instructions(tree, m, fmt, tiny, src, base) for m in ("nothing", "parse")}
            n["import"] = instructions(tree, "import", fmt, tiny, src, base)
            parse, imp = n["parse"] - n["nothing"], n["import"] - n["nothing"]
            print(
                f"{fmt:>12} {src.stat().st_size / 1e6:.1f} MB, {tree}: import {imp / 1e6:.1f} M"
                f" / parse {parse / 1e6:.1f} M = {imp / parse:.2f}x"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
