"""A tool result that answers no call is dropped with an ``import_repaired`` warning,
reason ``unmatched_result``, naming its line and its id, and ``--strict`` refuses it
(spec/importers.md section 4, "Results that answer no call"): Claude Code and Codex. The
files are the project's own hand-written fixtures with one result's id changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from threads_cases.core.errors import CaseError
from threads_cases.importers import Stats, import_events

HERE = Path(__file__).resolve().parent / "importers"


@pytest.mark.parametrize(
    ("fmt", "fixture", "old", "new", "line"),
    [
        (
            "claude-code",
            "claude-code-parallel.jsonl",
            '"tool_use_id":"toolu_01"',
            '"tool_use_id":"toolu_OTHER"',
            9,
        ),
        ("codex", "codex-rollout-basic.jsonl", '"call_id":"call_A1","output"', None, 8),
    ],
)
def test_a_result_answering_no_call_warns_and_strict_refuses(
    tmp_path: Path, fmt: str, fixture: str, old: str, new: str | None, line: int
) -> None:
    text = (HERE / fixture).read_text(encoding="utf-8")
    assert text.count(old) == 1
    new = new or old.replace("call_A1", "call_OTHER")
    path = tmp_path / fixture
    path.write_text(text.replace(old, new), encoding="utf-8")
    stats = Stats()
    import_events(fmt, path, stats=stats)
    unmatched = [w for w in stats.warnings if w.reason == "unmatched_result"]
    assert [(w.code, w.line) for w in unmatched] == [("import_repaired", line)]
    assert "_OTHER'" in unmatched[0].message and "dropped" in unmatched[0].message
    with pytest.raises(CaseError) as err:
        import_events(fmt, path, strict=True)
    assert err.value.code == "import_invalid"
    assert err.value.message.startswith("unmatched_result: ")
    assert err.value.location.line == line


def test_the_fixtures_as_written_give_no_such_warning() -> None:
    for fmt, fixture in (
        ("claude-code", "claude-code-parallel.jsonl"),
        ("codex", "codex-rollout-basic.jsonl"),
    ):
        stats = Stats()
        import_events(fmt, HERE / fixture, stats=stats)
        assert "unmatched_result" not in [w.reason for w in stats.warnings]
