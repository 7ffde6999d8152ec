"""Scaling benchmark: does each cost grow in proportion to its input?

    python benchmarks/scaling.py [--base N] [--max-ratio 1.3] [--only NAME ...]

Each curve runs one workload at 1x, 4x and 16x of its size and reports the cost per unit at
each size as a ratio to the cost per unit at 1x. A linear cost gives ratios near 1.0; a
quadratic one gives about 4 and 16. The script exits 1 when the 16x ratio of any curve is
above --max-ratio (default 1.3), so `nox -s bench` fails on a superlinear curve.

Curves (issues 19 and 20; spec/reducer.md 6.5, spec/replay.md 3.2):
  record     turns recorded through the Thread API (a tool call and a reply each), per turn
  snapshot   one snapshot per turn on a growing thread (Thread API), per turn
  reduce     a log of short turns with no snapshot, per event (the turn-id check)
  snapshots  a log with a snapshot after every event, per event (the snapshot-id check)
  reply      one turn whose tool results grow with the size, per byte of the request
  events     reading ``Thread.events[-1]`` once per turn while recording, per turn
  fork       forking a thread of n turns at its last event n times, every other fork then
             recording one turn, per fork: a fork shares the prefix, so its cost must not
             grow with the thread
  ts-reduce, ts-snapshots, ts-record, ts-snapshot, ts-events, ts-reply
             the same curves in TypeScript (scaling_ts.mjs, node's CPU time), when ts/ is built;
             see that file for how its samples are taken

Every figure is a ratio between runs of the same process, so it travels between machines;
the CPU seconds are printed for reference. Times are the best of three runs (two at 16x).
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable
from typing import Any

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
        for i in range(n):
            child = thread.fork(head, branch_id=f"b{i}")
            if i % 2:
                _turn(child, n + i)

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


CURVES: dict[str, tuple[Callable[[int], Callable[[], Any]], int, str]] = {
    "record": (record, 100, "turn"),  # 100 / 400 / 1,600 turns (issue 20's "Done when")
    "snapshot": (snapshot, 60, "turn"),
    "events": (events, 60, "turn"),
    "fork": (fork, 60, "fork"),
    "reduce": (reduce, 4000, "turn"),
    "snapshots": (snapshots, 5000, "snapshot"),
    "reply": (reply, 400, "kB"),
}


def measure(name: str, scale: float) -> dict[str, Any]:
    make, base, unit = CURVES[name]
    base = max(1, int(base * scale))
    sizes = [base, 4 * base, 16 * base]
    secs = [best_of(3 if n < 16 * base else 2, make(n)) for n in sizes]
    per = [s / n for s, n in zip(secs, sizes, strict=True)]
    return {
        "curve": name,
        "unit": unit,
        "sizes": sizes,
        "seconds": [round(s, 4) for s in secs],
        "ratio_4x": round(per[1] / per[0], 2),
        "ratio_16x": round(per[2] / per[0], 2),
    }


def ts_curves(scale: float) -> list[dict[str, Any]]:
    """The TypeScript curves (benchmarks/scaling_ts.mjs, CPU time of node), or none when the
    TypeScript build or node is missing."""
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
        [node, "--expose-gc", str(here / "scaling_ts.mjs"), str(scale)],
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", choices=sorted(CURVES), help="curves to run")
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every base size")
    ap.add_argument("--max-ratio", type=float, default=1.3, help="largest 16x/1x cost per unit")
    args = ap.parse_args(argv)
    worst = 0.0
    print(f"{'curve':10} {'unit':9} {'sizes':>22} {'seconds':>28}  4x    16x")
    for name in args.only or list(CURVES):
        r = measure(name, args.scale)
        worst = max(worst, r["ratio_16x"])
        flag = "" if r["ratio_16x"] <= args.max_ratio else "  <- superlinear"
        print(
            f"{r['curve']:10} per {r['unit']:5} {'/'.join(map(str, r['sizes'])):>22} "
            f"{'/'.join(map(str, r['seconds'])):>28}  {r['ratio_4x']:<5} {r['ratio_16x']}{flag}"
        )
    for r in ts_curves(args.scale):
        worst = max(worst, r["ratio_16x"])
        flag = "" if r["ratio_16x"] <= args.max_ratio else "  <- superlinear"
        print(
            f"{r['curve']:10} per {r['unit']:5} {'/'.join(map(str, r['sizes'])):>22} "
            f"{'/'.join(map(str, r['seconds'])):>28}  {r['ratio_4x']:<5} {r['ratio_16x']}{flag}"
        )
    if worst > args.max_ratio:
        print(f"FAIL: a curve grows faster than linear (16x ratio {worst} > {args.max_ratio})")
        return 1
    print(f"ok: every curve within {args.max_ratio}x of linear at 16x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
