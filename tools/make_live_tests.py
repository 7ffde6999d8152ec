# ruff: noqa: E501  (the test descriptions are sentences, each kept on one line)
"""Write the data-only tests of spec/conformance/live/ (spec/conformance.md 1.1, spec/replay.md
section 11): live turns of conformance cases, answered by scripted harness answers.

Each test is run through the Python implementation (a ``replay`` request with ``live``, its
model calls answered in order by ``answers``, then by ``then`` for any further call) and
written with what it gave: the ``request_sha256`` of each call the runtime asked for, the
stop, the types of the replayed events and the sha256 of their canonical lines (threads-py
spelling, each line ending in a newline). Every implementation's test suite then checks it
gets the same. Review the diff of the written file: it is the specification. Run
``python tools/make_live_tests.py`` after a change to the runtime's live turn.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from threads_cases.core.canonical import canonical_document, canonical_line  # noqa: E402
from threads_cases.protocol.server import handle_request  # noqa: E402

CASES = ROOT / "spec" / "conformance" / "cases"
OUT = ROOT / "spec" / "conformance" / "live" / "turns.json"
SPENT = {
    "code": "live_budget_exceeded",
    "stop_key": "",
    "message": "the live budget of 0 model call(s) is spent",
}


def reply(*blocks: dict[str, Any], stop: str = "end_turn", **usage: int) -> dict[str, Any]:
    return {
        "reply": {
            "message": {"role": "assistant", "content": list(blocks)},
            "stop_reason": stop,
            "usage": {"input_tokens": 3, "output_tokens": 2, **usage},
        }
    }


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def use(tid: str, name: str, inp: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": tid, "name": name, "input": inp}


def recorded(case: str) -> list[dict[str, Any]]:
    doc = json.loads((CASES / case / "model.json").read_text("utf-8"))
    return [
        {"reply": {k: r[k] for k in ("message", "stop_reason", "usage")}} for r in doc["replies"]
    ]


TESTS: list[dict[str, Any]] = [
    {
        "description": "answered with the recorded replies, a live turn records what the replay records",
        "case": "weather-stub",
        "live": {},
        "answers": recorded("weather-stub"),
    },
    {
        "description": "model and system replace the agent's in every request, and new tool-use ids still take the stub by tool name and canonical input",
        "case": "weather-stub",
        "live": {"model": "fake-2", "system": "Be brief."},
        "answers": [
            reply(
                text("Checking."),
                use("toolu_new_1", "get_weather", {"city": "Oslo"}),
                stop="tool_use",
            ),
            reply(text("Rain in Oslo.")),
        ],
    },
    {
        "description": "an external write tool no stub answers stops the turn with write_not_allowed at tool:<name>",
        "case": "email-write-effect",
        "live": {"model": "fake-2"},
        "answers": [
            reply(use("toolu_m", "send_email", {"to": "bob@example.com"}), stop="tool_use")
        ],
    },
    {
        "description": "an allowed write tool that no stub answers and no handler runs stops with missing_stub",
        "case": "email-write-effect",
        "live": {"allow_write": ["send_email"]},
        "answers": [
            reply(use("toolu_m", "send_email", {"to": "bob@example.com"}), stop="tool_use")
        ],
    },
    {
        "description": "a stop the harness answers ends the turn with its code, stop key and message",
        "case": "weather-stub",
        "live": {"model": "fake-2"},
        "answers": [reply(use("toolu_w", "get_weather", {"city": "Oslo"}), stop="tool_use")],
    },
    {
        "description": "sandbox tools of a live turn run against the restored sandbox",
        "case": "reads-notes",
        "live": {"model": "fake-2"},
        "answers": [
            reply(
                use("toolu_r", "read_file", {"path": "notes.txt"}),
                use("toolu_l", "list_files", {}),
                stop="tool_use",
            ),
            reply(text("done")),
        ],
    },
    {
        "description": "usage keys beyond input_tokens and output_tokens are recorded as the harness gave them",
        "case": "weather-stub",
        "live": {},
        "answers": [
            reply(text("Cached."), cache_read_input_tokens=40, cache_creation_input_tokens=7)
        ],
    },
    {
        "description": "a recorded interruption is not applied to a live turn: it goes on past the call the user rejected",
        "case": "interrupted-turn",
        "live": {},
        "answers": recorded("interrupted-turn") + [reply(text("finished"))] * 3,
    },
]


def run(test: dict[str, Any]) -> dict[str, Any]:
    answers = test["answers"]
    asked: list[str] = []

    def ask(index: int, request: dict[str, Any], sha: str) -> dict[str, Any]:
        asked.append(sha)
        if index < len(answers):
            return dict(answers[index])
        return {"stop": {**SPENT, "stop_key": f"model:{index}"}}

    message = {"cmd": "replay", "case": {"path": str(CASES / test["case"])}, "live": test["live"]}
    out = handle_request(message, ask_model=ask)
    lines = b"".join(canonical_line(e) + b"\n" for e in out["events"])
    return {
        **test,
        "then": SPENT,
        "requests": asked,
        "stop": out["stop"],
        "event_types": [e["type"] for e in out["events"]],
        "events_sha256": hashlib.sha256(lines).hexdigest(),
    }


def main() -> None:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "description": "Live turns (spec/replay.md section 11, driver-protocol.md 2.5.1): send replay with case.path "
        "spec/conformance/cases/<case> and live; answer model call n with answers[n], and any further "
        "call with the stop then (its stop_key model:<n>); the runtime must ask for the calls whose "
        "request_sha256 are requests, stop with stop, and record events whose types are event_types and "
        "whose canonical lines (threads-py spelling, each ending in a newline) hash to events_sha256.",
        "tests": [run(t) for t in TESTS],
    }
    OUT.write_bytes(canonical_document(doc))
    print(f"wrote {len(doc['tests'])} tests to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
