"""Author the depth-limit conformance tests (spec/thread-log.md 5.1a): an event may nest 248
levels (256 - 8), so every protocol message and case file that carries it fits in 256.

Writes ``spec/conformance/reduce/1NN-depth-*.json`` (a log at the limit reduces; one level
more is ``log_invalid`` at its line) and ``spec/conformance/driver-requests/depth.json``
(requests carrying an event one level too deep are refused at the pointer of the first
container past the limit). The expected states come from the Python reducer; the refusals are
written here by hand. Run ``python tools/make_depth_tests.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from threads_cases.core.canonical import canonical_document  # noqa: E402
from threads_cases.core.depth import MAX_EVENT_DEPTH  # noqa: E402
from threads_cases.core.dialects import get_dialect  # noqa: E402
from threads_cases.core.log import reduce  # noqa: E402

CONF = ROOT / "spec" / "conformance"
BASE = CONF / "cases" / "hash-only-unread" / "log.threads-py.jsonl"
FIRST = 145  # the first number of these files in reduce/


def nest(levels: int) -> Any:
    """A value ``levels`` deep: ``[[...[]...]]``."""
    value: Any = []
    for _ in range(levels - 1):
        value = [value]
    return value


def x_event(levels: int) -> dict[str, Any]:
    """An extension event whose envelope nests ``levels`` deep (data is level 2, v level 3)."""
    return {
        "actor_kind": "system",
        "branch_id": "main",
        "critical": False,
        "data": {"v": nest(levels - 2)},
        "epoch": 0,
        "event_id": "e0",
        "seq": 0,
        "thread_id": "th-1",
        "ts": "2026-11-29T20:05:00.000Z",
        "type": "x_deep",
    }


def tool_turn(levels: int) -> list[dict[str, Any]]:
    """A turn whose reply calls a tool with an input that makes the reply ``levels`` deep
    (the input is level 6: envelope, data, message, content, block, input)."""
    events = [json.loads(line) for line in BASE.read_text(encoding="utf-8").splitlines()][:5]
    reply = events[4]["data"]
    block = {"id": "tu_1", "input": {"v": nest(levels - 6)}, "name": "get_weather"}
    reply["message"]["content"].append({**block, "type": "tool_use"})
    reply["stop_reason"] = "tool_use"
    return events


def past(levels: int, prefix: list[str | int]) -> str:
    """The pointer of the first container past the limit in ``nest`` under ``prefix``."""
    return "/" + "/".join(str(p) for p in [*prefix, *([0] * (MAX_EVENT_DEPTH - len(prefix)))])


def reduce_tests() -> list[tuple[str, dict[str, Any]]]:
    limit = MAX_EVENT_DEPTH
    out: list[tuple[str, dict[str, Any]]] = []
    for dialect in ("threads-py", "threads-ts"):
        d = get_dialect(dialect)
        log = [d.encode_event(x_event(limit))]
        out.append(
            (
                f"depth-event-at-the-limit-{dialect}",
                {
                    "description": f"an event nested exactly {limit} levels deep is read "
                    f"({dialect})",
                    "dialect": dialect,
                    "log": log,
                    "state": d.encode_state(reduce(log, dialect=dialect)),
                },
            )
        )
        out.append(
            (
                f"depth-event-past-the-limit-{dialect}",
                {
                    "description": f"an event nested {limit + 1} levels deep is refused, "
                    f"so that every message carrying it fits in 256 levels ({dialect})",
                    "dialect": dialect,
                    "log": [d.encode_event(x_event(limit + 1))],
                    "error": "log_invalid",
                    "error_line": 1,
                },
            )
        )
    log = tool_turn(limit)
    out.append(
        (
            "depth-tool-input-at-the-limit",
            {
                "description": f"a reply whose tool input makes it {limit} levels deep reduces, "
                "and its state keeps the input as deep as the event",
                "dialect": "threads-py",
                "log": log,
                "state": reduce(log),
            },
        )
    )
    out.append(
        (
            "depth-tool-input-past-the-limit",
            {
                "description": "a reply one level deeper than the limit is refused at its line",
                "dialect": "threads-py",
                "log": tool_turn(limit + 1),
                "error": "log_invalid",
                "error_line": 5,
            },
        )
    )
    return out


def request_tests() -> list[dict[str, Any]]:
    limit = MAX_EVENT_DEPTH
    turn = tool_turn(limit + 1)
    return [
        {
            "description": "reduce refuses a log whose event nests one level past the limit, "
            "at the first container past it",
            "request": {
                "id": 3,
                "cmd": "reduce",
                "dialect": "threads-py",
                "log": [x_event(limit + 1)],
            },
            "code": "log_invalid",
            "pointer": past(limit + 1, ["data", "v"]),
        },
        {
            "description": "write_case refuses a thread whose reply nests one level past the "
            "limit, at the first container past it",
            "request": {
                "id": 4,
                "cmd": "write_case",
                "thread": {"log": turn},
                "name": "c",
                "at": "main.4",
                "expect": {},
                "external_effects": "stub",
            },
            "code": "log_invalid",
            "pointer": past(limit + 1, ["data", "message", "content", 1, "input", "v"]),
        },
    ]


def main() -> int:
    reduce_dir = CONF / "reduce"
    for old in reduce_dir.glob("*-depth-*.json"):
        old.unlink()
    taken = {int(p.name[:3]) for p in reduce_dir.glob("*.json")}
    n = FIRST
    for slug, test in reduce_tests():
        while n in taken:
            n += 1
        (reduce_dir / f"{n:03d}-{slug}.json").write_bytes(canonical_document(test))
        n += 1
    doc = {
        "description": f"Events nested past {MAX_EVENT_DEPTH} levels are refused in requests "
        "too (spec/thread-log.md 5.1a), at the first container past the limit.",
        "tests": request_tests(),
    }
    (CONF / "driver-requests" / "depth.json").write_bytes(canonical_document(doc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
