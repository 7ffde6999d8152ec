"""The data-only Thread API tests (spec/conformance/thread-api/, spec/thread-log.md 9.2,
spec/conformance.md 2.9): programs of turns, forks, snapshots and restores recorded with a
fixed thread id and clock, and the event ids and log bytes every thread ends with.
ts/test/threadApi.test.ts runs the same file; tools/make_thread_api_tests.py writes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from threads_cases.case.sandbox import sha256_hex
from threads_cases.core.log import encode_log
from threads_cases.core.strictjson import parse
from threads_cases.reference.agent import AgentSpec
from threads_cases.reference.model import ScriptedModel
from threads_cases.reference.runtime import Clock
from threads_cases.reference.sandbox import FakeSandbox
from threads_cases.reference.thread import Thread

FILE = Path(__file__).resolve().parent.parent / "spec" / "conformance" / "thread-api" / "ids.json"
SUITE: dict[str, Any] = parse(FILE.read_bytes())
KEYS = {"description", "thread_id", "clock_start_ms", "files", "ops", "threads"}


def run_program(agent: dict[str, Any], test: dict[str, Any]) -> list[Thread]:
    """Record ``test["ops"]`` (spec/conformance.md 2.9); returns the threads, the first made
    by ``create`` and each fork appended. A ``snapshot`` op's ``snapshot_id`` is checked."""
    threads = [
        Thread.create(
            agent=AgentSpec.from_json(agent),
            sandbox=FakeSandbox(test["files"]),
            thread_id=test["thread_id"],
            clock=Clock(test["clock_start_ms"]),
        )
    ]
    for op in test["ops"]:
        t = threads[op["thread"]]
        if op["op"] == "turn":
            t.run_turn(op["text"], ScriptedModel(op["replies"]))
        elif op["op"] == "fork":
            threads.append(t.fork(op["at"], branch_id=op["branch_id"]))
        elif op["op"] == "snapshot":
            assert t.snapshot() == op["snapshot_id"]
        else:
            assert op["op"] == "restore"
            t.restore(op["snapshot_id"])
    return threads


def results(threads: list[Thread]) -> list[dict[str, Any]]:
    """``{"event_ids", "log_sha256"}`` of each thread, as ``threads`` holds them."""
    return [
        {
            "event_ids": [e["event_id"] for e in t.events],
            "log_sha256": sha256_hex(encode_log(t.events)),
        }
        for t in threads
    ]


@pytest.mark.parametrize("test", SUITE["tests"], ids=[t["description"] for t in SUITE["tests"]])
def test_thread_api_conformance(test: dict[str, Any], tmp_path: Path) -> None:
    assert set(test) == KEYS
    threads = run_program(SUITE["agent"], test)
    assert results(threads) == test["threads"]
    threads[-1].write_log(tmp_path / "log.jsonl")  # those bytes, through a sibling file
    assert sha256_hex((tmp_path / "log.jsonl").read_bytes()) == test["threads"][-1]["log_sha256"]
    assert [p.name for p in tmp_path.iterdir()] == ["log.jsonl"]
