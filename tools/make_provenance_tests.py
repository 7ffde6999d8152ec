# ruff: noqa: E501  (the test descriptions are sentences, each kept on one line)
"""Write the data-only tests of spec/conformance/provenance/ (spec/conformance.md 2.16, spec/replay.md
11.11): where each answer of a replay came from.

Each test names a conformance case, how many of its recorded replies to keep (``keep_replies``,
null: all), whether to drop its stubs (``drop_stubs``) and a supply; the case is copied, cut so,
and replayed with the supply on the Python implementation (a ``replay`` request), and written
with the answer's ``provenance`` and its stop code. Every implementation's test suite then checks
it gets the same. Review the diff of the written file: it is the specification. Run
``python tools/make_provenance_tests.py`` after a change to where answers come from.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from threads_cases.core.canonical import canonical_document  # noqa: E402
from threads_cases.harness.check.conformance_turns import prepared  # noqa: E402
from threads_cases.protocol.server import handle_request  # noqa: E402

CASES = ROOT / "spec" / "conformance" / "cases"
OUT = ROOT / "spec" / "conformance" / "provenance" / "answers.json"
TEXT = {
    "message": {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
    "stop_reason": "end_turn",
}

TESTS: list[dict[str, Any]] = [
    {
        "description": "a replay of its own recording: every reply and stub recorded",
        "case": "weather-stub",
        "keep_replies": None,
        "drop_stubs": False,
        "supply": {},
    },
    {
        "description": "a stub answers before a supplied answer for the same tool",
        "case": "weather-stub",
        "keep_replies": None,
        "drop_stubs": False,
        "supply": {"tool:get_weather": "sunny"},
    },
    {
        "description": "without its stub, the supply answers the external call",
        "case": "weather-stub",
        "keep_replies": None,
        "drop_stubs": True,
        "supply": {"tool:get_weather": "sunny"},
    },
    {
        "description": "a reply the recording lacks is supplied",
        "case": "weather-stub",
        "keep_replies": 1,
        "drop_stubs": False,
        "supply": {"model:1": TEXT},
    },
    {
        "description": "an external call nothing answers stops the turn: no tool result",
        "case": "weather-stub",
        "keep_replies": None,
        "drop_stubs": True,
        "supply": {},
    },
    {
        "description": "a sandbox tool runs now against the restored sandbox: live",
        "case": "reads-notes",
        "keep_replies": None,
        "drop_stubs": False,
        "supply": {},
    },
    {
        "description": "an unknown tool's error result is made now: live",
        "case": "unknown-tool",
        "keep_replies": None,
        "drop_stubs": False,
        "supply": {},
    },
    {
        "description": "parallel external calls, each from its stub, in order",
        "case": "parallel-calls",
        "keep_replies": None,
        "drop_stubs": False,
        "supply": {},
    },
    {
        "description": "a chain of tools, each result in event order",
        "case": "long-tool-chain",
        "keep_replies": None,
        "drop_stubs": False,
        "supply": {},
    },
]


def run(test: dict[str, Any]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        case = prepared(test, CASES.parent, Path(tmp))
        msg = {"cmd": "replay", "case": {"path": str(case), "supply": {"calls": test["supply"]}}}
        out = handle_request(msg)
    stop = out["stop"]
    return {"provenance": out["provenance"], "stop": None if stop is None else stop["code"]}


def main() -> None:
    tests = [{**t, **run(t)} for t in TESTS]
    doc = {
        "description": "Where each answer of a replay came from (spec/replay.md 11.11, spec/conformance.md 2.16).",
        "tests": tests,
    }
    OUT.write_bytes(canonical_document(doc))
    print(f"wrote {len(tests)} tests to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
