"""threads-cases benchmarks. Every figure is reported next to a baseline measured in the same
run, as a ratio, so the numbers travel between machines.

    python benchmarks/run.py [--only NAME ...] [--big-mb 256] [--cases 1000]

Benchmarks:
  reduce    100,000-event log: `reduce_log` vs a plain orjson loop over the same file, medians
            of 7 interleaved rounds (aim <= 4x); benchmarks/reduce_instructions.py counts both
            in instructions (callgrind)
  memory    peak RSS of `threads-cases reduce` on generated logs of --big-mb / 4 and --big-mb
            MiB, beside the peak RSS of the same interpreter importing the package; the
            growth between the two sizes gives the peak at 1 GiB (aim < 256 MiB there);
            --big-mb 1024 measures it (about 3.4 M events, 1.5-2 min of CPU)
  memory-thread  peak RSS of `threads-cases reduce` on a --big-mb MiB log of one long thread
            (every message kept) / the size of the state it prints (aim: 1.5x + 100 MiB)
  runner    --cases generated small cases run in process: case runs per second, and suite
            wall time / sum of per-case replay times (aim <= 1.2)
  driver    median per-request overhead of the subprocess driver over the in-process call,
            for a small replay (aim <= 1 ms)
  ts        TypeScript / Python time to reduce the 100,000-event log, both through their driver
  ts-reduce threads-ts's reduceLog / a JSON.parse loop over the same log, medians of 7
            interleaved rounds (aim <= 4x)
  suite, jobs, cli   isolation and parallelism (benchmarks/parallel.py)

Inputs are generated under benchmarks/.work/ (ignored by git). Results are printed and
written to benchmarks/.work/results.json.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
WORK = HERE / ".work"

import parallel  # noqa: E402
from gen import write_log  # noqa: E402


def best_of(n: int, fn: Any) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def log_100k() -> Path:
    p = WORK / "log-100k.jsonl"
    if not p.exists():
        write_log(p, target_events=100_000)
    return p


def bench_reduce(_: argparse.Namespace) -> dict[str, Any]:
    """`reduce_log` against a plain orjson loop over the same file (``for line in fh:
    orjson.loads(line)``), 7 interleaved rounds, medians (the machine is shared: a round of
    each back to back sees the same load)."""
    from threads_cases.core.log import reduce_log

    p = log_100k()
    reduce_log(p)  # warm: the validators compiled, the files cached

    def baseline() -> None:
        with open(p, "rb") as fh:
            for line in fh:
                orjson.loads(line)

    base, ours, base_cpu, ours_cpu = [], [], [], []
    for _ in range(7):
        c = time.process_time()
        base.append(best_of(1, baseline))
        base_cpu.append(time.process_time() - c)
        c = time.process_time()
        ours.append(best_of(1, lambda: reduce_log(p)))
        ours_cpu.append(time.process_time() - c)
    mb, mo = statistics.median(base), statistics.median(ours)
    cli = best_of(
        1,
        lambda: subprocess.run(
            [sys.executable, "-m", "threads_cases", "reduce", str(p)],
            check=True,
            stdout=subprocess.DEVNULL,
        ),
    )
    return {
        "events": 100_002,
        "orjson_loop_s": round(mb, 3),
        "reduce_s": round(mo, 3),
        "cli_reduce_s": round(cli, 3),
        "ratio": round(mo / mb, 2),
        "ratio_of_bests": round(min(ours) / min(base), 2),
        # CPU time (this process's), which a shared machine's load moves less than wall time
        "cpu_ratio": round(statistics.median(ours_cpu) / statistics.median(base_cpu), 2),
        "aim": "<= 4",
    }


def _peak_rss_mib(cmd: list[str]) -> float:
    return _rusage(cmd).ru_maxrss / 1024


def _rusage(cmd: list[str]) -> Any:
    """The resource usage of ``cmd`` (peak RSS, CPU seconds), which must succeed."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise SystemExit(f"{cmd} failed with status {status}")
    return usage


def _big_log(mib: int) -> Path:
    p = WORK / f"log-{mib}mb.jsonl"
    if not p.exists():
        t = time.perf_counter()
        n, size = write_log(p, target_bytes=mib * 1024 * 1024)
        print(f"  generated {size / 2**20:.0f} MiB, {n} events in {time.perf_counter() - t:.0f}s")
    return p


