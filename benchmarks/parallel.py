"""Suite benchmarks of isolation and parallelism (issue 15), run from benchmarks/run.py.

suite     per implementation (threads-py in process, threads-py and threads-ts as drivers
          under the default isolation), --jobs 1: suite wall time / sum of per-case
          replay times (aim <= 1.2)
jobs      per implementation (threads-py in process and as a driver, threads-ts): `threads-cases
          run` --jobs 1 wall time / --jobs 2 wall time, interleaved rounds, CPU beside
          (aim >= 1.7 on 2 cores)
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


#: the implementations ``jobs`` measures: label -> the ``run`` options that pick it
JOBS_RUNS = {
    "threads-py in process": ["--impl", "threads-py", "--isolation", "guard"],
    "threads-py driver": ["--impl", "threads-py"],  # the default isolation: a driver
    "threads-ts driver": ["--impl", "threads-ts"],
}


#: runs the CLI in this process, then prints the CPU seconds of the process itself and of its
#: children (forked workers, drivers) to the file descriptor ``$TIMES_FD``
_TIMED_CLI = """
import os, resource, sys
from threads_cases.cli import main
try:
    main()
finally:
    me, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    times = f"{me.ru_utime + me.ru_stime} {kids.ru_utime + kids.ru_stime}"
    os.write(int(os.environ["TIMES_FD"]), times.encode())
"""


def _cli_run(root: Path, options: list[str], jobs: int) -> dict[str, float]:
    """``threads-cases run ROOT ... --jobs N`` in a fresh process: its wall time, the CPU of
    the harness process itself (``parent``) and of its children (forked workers and their
    drivers: ``children``)."""
    cmd = [sys.executable, "-c", _TIMED_CLI, "run", str(root), *options]
    cmd += ["--jobs", str(jobs), "--format", "json"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    read, write = os.pipe()
    env["TIMES_FD"] = str(write)
    t = time.perf_counter()
    proc = subprocess.run(
        cmd, capture_output=True, env=env, check=False, cwd=root.parent, pass_fds=(write,)
    )
    wall = time.perf_counter() - t
    os.close(write)
    with os.fdopen(read) as fh:
        parent, children = map(float, fh.read().split())
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    return {"wall": wall, "parent": parent, "children": children}


def bench_jobs(args: argparse.Namespace, root: Path) -> dict[str, Any]:
    """Per implementation: ``--jobs 1`` wall time / ``--jobs 2`` wall time of the CLI on the
    same cases, the median of ``args.rounds`` rounds in which the two runs alternate (a busy
    moment of the shared machine falls on both alike). Beside it, from CPU time, the
    speed-up two otherwise idle cores give (``cpu_speedup``): the CPU of the ``--jobs 1``
    run over the harness process's own CPU plus half its children's (the two workers share
    the cases out one at a time, so they finish together; a worker and its driver take
    turns). On a machine shared with others, with the kernel's autogroup scheduling (one
    share of CPU per session: this VM has it), the wall-time figure measures the load."""
    out: dict[str, Any] = {"cases": args.cases, "cpus": os.cpu_count(), "aim": ">= 1.7"}
    for label, options in JOBS_RUNS.items():
        _cli_run(root, options, 2)  # warm-up: byte code, page cache
        rounds = []
        for _ in range(args.rounds):
            one, two = _cli_run(root, options, 1), _cli_run(root, options, 2)
            cpu1 = one["parent"] + one["children"]
            rounds.append(
                {
                    "jobs1": {k: round(v, 2) for k, v in one.items()},
                    "jobs2": {k: round(v, 2) for k, v in two.items()},
                    "speedup": round(one["wall"] / two["wall"], 2),
                    "cpu_speedup": round(cpu1 / (two["parent"] + two["children"] / 2), 2),
                    "load": round(os.getloadavg()[0], 1),
                }
            )
        out[label] = {
            "speedup": statistics.median(r["speedup"] for r in rounds),
            "cpu_speedup": statistics.median(r["cpu_speedup"] for r in rounds),
            "rounds": rounds,
        }
        print(f"  {label}: {out[label]}", flush=True)
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
