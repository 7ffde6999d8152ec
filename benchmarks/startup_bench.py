"""Start-up benchmark: how long the command line takes to start, as a ratio to ``python -c pass``.

    python benchmarks/startup_bench.py [--repeat 7] [--check] [--imports]

Measures, each in a fresh subprocess, the best of N interleaved rounds (each round runs
every command once, in turn; wall clock, and CPU time of the process and its children: on a
loaded machine the CPU figure is the stable one) of

* ``python -c pass`` (the baseline, measured in the same run);
* ``threads-cases --version`` (aim: under 0.3 s on the project's 2-core machine: no command
  module is imported for it);
* ``threads-cases --help`` (typer and every command module);
* ``threads-cases run CASE --impl threads-py`` on one shipped conformance case, with its
  default isolation (a driver process in a network namespace where one can be made: a
  sealed fork of the harness, protocol/forked_driver.py, or a second interpreter under the
  launcher where a fork cannot be sealed) (aim: under 0.8 s; issue 37: 12x
  ``python -c pass``), and the same with ``--format json`` (no rich loaded);
* the same with ``--isolation guard`` (one interpreter: the harness and the runtime), and
  with ``--jobs 2`` (a forked worker);
* ``run --help``, ``validate CASE``, ``show CASE``, ``fmt --check CASE`` and
  ``implementations``: the start-up of each command users run most.

Bytecode is written and one warm-up run precedes each measurement, as for an installed
package (``PYTHONDONTWRITEBYTECODE`` would make every run compile the package again).
Prints seconds and ratios to the baseline, and writes benchmarks/.work/startup_results.json.
``--check`` exits 1 when a CPU ratio is over its budget (:data:`BUDGETS`, ratios chosen so
that on the 2-core machine they mean the aims above); ``--imports`` adds the slowest
top-level imports of ``run`` (``python -X importtime``), to find what to make lazy.
No test asserts any of this (no timed tests).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORK = HERE / ".work"

#: row -> the most CPU time it may take, as a multiple of ``python -c pass``'s CPU time.
#: Measured on the 2-core machine: ``python -c pass`` takes about 15 ms of CPU, so 20x is
#: 0.3 s and 50x is 0.75 s.
BUDGETS = {"--version": 20.0, "run one case": 50.0}


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("THREADS_CASES_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def best_of(cmd: list[str], repeat: int, cwd: Path) -> tuple[float, float]:
    """(best wall seconds, best CPU seconds) of ``repeat`` runs after one warm-up run."""
    return interleaved({"": cmd}, repeat, cwd)[""]


def interleaved(
    cmds: dict[str, list[str]], repeat: int, cwd: Path
) -> dict[str, tuple[float, float]]:
    """For each command, (best wall seconds, best CPU seconds) over ``repeat`` rounds that run
    every command once, in turn (a busy moment of the shared machine falls on all of them
    alike), after one warm-up round."""
    env = _env()
    for cmd in cmds.values():
        subprocess.run(cmd, cwd=cwd, capture_output=True, check=False, env=env)
    best = {name: (float("inf"), float("inf")) for name in cmds}
    for _ in range(repeat):
        for name, cmd in cmds.items():
            cpu0 = _children_cpu()
            start = time.perf_counter()
            subprocess.run(cmd, cwd=cwd, capture_output=True, check=False, env=env)
            wall, cpu = time.perf_counter() - start, _children_cpu() - cpu0
            best[name] = (min(best[name][0], wall), min(best[name][1], cpu))
    return best


def slowest_imports(cmd: list[str], cwd: Path, top: int = 8) -> list[tuple[float, str]]:
    """The ``top`` slowest top-level imports (cumulative ms) of ``python -X importtime``."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *cmd], cwd=cwd, capture_output=True, text=True,
        env=_env(), check=False,
    )  # fmt: skip
    rows = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        _, cumulative, name = line[len("import time:") :].split("|")
        if not name.startswith("  "):  # depth 0: imported by the program itself
            rows.append((int(cumulative) / 1000, name.strip()))
    return sorted(rows, reverse=True)[:top]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--check", action="store_true", help="exit 1 over a CPU budget")
    parser.add_argument("--imports", action="store_true", help="the slowest imports of run")
    args = parser.parse_args()
    exe = shutil.which("threads-cases")
    cli = [exe] if exe else [sys.executable, "-m", "threads_cases"]
    cases = ROOT / "spec" / "conformance" / "cases"
    case = next(p for p in sorted(cases.iterdir()) if (p / "case.json").is_file())
    run = ["run", str(case), "--impl", "threads-py", "--jobs", "1"]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        measured = interleaved(
            {
                "python -c pass": [sys.executable, "-c", "pass"],
                "--version": [*cli, "--version"],
                "--help": [*cli, "--help"],
                "run --help": [*cli, "run", "--help"],
                "run one case": [*cli, *run],
                "run, json": [*cli, *run, "--format", "json"],
                "run, in process": [*cli, *run, "--isolation", "guard"],
                "run, --jobs 2": [*cli, *run[:-1], "2", "--isolation", "guard"],
                "validate": [*cli, "validate", str(case)],
                "show": [*cli, "show", str(case)],
                "fmt --check": [*cli, "fmt", "--check", str(case)],
                "implementations": [*cli, "implementations"],
            },
            args.repeat,
            work,
        )
        base = measured.pop("python -c pass")
        rows = measured
        imports = slowest_imports(["-m", "threads_cases", *run], work) if args.imports else []
    print(f"{'':<16} {'wall':>8} {'ratio':>6}   {'cpu':>8} {'ratio':>6}")
    print(f"{'python -c pass':<16} {base[0]:7.3f}s {1:5.1f}x   {base[1]:7.3f}s {1:5.1f}x")
    over = []
    for name, (wall, cpu) in rows.items():
        ratio = cpu / base[1] if base[1] else float("inf")
        budget = BUDGETS.get(name)
        note = "" if budget is None else f"  (budget {budget:.0f}x)"
        if budget is not None and ratio > budget:
            over.append(name)
            note += " OVER"
        print(f"{name:<16} {wall:7.3f}s {wall / base[0]:5.1f}x   {cpu:7.3f}s {ratio:5.1f}x{note}")
    for ms, name in imports:
        print(f"  import {name:<40} {ms:7.1f} ms")
    WORK.mkdir(exist_ok=True)
    results = {
        "baseline": {"wall_s": base[0], "cpu_s": base[1]},
        **{
            k: {"wall_s": w, "wall_ratio": w / base[0], "cpu_s": c, "cpu_ratio": c / base[1]}
            for k, (w, c) in rows.items()
        },
    }
    (WORK / "startup_results.json").write_text(json.dumps(results, indent=2) + "\n")
    if args.check and over:
        print(f"over budget: {', '.join(over)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
