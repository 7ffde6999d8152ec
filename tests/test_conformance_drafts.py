"""The data-only tests of drafted matchers (spec/conformance/drafts/turns.json,
spec/case-format.md 5.12, spec/conformance.md 2.15): what a save writes and says when it is
given no matchers, ``draft=True`` or ``draft=False``; ts/test/drafts.test.ts runs the same
file through TypeScript's ``saveCase``. And the Python API end to end: ``thread.save_case``
without ``expect`` drafts like ``threads-cases save`` and says so (issue 38)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from threads_cases import AgentSpec, CaseExpectation, FakeSandbox, ScriptedModel, Thread
from threads_cases.case.save import drafted
from threads_cases.core.canonical import canonical_document
from threads_cases.core.strictjson import parse
from threads_cases.reference.model import text_reply, tool_reply
from threads_cases.reference.runtime import Clock

FILE = Path(__file__).resolve().parent.parent / "spec" / "conformance" / "drafts" / "turns.json"
TESTS: list[dict[str, Any]] = parse(FILE.read_bytes())["tests"]


@pytest.mark.parametrize("test", TESTS, ids=[t["description"][:40] for t in TESTS])
def test_drafts_conformance(test: dict[str, Any]) -> None:
    given = CaseExpectation(test["given"]["must"], test["given"]["expect"])
    exp, notes = drafted(test["events"], given, test["draft"])
    saved = {"must": exp.must, "expect": exp.expect}
    assert canonical_document(saved) == canonical_document(test["saved"])
    assert notes == [w.replace("{skip}", "draft=False") for w in test["warnings"]]


def _thread() -> tuple[Thread, str]:
    thread = Thread.create(
        agent=AgentSpec("notes-bot", "model-x-1", "Be brief."),
        sandbox=FakeSandbox({"notes.txt": "buy milk"}),
        thread_id="thread-notes",
        clock=Clock(start_ms=1_700_000_000_000),
    )
    at = thread.events[-1]["event_id"]
    replies = [tool_reply(("tu_1", "read_file", {"path": "notes.txt"})), text_reply("Buy milk.")]
    thread.run_turn("What is on my list?", ScriptedModel(replies))
    return thread, at


def test_save_case_without_expect_drafts_as_the_cli_does(tmp_path: Path) -> None:
    thread, at = _thread()
    saved = thread.save_case("drafted", at=at, dir=tmp_path)
    assert saved.ok, saved.error
    meta = json.loads((tmp_path / "drafted" / "case.json").read_text())
    assert meta["expect"] == {
        "must": [
            {"type": "tool_result", "data": {"name": "read_file", "is_error": False}},
            {"type": "turn_completed", "data": {"stop_reason": "end_turn"}},
        ],
        "expect": [{"type": "tool_called", "data": {"name": "read_file"}}],
    }
    assert saved.warnings[0] == (
        "drafted 2 must and 1 expect matcher(s) from the recorded turn "
        "(see them in case.json; draft=False to skip)"
    )


def test_draft_false_is_the_explicit_way_to_save_none(tmp_path: Path) -> None:
    thread, at = _thread()
    saved = thread.save_case("bare", at=at, dir=tmp_path, draft=False)
    assert saved.ok, saved.error
    meta = json.loads((tmp_path / "bare" / "case.json").read_text())
    assert meta["expect"] == {"must": [], "expect": []}
    assert any("checks nothing" in w for w in saved.warnings)
    given = thread.save_case(
        "given", at=at, dir=tmp_path, expect=CaseExpectation(must=[{"type": "turn_completed"}])
    )
    assert given.ok and not any("drafted" in w for w in given.warnings)
    bad = thread.save_case("bad", at=at, dir=tmp_path, draft="no")  # type: ignore[arg-type]
    assert not bad.ok and bad.error is not None and bad.error.code == "invalid_request"
