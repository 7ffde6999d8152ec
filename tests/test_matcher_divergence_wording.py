"""The first divergence of an unmatched matcher says `expected (by the matcher)`, not
`recorded` (the value is the matcher's, not the recording's), and names the event as the
matcher's sentence does (`seq N TYPE (ID)`), not by a second number (spec/reports.md 7.2)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import cli

from threads_cases.harness.check.divergence import ABSENT, Divergence

CASES = Path(__file__).resolve().parent.parent / "spec" / "conformance" / "cases"


def test_matcher_summary_wording() -> None:
    d = Divergence(
        "matcher", "/data/is_error", True, False, event_index=7, event_type="tool_result",
        event="seq 13 tool_result (c.13)",
    )  # fmt: skip
    assert d.summary() == (
        "matcher on seq 13 tool_result (c.13) at /data/is_error: "
        "expected (by the matcher) true != replayed false"
    )
    assert d.to_json()["event_index"] == 7
    assert Divergence("matcher", "", {"type": "x"}, ABSENT).summary() == (
        'matcher at /: expected (by the matcher) {"type":"x"} != replayed (absent)'
    )
    # other kinds keep recorded/replayed; the event is named by its seq and id, never by index
    s = Divergence(
        "stop", "/k", 1, 2, call=0, event_index=3, event_type="turn_failed",
        seq=9, event_id="c.9", event="seq 9 turn_failed (c.9)",
    )  # fmt: skip
    assert s.summary() == (
        "stop (model call 0) on seq 9 turn_failed (c.9) at /k: recorded 1 != replayed 2"
    )
    assert (s.to_json()["seq"], s.to_json()["event_id"]) == (9, "c.9")


def test_the_failure_panel_numbers_the_event_once(tmp_path: Path) -> None:
    case = tmp_path / "cases" / "writes-summary"
    shutil.copytree(CASES / "writes-summary", case)
    meta = json.loads((case / "case.json").read_text())
    meta["expect"]["must"].append({"type": "tool_result", "data": {"is_error": True}})
    (case / "case.json").write_text(json.dumps(meta, indent=2))
    p = cli("run", "cases", "--impl", "threads-py", "--format", "json", cwd=tmp_path)
    assert p.returncode == 3
    result = next(json.loads(x) for x in p.stdout.splitlines() if '"result"' in x)
    summary = result["divergence"]["summary"]
    assert summary.startswith("matcher on seq 13 tool_result (writes-summary.13) at ")
    assert "expected (by the matcher) true != replayed false" in summary
    assert "recorded" not in summary and "event 7" not in summary
    nearest = next(c for c in result["checks"] if c["id"] == "must[1]")["detail"]
    assert "nearest is seq 13 tool_result (writes-summary.13)" in nearest
