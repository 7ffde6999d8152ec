"""Start-up benchmark: how long the command line takes to start, as a ratio to ``python -c pass``.

    python benchmarks/startup_bench.py [--repeat 7]

Measures, each in a fresh subprocess, the best of N wall-clock runs of

* ``python -c pass`` (the baseline, measured in the same run);
* ``threads-cases --version`` (aim: under 0.3 s on the project's 2-core machine: no command
  module is imported for it);
* ``threads-cases --help`` (typer and every command module);
* ``threads-cases run CASE --impl threads-py`` on one shipped conformance case (aim: under
  0.8 s).

Prints seconds and the ratio to the baseline, and writes benchmarks/.work/startup_results.json.
The figures are not asserted anywhere (no timed tests): compare ratios between commits.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORK = HERE / ".work"


def best_of(cmd: list[str], repeat: int, cwd: Path) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, capture_output=True, check=False)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    exe = shutil.which("threads-cases")
    cli = [exe] if exe else [sys.executable, "-m", "threads_cases"]
    cases = ROOT / "spec" / "conformance" / "cases"
    case = next(p for p in sorted(cases.iterdir()) if (p / "case.json").is_file())
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        base = best_of([sys.executable, "-c", "pass"], args.repeat, work)
        rows = {
            "--version": best_of([*cli, "--version"], args.repeat, work),
            "--help": best_of([*cli, "--help"], args.repeat, work),
            "run one case": best_of(
                [*cli, "run", str(case), "--impl", "threads-py", "--jobs", "1"], args.repeat, work
            ),
        }
    print(f"{'python -c pass':<16} {base:6.3f} s   1.0x")
    for name, secs in rows.items():
        print(f"{name:<16} {secs:6.3f} s  {secs / base:4.1f}x")
    WORK.mkdir(exist_ok=True)
    results = {"baseline": base, **{k: {"s": v, "ratio": v / base} for k, v in rows.items()}}
    (WORK / "startup_results.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
