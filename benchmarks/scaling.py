"""Scaling benchmark: does each cost grow in proportion to its input?

    python benchmarks/scaling.py [--scale F] [--max-ratio 1.3] [--only NAME ...]

Each curve runs one workload at 1x, 4x and 16x of its size and reports the cost per unit at
each size as a ratio to the cost per unit at 1x. A linear cost gives ratios near 1.0; a
quadratic one gives about 4 and 16. The script exits 1 when the 16x ratio of any curve is
above --max-ratio (default 1.3), so `nox -s bench` fails on a superlinear curve. A curve over
the limit is measured again on its own, up to --retries times (default 2), and its best
attempt counts (every attempt is printed): on this shared virtual machine one run of a
linear curve measured 1.49 while the host was busy, 0.57 an hour before.

Curves (issues 19 and 20; spec/reducer.md 6.5, spec/replay.md 3.2):
  record     turns recorded through the Thread API (a tool call and a reply each), per turn
  snapshot   one snapshot per turn on a growing thread (Thread API), per turn
  reduce     a log of short turns with no snapshot, per event (the turn-id check)
  snapshots  a log with a snapshot after every event, per event (the snapshot-id check)
  reply      one turn whose tool results grow with the size, per byte of the request
  events     reading ``Thread.events[-1]`` once per turn while recording, per turn
  fork       forking a thread of n turns at its last event 10n times, per turn: a fork shares
             the log, ids and state, so its cost must not grow with the thread (the first
             change on either side then copies the shared lists' pointers, not measured here)
  suite      run_suite of n cases (copies of spec/conformance/cases) on in-process threads-py,
             per case: the case loader's checks are the only schema checks of a run
  import     importing a realistic Claude Code transcript of 2 / 8 / 32 MB (claude_gen.py)
             through the library API, per MB; printed beside plain orjson parsing of the
             same files (the baseline of the same run)
  ts-reduce, ts-snapshots, ts-record, ts-snapshot, ts-events, ts-reply, ts-fork
             the same curves in TypeScript (scaling_ts.mjs, node's CPU time), when ts/ is built;
             see that file for how its samples are taken

After the curves, the jobs check runs `threads-cases run --impl threads-py` (its default
isolation) on the 1x, 4x and 16x suites with the default --jobs and with --jobs 1, and
reports CPU seconds (this process's children: the CLI and its drivers) default / --jobs 1;
it exits 1 when a ratio is above --max-jobs-ratio (default 1.15: two identical commands,
best of three each, measured 0.89-1.12 on the loaded 2-core machine; the old default of
one driver per CPU measured 1.36 on 27 cases).

Every figure is a ratio between runs of the same process, so it travels between machines;
the CPU seconds are printed for reference. Times are the best of three runs (two at 16x);
record, snapshot, events, snapshots and reduce take samples of equal work instead (see
EQUAL_WORK).
"""

from __future__ import annotations

import argparse
import atexit
import gc
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from threads_cases import AgentSpec, FakeSandbox, ScriptedModel, Thread
from threads_cases.core.reducer import Reducer
from threads_cases.reference.agent import BUILTIN_TOOLS
from threads_cases.reference.model import text_reply, tool_reply

AGENT = AgentSpec("bench", "model-x", "Be brief.", tools=tuple(BUILTIN_TOOLS.values()))


def best_of(n: int, fn: Callable[[], Any]) -> float:
    best = float("inf")
    for _ in range(n):
        gc.collect()
        t = time.process_time()  # CPU time of this process: steadier on a busy machine
        fn()
        best = min(best, time.process_time() - t)
    return best


def _turn(thread: Thread, i: int) -> None:
    thread.run_turn(
        f"question {i}",
        ScriptedModel(
            [
                tool_reply((f"tu_{i}", "read_file", {"path": "notes.txt"})),
                text_reply(f"answer {i}"),
            ]
        ),
    )


def record(n: int) -> Callable[[], Any]:
    def run() -> None:
        thread = Thread.create(
            agent=AGENT, sandbox=FakeSandbox({"notes.txt": "buy milk"}), thread_id="t"
        )
        for i in range(n):
            _turn(thread, i)

    return run


def snapshot(n: int) -> Callable[[], Any]:
    def run() -> None:
        thread = Thread.create(
            agent=AGENT, sandbox=FakeSandbox({"notes.txt": "buy milk"}), thread_id="t"
        )
        for i in range(n):
            _turn(thread, i)
            thread.snapshot()

    return run


def events(n: int) -> Callable[[], Any]:
    def run() -> None:
        thread = Thread.create(
            agent=AGENT, sandbox=FakeSandbox({"notes.txt": "buy milk"}), thread_id="t"
        )
        for i in range(n):
            _turn(thread, i)
            assert thread.events[-1]["type"] == "turn_completed"

    return run