def bench_memory(args: argparse.Namespace) -> dict[str, Any]:
    """Peak RSS of `threads-cases reduce` on a log of --big-mb / 4 and one of --big-mb MiB.

    The reducer's memory tracks the state, not the log (the generated logs restore an early
    snapshot every 50 turns); what grows with the log is the reader's table of event-id
    hashes (8 bytes a slot, at most half full, doubled when it fills), so the peak grows by
    about 20-30 bytes per event. The figure is the peak at each size and that growth per MiB
    of log, carried to 1 GiB. Cost: about 12 us of CPU per event idle (3,300 events per MiB;
    twice that under load), so the default 256 MiB costs 15-30 s of CPU for both sizes, where
    1 GiB alone cost 1.5-2 min (13 minutes of wall time at load 15 on 2 cores)."""
    small, big = _big_log(max(1, args.big_mb // 4)), _big_log(args.big_mb)
    base = _peak_rss_mib([sys.executable, "-c", "import threads_cases.cli"])
    peak_small = _peak_rss_mib([sys.executable, "-m", "threads_cases", "reduce", str(small)])
    usage = _rusage([sys.executable, "-m", "threads_cases", "reduce", str(big)])
    peak, cpu = usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime
    big_mib, small_mib = big.stat().st_size / 2**20, small.stat().st_size / 2**20
    slope = (peak - peak_small) / (big_mib - small_mib) if big_mib > small_mib else 0.0
    return {
        "log_mib": round(big_mib),
        "peak_rss_mib": round(peak, 1),
        "smaller_log_mib": round(small_mib),
        "smaller_peak_rss_mib": round(peak_small, 1),
        "rss_mib_per_log_mib": round(slope, 3),
        "peak_at_1gib_mib": round(peak + slope * (1024 - big_mib), 1),
        "import_only_rss_mib": round(base, 1),
        "ratio_to_import": round(peak / base, 2),
        "cpu_seconds": round(cpu, 1),
        "mib_per_cpu_s": round(big_mib / cpu, 1),
        "aim": "< 256 MiB at 1 GiB",
    }


def bench_memory_thread(args: argparse.Namespace) -> dict[str, Any]:
    """Peak RSS of `threads-cases reduce` on a log of one long thread (no restore: the state
    keeps every message), against the size of the state it prints: the aim is a peak of at
    most 1.5x that size plus 100 MiB (issue 37). The log is --big-mb MiB."""
    p = WORK / f"log-thread-{args.big_mb}mb.jsonl"
    if not p.exists():
        write_log(p, target_bytes=args.big_mb * 2**20, restore_every=10**12)
    out = WORK / "state-thread.json"
    with open(out, "wb") as fh:
        proc = subprocess.Popen(
            [sys.executable, "-m", "threads_cases", "reduce", str(p)], stdout=fh
        )
        _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise SystemExit(f"reduce of {p} failed with status {status}")
    peak, state = usage.ru_maxrss / 1024, out.stat().st_size / 2**20
    return {
        "log_mib": round(p.stat().st_size / 2**20),
        "state_mib": round(state, 1),
        "peak_rss_mib": round(peak),
        "peak_over_state": round(peak / state, 2),
        "aim_mib": round(1.5 * state + 100),
        "within_aim": peak <= 1.5 * state + 100,
        "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 1),
    }


def make_cases(n: int) -> Path:
    from threads_cases import AgentSpec, CaseExpectation, FakeSandbox, ScriptedModel, Thread
    from threads_cases.reference.model import text_reply, tool_reply
    from threads_cases.reference.runtime import Clock

    root = WORK / f"cases-{n}"
    if root.exists() and len(list(root.iterdir())) == n:
        return root
    shutil.rmtree(root, ignore_errors=True)
    for i in range(n):
        t = Thread.create(
            agent=AgentSpec("bench", "m"),
            sandbox=FakeSandbox({"f.txt": f"v{i}"}),
            thread_id=f"bench-{i}",
            clock=Clock(1_795_982_400_000),
        )
        at = t.events[-1]["event_id"]
        t.run_turn(
            f"read f.txt ({i})",
            ScriptedModel(
                [tool_reply(("tu_1", "read_file", {"path": "f.txt"})), text_reply(f"v{i}")]
            ),
        )
        r = t.save_case(
            f"case-{i:04d}",
            at=at,
            dir=root,
            expect=CaseExpectation(must=[{"type": "turn_completed"}]),
        )
        assert r.ok, r.error
    return root


def bench_runner(args: argparse.Namespace) -> dict[str, Any]:
    from threads_cases.harness.run.runner import run_suite

    root = make_cases(args.cases)
    t = time.perf_counter()
    suite = run_suite([root], ["threads-py"], jobs=1)
    wall = time.perf_counter() - t
    per_case = sum(r.duration_ms for r in suite.results) / 1000
    assert suite.counts["pass"] == args.cases, suite.counts
    return {
        "cases": args.cases,
        "wall_s": round(wall, 3),
        "sum_case_s": round(per_case, 3),
        "case_runs_per_s": round(args.cases / wall, 1),
        "ratio": round(wall / per_case, 3),
        "aim": "<= 1.2",
    }


def bench_driver(args: argparse.Namespace) -> dict[str, Any]:
    from threads_cases.protocol.client import DriverImplementation
    from threads_cases.protocol.server import PythonImplementation

    case = make_cases(args.cases) / "case-0000"
    msg = {"cmd": "replay", "case": {"path": str(case)}}
    inproc = PythonImplementation()
    drv = DriverImplementation(
        "threads-py", [sys.executable, "-m", "threads_cases.protocol.driver"], dialect="threads-py"
    )
    drv.request(msg)  # start-up is paid once per run
    a, b = [], []
    for _ in range(200):
        t = time.perf_counter()
        inproc.request(msg)
        a.append(time.perf_counter() - t)
        t = time.perf_counter()
        drv.request(msg)
        b.append(time.perf_counter() - t)
    drv.close()
    ma, mb = statistics.median(a) * 1000, statistics.median(b) * 1000
    return {
        "in_process_ms": round(ma, 3),
        "driver_ms": round(mb, 3),
        "overhead_ms": round(mb - ma, 3),
        "ratio": round(mb / ma, 2),
        "aim": "<= 1 ms",
    }


def bench_ts(_: argparse.Namespace) -> dict[str, Any]:
    from threads_cases.harness.run.registry import ts_driver_path
    from threads_cases.protocol.client import DriverImplementation

    node = shutil.which("node")
    if node is None or not ts_driver_path().is_file():
        return {"skipped": "the TypeScript driver is not built (nox -s ts)"}
    p = str(log_100k())
    py = DriverImplementation(
        "threads-py",
        [sys.executable, "-m", "threads_cases.protocol.driver"],
        dialect="threads-py",
        timeout=600,
    )
    ts = DriverImplementation(
        "threads-ts", [node, str(ts_driver_path())], dialect="threads-ts", timeout=600
    )
    try:
        py.hello()
        ts.hello()
        tp = best_of(3, lambda: py.request({"cmd": "reduce", "path": p, "dialect": "threads-py"}))
        tt = best_of(3, lambda: ts.request({"cmd": "reduce", "path": p, "dialect": "threads-py"}))
    finally:
        py.close()
        ts.close()
    return {"python_s": round(tp, 3), "typescript_s": round(tt, 3), "ts_over_py": round(tt / tp, 2)}


def bench_ts_reduce(_: argparse.Namespace) -> dict[str, Any]:
    """threads-ts's `reduceLog` / a JSON.parse loop over the 100,000-event log, medians of 7
    interleaved rounds (benchmarks/reduce_ts.mjs)."""
    node = shutil.which("node")
    if node is None or not (HERE.parent / "ts" / "dist" / "src" / "core" / "log.js").is_file():
        return {"skipped": "the TypeScript implementation is not built (nox -s ts)"}
    out = subprocess.run(
        [node, str(HERE / "reduce_ts.mjs"), str(log_100k())],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = orjson.loads(out.stdout)
    return result


BENCHES = {
    "reduce": bench_reduce,
    "memory": bench_memory,
    "memory-thread": bench_memory_thread,
    "runner": bench_runner,
    "driver": bench_driver,
    "ts": bench_ts,
    "ts-reduce": bench_ts_reduce,
    "suite": lambda a: parallel.bench_suite(a, make_cases(a.cases)),
    "jobs": lambda a: parallel.bench_jobs(a, make_cases(a.cases)),
    "cli": lambda a: parallel.bench_cli(a, make_cases(a.cases)),
}


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--only", nargs="*", choices=sorted(BENCHES), help="run only these")
    ap.add_argument(
        "--big-mb",
        type=int,
        default=256,
        help="size of the memory benchmark's larger log in MiB (it also reduces one a quarter"
        " that size); 1024 for the 1 GiB figure",
    )
    ap.add_argument("--cases", type=int, default=1000, help="cases for the runner benchmark")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds of `jobs`")
    args = ap.parse_args()
    WORK.mkdir(exist_ok=True)
    results = {}
    for name in args.only or list(BENCHES):
        print(f"[{name}] ...", flush=True)
        results[name] = BENCHES[name](args)
        print(f"[{name}] {orjson.dumps(results[name]).decode()}", flush=True)
    (WORK / "results.json").write_bytes(orjson.dumps(results, option=orjson.OPT_INDENT_2))
    print(f"written to {WORK / 'results.json'}")


if __name__ == "__main__":
    main()
