"""Saving every turn of an imported log as a case and running the cases on both
implementations: what the importer tests check for each format they read (every completed
turn saves, with drafted matchers, and replays ``pass``)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import cli

from threads_cases.case.turns import draft_matchers, fork_point, list_turns
from threads_cases.core.strictjson import parse
from threads_cases.reference.thread import Thread

IMPLEMENTATIONS = ("threads-py", "threads-ts")


def save_turns(log: Path, cases: Path, prefix: str = "", *, completed: bool = False) -> list[str]:
    """Save each turn of the thread log ``log`` (only the completed ones with ``completed``)
    under ``cases`` as ``<prefix>t<index>``, with the matchers ``draft`` proposes; the
    names saved. Fails the test when a save is refused."""
    events = [parse(x) for x in log.read_bytes().splitlines()]
    thread = Thread.open(events)
    names = []
    for t in list_turns(events):
        if completed and t["status"] != "completed":
            continue
        name = f"{prefix}t{t['index']}"
        result = thread.save_case(
            name,
            expect=draft_matchers(events, t["index"]),
            at=fork_point(events, t["index"]),
            dir=cases,
            secrets="allow",
        )
        assert result.ok, (name, result.error)
        names.append(name)
    return names


def run_both(cases: Path, cwd: Path) -> dict[tuple[str, str], dict[str, object]]:
    """``threads-cases run CASES`` on both implementations: each result line by
    ``(case, implementation)``."""
    args: list[str | Path] = ["run", cases, "--format", "json"]
    for impl in IMPLEMENTATIONS:
        args += ["--impl", impl]
    p = cli(*args, cwd=cwd)
    lines = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
    return {(r["case"], r["implementation"]): r for r in lines if r.get("kind") == "result"}