def fork(n: int) -> Callable[[], Any]:
    thread = Thread.create(
        agent=AGENT, sandbox=FakeSandbox({"notes.txt": "buy milk"}), thread_id="t"
    )
    for i in range(n):
        _turn(thread, i)
    head = thread.events[-1]["event_id"]

    def run() -> None:
        for i in range(10 * n):  # ten forks per turn: a run long enough to time
            thread.fork(head, branch_id=f"b{i}")

    return run


def _envelope(seq: int, etype: str, data: dict[str, Any], epoch: int = 0) -> dict[str, Any]:
    return {
        "event_id": f"e{seq}",
        "thread_id": "t",
        "seq": seq,
        "type": etype,
        "actor_kind": "user" if etype == "user_message" else "system",
        "epoch": epoch,
        "branch_id": "main",
        "critical": False,
        "ts": "2026-11-30T00:00:00.000Z",
        "data": data,
    }


def _short_turns(n_turns: int) -> list[dict[str, Any]]:
    agent = {"name": "b", "model": "m", "system": "s", "tools": []}
    evs = [_envelope(0, "thread_started", {"agent": agent, "metadata": {}})]
    for t in range(n_turns):
        tid = f"turn-{t}"
        evs.append(_envelope(len(evs), "user_message", {"content": "hi"}))
        evs.append(_envelope(len(evs), "turn_started", {"turn_id": tid}))
        usage = {"input_tokens": 1, "output_tokens": 1}
        evs.append(
            _envelope(
                len(evs),
                "turn_completed",
                {"turn_id": tid, "stop_reason": "end_turn", "usage": usage},
            )
        )
    return evs


def reduce(n: int) -> Callable[[], Any]:
    evs = _short_turns(n)

    def run() -> None:
        r = Reducer(copy_data=False)
        for ev in evs:
            r.apply(ev)

    return run


def snapshots(n: int) -> Callable[[], Any]:
    evs = _short_turns(1)
    for i in range(n):
        evs.append(_envelope(len(evs), "snapshot_taken", {"snapshot_id": f"s{i}"}))

    def run() -> None:
        r = Reducer(copy_data=False)
        for ev in evs:
            r.apply(ev)

    return run


