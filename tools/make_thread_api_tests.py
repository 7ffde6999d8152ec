"""Write spec/conformance/thread-api/ids.json: data-only tests of the ids the Thread API
gives (spec/thread-log.md 9.2, spec/conformance.md 2.9).

Each test is a program of turns, forks, snapshots and restores recorded with a fixed thread
id and clock; the expected event ids and log hashes are what the Python ``Thread`` records
(``tests/test_conformance_thread_api.py`` runs it), and ``ts/test/threadApi.test.ts`` must
give the same bytes. A fork's ``at`` is written here as ``[thread, index]`` and stored as
that event's id. Run ``python tools/make_thread_api_tests.py`` after changing the rules.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
OUT = ROOT / "spec" / "conformance" / "thread-api" / "ids.json"
if not OUT.is_file():  # the test module reads it on import
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_bytes(b'{"tests": []}\n')

from test_conformance_thread_api import results, run_program  # noqa: E402

from threads_cases.core.canonical import canonical_document  # noqa: E402
from threads_cases.reference.agent import BUILTIN_TOOLS, AgentSpec  # noqa: E402
from threads_cases.reference.model import text_reply, tool_reply  # noqa: E402

AGENT = AgentSpec(
    "a", "model-x", "Be brief.", tools=(BUILTIN_TOOLS["read_file"], BUILTIN_TOOLS["write_file"])
)
LONG = "a-branch-name-of-forty-five-characters-cut-it"


def read(n: int, thread: int = 0) -> dict[str, Any]:
    """A turn reading f.txt, then answering."""
    call = tool_reply((f"tu{n}", "read_file", {"path": "f.txt"}))
    return {"op": "turn", "thread": thread, "text": f"q{n}", "replies": [call, text_reply("ok")]}


def write(n: int, thread: int = 0) -> dict[str, Any]:
    """A turn writing f.txt (``v<n>``), then answering."""
    call = tool_reply((f"tu{n}", "write_file", {"path": "f.txt", "content": f"v{n}"}))
    return {"op": "turn", "thread": thread, "text": f"q{n}", "replies": [call, text_reply("ok")]}


def fork(thread: int, at: tuple[int, int], branch: str) -> dict[str, Any]:
    return {"op": "fork", "thread": thread, "at": list(at), "branch_id": branch}


def snapshot(thread: int, sid: str) -> dict[str, Any]:
    return {"op": "snapshot", "thread": thread, "snapshot_id": sid}


def restore(thread: int, sid: str) -> dict[str, Any]:
    return {"op": "restore", "thread": thread, "snapshot_id": sid}


PROGRAMS: list[tuple[str, list[dict[str, Any]]]] = [
    (
        "A forked event and the events after it take the new branch's name, a fork of a fork"
        " its own, and a branch name is cut to 40 characters in an event id.",
        [read(1), fork(0, (0, -1), "b1"), write(2, 1), fork(1, (1, -1), LONG), read(3, 2)],
    ),
    (
        "A fork of a fork taking back an ancestor's branch name adds .2 to each id an ancestor"
        " took, a later generation .3, and an id no ancestor took stays plain; each fork reads"
        " the sandbox as it was at its fork point.",
        [
            write(1),
            write(2),
            fork(0, (0, 11), "b1"),
            read(3, 1),
            fork(1, (1, 12), "main"),
            read(4, 2),
            fork(2, (2, 13), "b1"),
            fork(3, (3, 14), "main"),
            read(5, 4),
        ],
    ),
    (
        "A restored event takes its branch's name like any other, also in a fork restoring a"
        " snapshot taken before the fork and in a fork whose ids clash, and the next turn reads"
        " the restored sandbox.",
        [
            write(1),
            snapshot(0, "snap-1"),
            write(2),
            restore(0, "snap-1"),
            read(3),
            fork(0, (0, 12), "b1"),
            write(4, 1),
            fork(1, (1, 13), "main"),
            restore(2, "snap-1"),
            read(5, 2),
            restore(1, "snap-1"),
            read(6, 1),
            snapshot(1, "snap-2"),
        ],
    ),
]


def build(description: str, ops: list[dict[str, Any]]) -> dict[str, Any]:
    """One test: ``ops`` with each fork's ``at`` resolved, and the threads they record."""
    test: dict[str, Any] = {
        "description": description,
        "thread_id": "thread-ids",
        "clock_start_ms": 1_780_000_000_000,
        "files": {"f.txt": "v0"},
        "ops": [],
        "threads": [],
    }
    for op in ops:
        if op["op"] == "fork":
            which, index = op["at"]
            so_far = run_program(AGENT.to_json(), test)
            op = {**op, "at": so_far[which].events[index]["event_id"]}
        test["ops"].append(op)
    test["threads"] = results(run_program(AGENT.to_json(), test))
    return test


def main() -> None:
    doc = {
        "description": "Event ids the Thread API gives, with a fixed thread id and clock.",
        "agent": AGENT.to_json(),
        "tests": [build(d, ops) for d, ops in PROGRAMS],
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_bytes(canonical_document(doc))
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
