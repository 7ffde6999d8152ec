"""Suite benchmarks of isolation and parallelism (issue 15), run from benchmarks/run.py.

suite     per implementation (threads-py in process, threads-py and threads-ts as drivers
          under the default isolation), --jobs 1: suite wall time / sum of per-case
          replay times (aim <= 1.2)
jobs      per implementation: --jobs 1 wall time / --jobs 2 wall time (aim >= 1.6 on
          2 cores), and for threads-py which of in-process threads and a driver pool is
          faster at --jobs 2
cli       `threads-cases run` of one case / `python -c "import threads_cases"` (aim <= 2)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def _impls(isolation: str) -> dict[str, Any]:
    """label -> a fresh implementation opener."""
    from threads_cases.harness.run.registry import open_implementation

    return {
        "threads-py in process": lambda: open_implementation("threads-py", isolation="guard"),
        f"threads-py driver ({isolation})": lambda: open_implementation(
            "threads-py", isolated=True, isolation=isolation
        ),
        f"threads-ts driver ({isolation})": lambda: open_implementation(
            "threads-ts", isolation=isolation
        ),
    }


def _suite(root: Path, make: Any, jobs: int) -> tuple[float, float, int]:
    """(wall s, sum of per-case s, passes) of one run_suite, after a warm-up request."""
    from threads_cases.harness.run.runner import run_suite

    impl = make()
    impl.hello()  # start-up is paid once per run, not per case
    t = time.perf_counter()
    suite = run_suite([root], [impl], jobs=jobs)
    wall = time.perf_counter() - t
    per_case = sum(r.duration_ms for r in suite.results) / 1000
    return wall, per_case, suite.counts["pass"]


def bench_suite(args: argparse.Namespace, root: Path) -> dict[str, Any]:
    from threads_cases.harness.run.isolation import default_isolation

    out: dict[str, Any] = {"cases": args.cases, "aim": "<= 1.2"}
    for label, make in _impls(default_isolation()).items():
        wall, per_case, passes = _suite(root, make, 1)
        assert passes == args.cases, (label, passes)
        out[label] = {
            "wall_s": round(wall, 3),
            "sum_case_s": round(per_case, 3),
            "ratio": round(wall / per_case, 3),
        }
    return out


def bench_jobs(args: argparse.Namespace, root: Path) -> dict[str, Any]:
    from threads_cases.harness.run.isolation import default_isolation

    out: dict[str, Any] = {"cases": args.cases, "cpus": os.cpu_count(), "aim": ">= 1.6"}
    for label, make in _impls(default_isolation()).items():
        one, _, p1 = _suite(root, make, 1)
        two, _, p2 = _suite(root, make, 2)
        assert p1 == p2 == args.cases, (label, p1, p2)
        out[label] = {
            "jobs1_s": round(one, 3),
            "jobs2_s": round(two, 3),
            "speedup": round(one / two, 2),
        }
    return out


def bench_cli(args: argparse.Namespace, root: Path) -> dict[str, Any]:
    from threads_cases.harness.run.isolation import default_isolation

    case = root / "case-0000"
    # as a user's machine runs it: byte code cached (some CI images set this variable)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

    def timed(cmd: list[str]) -> float:
        t = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, env=env)
        return time.perf_counter() - t

    imp = [sys.executable, "-c", "import threads_cases"]
    out: dict[str, Any] = {"aim": "<= 2"}
    base = statistics.median(timed(imp) for _ in range(7))
    out["import_s"] = round(base, 3)
    for iso in dict.fromkeys(["guard", default_isolation()]):
        cmd = [sys.executable, "-m", "threads_cases", "run", str(case), "--impl", "threads-py"]
        cmd += ["--format", "json", "--isolation", iso, "--jobs", "1"]
        secs = statistics.median(timed(cmd) for _ in range(7))
        out[f"run_one_case_{iso}_s"] = round(secs, 3)
        out[f"ratio_{iso}"] = round(secs / base, 2)
    return out
