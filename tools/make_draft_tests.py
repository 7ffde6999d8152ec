"""Write spec/conformance/drafts/turns.json: data-only tests of the matchers a save drafts
from its recorded turn (spec/case-format.md 5.12, spec/importers.md section 5,
spec/conformance.md 2.15).

Each test is one recorded turn (user_message .. terminal event, recorded through the Python
``Thread`` with a fixed clock, or written here for an interrupted turn), the matchers given,
the ``draft`` choice, and what every save API must write and say: the expectation and the
warnings, ``{skip}`` standing for the language's spelling of the way out (Python
``draft=False``, TypeScript ``draft: false``). ``tests/test_conformance_drafts.py`` and
``ts/test/drafts.test.ts`` run it. Run ``python tools/make_draft_tests.py`` after changing
the rules.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from threads_cases.case.build import split_turn  # noqa: E402
from threads_cases.case.directory import CaseExpectation  # noqa: E402
from threads_cases.case.save import drafted  # noqa: E402
from threads_cases.core.canonical import canonical_document  # noqa: E402
from threads_cases.reference.agent import AgentSpec  # noqa: E402
from threads_cases.reference.model import ScriptedModel, text_reply, tool_reply  # noqa: E402
from threads_cases.reference.runtime import Clock  # noqa: E402
from threads_cases.reference.sandbox import FakeSandbox  # noqa: E402
from threads_cases.reference.thread import Thread  # noqa: E402

OUT = ROOT / "spec" / "conformance" / "drafts" / "turns.json"


def recorded(replies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events of one recorded turn (user_message .. terminal event)."""
    thread = Thread.create(
        agent=AgentSpec("notes-bot", "model-x-1", "Be brief."),
        sandbox=FakeSandbox({"notes.txt": "buy milk"}),
        thread_id="thread-drafts",
        clock=Clock(start_ms=1_800_000_000_000),
    )
    at = thread.events[-1]["event_id"]
    thread.run_turn("What is on my list?", ScriptedModel(replies))
    return split_turn(list(thread.events), at)[1]


READS = recorded(
    [
        tool_reply(("tu_1", "read_file", {"path": "notes.txt"})),
        tool_reply(("tu_2", "read_file", {"path": "notes.txt"})),
        tool_reply(("tu_3", "read_file", {"path": "gone.txt"})),
        text_reply("Buy milk."),
    ]
)
TEXT_ONLY = recorded([text_reply("Hello.")])
INTERRUPTED = [
    {"type": "user_message", "data": {"content": "Go."}},
    {"type": "turn_started", "data": {"turn_id": "turn-2"}},
    {
        "type": "turn_failed",
        "data": {"turn_id": "turn-2", "error": {"code": "interrupted", "message": "Esc"}},
    },
]
MUST = {"type": "turn_completed"}

TESTS: list[tuple[str, list[dict[str, Any]], dict[str, Any], bool | None]] = [
    (
        "No matchers given: a must per successful tool_result (repeats dropped, an error "
        "result left out) and the terminal event, the tool calls in order as expect.",
        READS,
        {"must": [], "expect": []},
        None,
    ),
    (
        "A turn without tools drafts its terminal event only.",
        TEXT_ONLY,
        {"must": [], "expect": []},
        None,
    ),
    (
        "An interrupted turn drafts its turn_failed by error code.",
        INTERRUPTED,
        {"must": [], "expect": []},
        None,
    ),
    (
        "Matchers given: nothing is drafted and nothing said.",
        READS,
        {"must": [MUST], "expect": []},
        None,
    ),
    (
        "draft true adds the drafted matchers before the given ones.",
        READS,
        {"must": [MUST], "expect": []},
        True,
    ),
    (
        "draft false with no matchers saves none, and warns that the case checks nothing.",
        READS,
        {"must": [], "expect": []},
        False,
    ),
]


def main() -> None:
    tests = []
    for description, events, given, draft in TESTS:
        exp, notes = drafted(events, CaseExpectation(given["must"], given["expect"]), draft)
        tests.append(
            {
                "description": description,
                "events": events,
                "given": given,
                "draft": draft,
                "saved": {"must": exp.must, "expect": exp.expect},
                "warnings": [n.replace("draft=False", "{skip}") for n in notes],
            }
        )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_bytes(canonical_document({"tests": tests}))
    print(f"wrote {len(tests)} tests to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