def reply(n: int) -> Callable[[], Any]:
    """One turn of 60 model calls whose tool results together grow with ``n``: the request
    hash must not re-encode the whole conversation on every call."""
    calls = 60
    text = "x" * (n * 1000 // calls)

    def run() -> None:
        thread = Thread.create(agent=AGENT, sandbox=FakeSandbox({"big.txt": text}), thread_id="t")
        replies = [tool_reply((f"tu_{i}", "read_file", {"path": "big.txt"})) for i in range(calls)]
        thread.run_turn("read it all", ScriptedModel([*replies, text_reply("done")]))

    return run


CONFORMANCE = Path(__file__).resolve().parent.parent / "spec" / "conformance" / "cases"
_SUITES: dict[int, Path] = {}


def suite_dir(n: int) -> Path:
    """A folder of ``n`` cases: the conformance cases, copied round and round."""
    if n not in _SUITES:
        root = Path(tempfile.mkdtemp(prefix=f"suite-{n}-"))
        atexit.register(shutil.rmtree, root, True)
        cases = sorted(p for p in CONFORMANCE.iterdir() if (p / "case.json").is_file())
        for i in range(n):
            shutil.copytree(cases[i % len(cases)], root / f"{i:05d}-{cases[i % len(cases)].name}")
        _SUITES[n] = root
    return _SUITES[n]


def suite(n: int) -> Callable[[], Any]:
    from threads_cases.harness.run.runner import run_suite

    root = suite_dir(n)

    def run() -> None:
        result = run_suite([root], ["threads-py"], jobs=1)
        assert result.counts["pass"] == n, result.counts

    return run


def children_cpu(argv: list[str]) -> float:
    """CPU seconds of a command and every process it waited for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def jobs_default(scale: float) -> list[dict[str, Any]]:
    """Default --jobs against --jobs 1 on the suite curve's sizes (after a warm-up run, best
    of five each, the two settings alternating)."""
    from threads_cases.harness.run.pool import CASES_PER_JOB, default_jobs
    from threads_cases.protocol.client import DriverImplementation

    base = max(1, int(CURVES["suite"][1] * scale))
    rows = []
    for n in (base, 4 * base, 16 * base):
        cmd = ["threads-cases", "run", str(suite_dir(n)), "--impl", "threads-py"]
        cmd += ["--format", "json"]
        children_cpu([*cmd, "--jobs", "1"])  # warm-up: the files and the driver's imports
        default, one = float("inf"), float("inf")
        for _ in range(5):
            default = min(default, children_cpu(cmd))
            one = min(one, children_cpu([*cmd, "--jobs", "1"]))
        picked = default_jobs(n, [DriverImplementation("d", ["-"], dialect="threads-py")])
        rows.append(
            {
                "cases": n,
                "jobs": picked,
                "default_s": round(default, 2),
                "jobs1_s": round(one, 2),
                "ratio": round(default / one, 3),
                "per_job": CASES_PER_JOB,
            }
        )
    return rows


WORK = Path(__file__).resolve().parent / ".work"


def _transcript(n: int) -> Path:
    return WORK / f"scaling-import-{n}mb.jsonl"


def import_size(n: int) -> Callable[[], Any]:
    """A realistic Claude Code transcript of ``n`` MB (same seed, so the same mix of turns at
    every size), imported to a file through the library API."""
    from claude_gen import generate

    from threads_cases.importers import import_to_file

    WORK.mkdir(exist_ok=True)
    src = _transcript(n)
    generate(src, n)

    def run() -> None:
        import_to_file("claude-code", src, WORK / "scaling-import.out.jsonl")

    return run


def orjson_parse(n: int) -> Callable[[], Any]:
    """The baseline of ``import``: plain orjson parsing of every line of the same file."""

    def run() -> None:
        with open(_transcript(n), "rb") as fh:
            for line in fh:
                orjson.loads(line)

    return run


#: Curves printed beside a baseline measured on the same inputs in the same run.
BASELINES: dict[str, tuple[Callable[[int], Callable[[], Any]], str]] = {
    "import": (orjson_parse, "plain orjson parsing of the same files"),
}

CURVES: dict[str, tuple[Callable[[int], Callable[[], Any]], int, str]] = {
    "record": (record, 100, "turn"),  # 100 / 400 / 1,600 turns (issue 20's "Done when")
    "snapshot": (snapshot, 60, "turn"),
    "events": (events, 60, "turn"),
    "fork": (fork, 60, "turn"),
    "suite": (suite, 30, "case"),
    "reduce": (reduce, 4000, "turn"),
    "snapshots": (snapshots, 5000, "snapshot"),
    "reply": (reply, 400, "kB"),
    "import": (import_size, 2, "MB"),
}


# Curves whose 1x run lasts only 10-30 ms: each of their samples does the same work (sixteen
# 1x runs, four 4x, one 16x, after a gc.collect()), so a 1x sample cannot slip between two
# collections that a 16x run pays; the sizes take turns three times and keep their best. The
# inputs of all three sizes (240,000 events in the snapshots curve) are built first and frozen
# (gc.freeze), so the collector's full passes, which a 16x run triggers by keeping its state,
# do not walk the benchmark's own input.
EQUAL_WORK = {"record", "snapshot", "events", "snapshots", "reduce"}


def equal_work(make: Callable[[int], Callable[[], Any]], sizes: list[int]) -> list[float]:
    """Best CPU seconds per run at each size, every sample doing ``sizes[-1]`` units of work."""
    runs = [[make(n) for _ in range(sizes[-1] // n)] for n in sizes]
    gc.collect()
    gc.freeze()  # the inputs: a full collection during a sample walks what the run made
    try:
        best = [float("inf")] * len(sizes)
        for _ in range(3):
            for i, batch in enumerate(runs):
                gc.collect()
                t = time.process_time()
                for run in batch:
                    run()
                best[i] = min(best[i], (time.process_time() - t) / len(batch))
    finally:
        gc.unfreeze()
    return best


def measure(name: str, scale: float) -> dict[str, Any]:
    make, base, unit = CURVES[name]
    base = max(1, int(base * scale))
    sizes = [base, 4 * base, 16 * base]
    if name in EQUAL_WORK:
        secs = equal_work(make, sizes)
    else:
        secs = [best_of(3 if n < 16 * base else 2, make(n)) for n in sizes]
    per = [s / n for s, n in zip(secs, sizes, strict=True)]
    out: dict[str, Any] = {
        "curve": name,
        "unit": unit,
        "sizes": sizes,
        "seconds": [round(s, 4) for s in secs],
        "ratio_4x": round(per[1] / per[0], 2),
        "ratio_16x": round(per[2] / per[0], 2),
    }
    if name in BASELINES:
        make_base, what = BASELINES[name]
        base_secs = [best_of(3, make_base(n)) for n in sizes]
        out["baseline"] = what
        out["baseline_seconds"] = [round(s, 4) for s in base_secs]
        out["times_baseline"] = [round(a / b, 1) for a, b in zip(secs, base_secs, strict=True)]
    return out


#: The TypeScript curves of benchmarks/scaling_ts.mjs (its CURVES), for --only.
TS_CURVES = (
    "ts-reduce",
    "ts-snapshots",
    "ts-record",
    "ts-snapshot",
    "ts-events",
    "ts-reply",
    "ts-fork",
)


def ts_curves(scale: float, only: list[str] | None = None) -> list[dict[str, Any]]:
    """The TypeScript curves (benchmarks/scaling_ts.mjs, CPU time of node): all of them, or
    ``only`` those; none when the TypeScript build or node is missing."""
    import json
    import shutil
    import subprocess
    from pathlib import Path

    here = Path(__file__).resolve().parent
    node = shutil.which("node")
    if node is None or not (here.parent / "ts" / "dist" / "src" / "core" / "reducer.js").is_file():
        print("(TypeScript curves skipped: build ts/ first)")
        return []
    out = subprocess.run(
        [node, "--expose-gc", str(here / "scaling_ts.mjs"), str(scale), *(only or [])],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = []
    for line in out.splitlines():
        r = json.loads(line)
        per = [sec / n for sec, n in zip(r["seconds"], r["sizes"], strict=True)]
        r["seconds"] = [round(x, 4) for x in r["seconds"]]
        r["ratio_4x"] = round(per[1] / per[0], 2)
        r["ratio_16x"] = round(per[2] / per[0], 2)
        rows.append(r)
    return rows


def _print_curve(r: dict[str, Any], max_ratio: float, label: str = "") -> None:
    flag = "" if r["ratio_16x"] <= max_ratio else "  <- superlinear"
    print(
        f"{r['curve']:10} per {r['unit']:5} {'/'.join(map(str, r['sizes'])):>22} "
        f"{'/'.join(map(str, r['seconds'])):>28}  {r['ratio_4x']:<5} {r['ratio_16x']}{flag}{label}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--only", nargs="*", choices=[*sorted(CURVES), *TS_CURVES], help="curves to run"
    )
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every base size")
    ap.add_argument("--max-ratio", type=float, default=1.3, help="largest 16x/1x cost per unit")
    ap.add_argument(
        "--max-jobs-ratio", type=float, default=1.15, help="largest default/--jobs 1 CPU ratio"
    )
    ap.add_argument("--no-jobs", action="store_true", help="skip the default --jobs check")
    ap.add_argument(
        "--retries", type=int, default=2, help="measurements again of a curve over the limit"
    )
    args = ap.parse_args(argv)
    worst = 0.0
    print(f"{'curve':10} {'unit':9} {'sizes':>22} {'seconds':>28}  4x    16x")
    py_only = [n for n in args.only or [] if n in CURVES]
    ts_only = [n for n in args.only or [] if n in TS_CURVES]
    over: list[str] = []
    for name in py_only if args.only else list(CURVES):
        r = measure(name, args.scale)
        _print_curve(r, args.max_ratio)
        over += [name] if r["ratio_16x"] > args.max_ratio else []
        if "baseline" in r:
            print(
                f"{'':10} baseline: {r['baseline']}: {'/'.join(map(str, r['baseline_seconds']))} s;"
                f" {r['curve']} = {'/'.join(map(str, r['times_baseline']))} times it"
            )
    for r in ts_curves(args.scale, ts_only) if ts_only or not args.only else []:
        _print_curve(r, args.max_ratio)
        over += [r["curve"]] if r["ratio_16x"] > args.max_ratio else []
    for name in over:
        # a curve over the limit is measured again on its own: a noise spike (another
        # process, the host of this virtual machine) passes, a superlinear cost fails each time
        best = float("inf")
        for _ in range(args.retries):
            again = (
                ts_curves(args.scale, [name]) if name in TS_CURVES else [measure(name, args.scale)]
            )
            _print_curve(again[0], args.max_ratio, label="  (again)")
            best = min(best, again[0]["ratio_16x"])
            if best <= args.max_ratio:
                break
        worst = max(worst, best)
    failed = worst > args.max_ratio
    if failed:
        print(f"FAIL: a curve grows faster than linear (16x ratio {worst} > {args.max_ratio})")
    else:
        print(f"ok: every curve within {args.max_ratio}x of linear at 16x")
    if not args.no_jobs and (not args.only or "suite" in args.only):
        print("\njobs: CPU s of `threads-cases run` (CLI + drivers), default --jobs vs --jobs 1")
        for r in jobs_default(args.scale):
            flag = "" if r["ratio"] <= args.max_jobs_ratio else "  <- default is slower"
            failed = failed or bool(flag)
            print(
                f"{r['cases']:>6} cases  default --jobs {r['jobs']}: {r['default_s']:>6} s"
                f"   --jobs 1: {r['jobs1_s']:>6} s   ratio {r['ratio']}{flag}"
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
