"""Single-document formats cut short in the middle of a write (spec/importers.md sections 8,
11.5, 12.1): a SWE-agent ``.traj``, an OpenHands event list and an inspect-ai ``.json`` log
import their complete leading entries as an interrupted turn, with a ``cut_record`` warning
at the line the text stops on naming that line and column; ``--strict`` refuses them with
the hint that the file is cut short; a document that breaks JSON before its end is refused,
never taken for a cut one. Also: ``--strict`` refuses every warning (section 4), and the
messages count events from 1 while pointers count from 0.

Every file here is written by the test itself (or is one of the project's hand-written
fixtures, cut).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from imported_cases import run_both, save_turns

from threads_cases.case.turns import list_turns
from threads_cases.core.errors import CaseError
from threads_cases.importers import Stats, import_events, import_to_file
from threads_cases.importers.cutjson import NotJson, line_col, read_document

HERE = Path(__file__).resolve().parent
IMPORTERS = HERE / "importers"


def imported(fmt: str, path: Path, **kw: Any) -> tuple[list[dict[str, Any]], Stats]:
    stats = Stats()
    return import_events(fmt, path, stats=stats, **kw), stats


def of_type(events: list[dict[str, Any]], t: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == t]


def traj() -> str:
    """A SWE-agent trajectory (text actions), as SWE-agent writes it: indented, `trajectory`
    first, then `history`, `info`."""
    history = [
        {"role": "system", "content": "You are an autonomous programmer."},
        {"role": "user", "content": "Make `size('1kb')` return 1024."},
        {"role": "assistant", "content": "Find it.", "action": "find_file sizes.py\n"},
        {"role": "user", "content": "Found 1 match: /repo/sizes.py"},
        {"role": "assistant", "content": "Open it.", "action": "open sizes.py\n"},
        {"role": "user", "content": "4:    'kb': 1000,"},
        {"role": "assistant", "content": "Fix it.", "action": "edit 4:4\n    'kb': 1024,\n"},
        {"role": "user", "content": "File updated."},
        {"role": "assistant", "content": "Done.", "action": "submit\n"},
    ]
    doc = {
        "trajectory": [{"action": "find_file sizes.py", "observation": "Found 1 match"}],
        "history": history,
        "info": {"exit_status": "submitted", "submission": "diff --git a/sizes.py"},
        "replay_config": None,
        "environment": "swe_main",
    }
    return json.dumps(doc, indent=2)


def cut_at(text: str, marker: str, extra: int = 0) -> str:
    """``text`` cut ``extra`` characters after the start of ``marker``."""
    return text[: text.index(marker) + extra]


# ------------------------------------------------------------------ the reader
def test_read_document_tells_a_cut_from_a_damaged_document() -> None:
    whole = read_document(b'{"a": [1, 2]}', "the file")
    assert whole.value == {"a": [1, 2]} and whole.cut is None
    cut = read_document(b'{"a": [1, 2,\n  {"b": "xy', "the file")
    assert cut.value == {"a": [1, 2, {}]} and cut.cut is not None
    assert cut.cut.open_path == ["a", 2, "b"]
    assert cut.line == 2
    assert cut.message.startswith("the file stops at line 2 column 11, in the middle of a value")
    with pytest.raises(NotJson) as exc:
        read_document(b'{"a": [1, 2},\n 3]', "the file")  # broken before its end
    assert exc.value.line == 1 and "line 1 column 12" in exc.value.message
    assert "cut short" not in exc.value.message
    with pytest.raises(NotJson) as exc:
        read_document(b'"a string cut', "the file")  # nothing whole to keep
    assert "no whole value" in exc.value.message
    assert line_col("ab\ncd", 3) == (2, 1) and line_col("ab\ncd", 1) == (1, 2)


# ------------------------------------------------------------------ SWE-agent
def test_a_traj_cut_in_its_history_imports_the_complete_steps(tmp_path: Path) -> None:
    text = traj()
    src = tmp_path / "run.traj"
    src.write_text(cut_at(text, '"Fix it."', 4), encoding="utf-8")  # inside history[6]
    events, stats = imported("swe-agent", src)
    (turn,) = list_turns(events)
    assert turn["status"] == "failed"
    assert [e["data"]["input"]["command"] for e in of_type(events, "tool_called")] == [
        "find_file sizes.py",
        "open sizes.py",
    ]
    assert len(of_type(events, "tool_result")) == 2  # both observations kept
    (failed,) = of_type(events, "turn_failed")
    assert failed["data"]["error"]["code"] == "interrupted"
    (w,) = stats.warnings
    stop_line = src.read_text().count("\n") + 1
    assert (w.line, w.code, w.reason) == (stop_line, "import_repaired", "cut_record")
    assert f"the trajectory stops at line {stop_line} column " in w.message
    assert "which ends at line " in w.message and "history entry" in w.message
    assert any("cut short before its exit status" in n for n in stats.notes)
    # the complete replies keep their reasons: none of them was cut
    assert {e["data"]["stop_reason"] for e in of_type(events, "model_responded")} == {"tool_use"}


def test_a_cut_traj_saves_and_passes_on_both_implementations(tmp_path: Path) -> None:
    src = tmp_path / "run.traj"
    src.write_text(cut_at(traj(), '"Fix it."', 4), encoding="utf-8")
    log = tmp_path / "log.jsonl"
    import_to_file("swe-agent", src, log)
    names = save_turns(log, tmp_path / "cases")
    assert names == ["t1"]
    results = run_both(tmp_path / "cases", tmp_path)
    assert {r["verdict"] for r in results.values()} == {"pass"} and len(results) == 2


def test_strict_refuses_a_cut_traj_with_the_cut_short_hint(tmp_path: Path) -> None:
    src = tmp_path / "run.traj"
    src.write_text(cut_at(traj(), '"Fix it."', 4), encoding="utf-8")
    with pytest.raises(CaseError) as exc:
        imported("swe-agent", src, strict=True)
    err = exc.value
    assert err.code == "import_invalid"
    assert err.location.line == src.read_text().count("\n") + 1
    assert err.message.startswith("cut_record: the trajectory stops at line ")
    assert "cut short" in (err.hint or "")


def test_a_traj_cut_before_its_history_is_refused_naming_where(tmp_path: Path) -> None:
    src = tmp_path / "run.traj"
    src.write_text(cut_at(traj(), '"observation"', 5), encoding="utf-8")
    with pytest.raises(CaseError) as exc:
        imported("swe-agent", src)
    err = exc.value
    line = src.read_text().rstrip().count("\n") + 1
    assert err.code == "import_invalid" and err.location.line == line
    assert f"stops at line {line} column" in err.message
    assert "before its `history` list" in err.message
    assert "cut short" in (err.hint or "")


def test_a_traj_broken_before_its_end_is_refused_not_recovered(tmp_path: Path) -> None:
    text = traj().replace('"Open it."', '"Open it." oops', 1)
    src = tmp_path / "run.traj"
    src.write_text(text, encoding="utf-8")
    line = text[: text.index("oops")].count("\n") + 1
    with pytest.raises(CaseError) as exc:
        imported("swe-agent", src)
    err = exc.value
    assert err.code == "import_invalid" and err.location.line == line
    assert err.message.startswith(f"the trajectory is not JSON: line {line} column ")
    assert "cut short" not in err.message


def test_a_traj_cut_after_its_exit_status_completes(tmp_path: Path) -> None:
    """Cut in ``replay_config``, after the history and ``info``: what recorded the turn's end
    is whole, so the turn completes (section 1), with the warning."""
    src = tmp_path / "run.traj"
    src.write_text(cut_at(traj(), '"environment"', 6), encoding="utf-8")
    events, stats = imported("swe-agent", src)
    assert [t["status"] for t in list_turns(events)] == ["completed"]
    assert [w.reason for w in stats.warnings] == ["cut_record"]


# ------------------------------------------------------------------ OpenHands, inspect-ai
def test_an_openhands_list_cut_short_names_line_and_column(tmp_path: Path) -> None:
    fc = (IMPORTERS / "openhands" / "function-calling.json").read_text(encoding="utf-8")
    text = fc[: len(fc) * 6 // 10]
    src = tmp_path / "cut.json"
    src.write_text(text, encoding="utf-8")
    events, stats = imported("openhands", src)
    assert list_turns(events)[-1]["status"] == "failed"
    (w,) = [w for w in stats.warnings if w.reason == "cut_record"]
    last = text.rstrip()
    line, col = last.count("\n") + 1, len(last) - last.rfind("\n") - 1
    assert w.line == line
    assert f"the trajectory stops at line {line} column {col}, " in w.message
    with pytest.raises(CaseError) as exc:
        imported("openhands", src, strict=True)
    assert exc.value.location.line == line and "cut short" in (exc.value.hint or "")


def test_an_openhands_event_is_counted_from_1_its_pointer_from_0(tmp_path: Path) -> None:
    events = json.loads((IMPORTERS / "openhands" / "function-calling.json").read_text())
    src = tmp_path / "bad.json"
    src.write_text(json.dumps([events[0], 42, *events[1:]]), encoding="utf-8")
    _, stats = imported("openhands", src)
    w = stats.warnings[0]
    assert (w.line, w.reason) == (2, "invalid_line")
    assert w.message.startswith("event 2 (/1): ")


def test_an_inspect_json_log_cut_short_names_line_and_column(tmp_path: Path) -> None:
    log = (IMPORTERS / "inspect-ai" / "chat-log.json").read_text(encoding="utf-8")
    text = log[: len(log) * 6 // 10]
    src = tmp_path / "cut.json"
    src.write_text(text, encoding="utf-8")
    events, stats = imported("inspect-ai", src)
    assert list_turns(events)[-1]["status"] == "failed"
    (w,) = [w for w in stats.warnings if w.reason == "cut_record"]
    line = text.rstrip().count("\n") + 1
    assert w.line == line and f"the log stops at line {line} column " in w.message
    with pytest.raises(CaseError) as exc:
        imported("inspect-ai", src, strict=True)
    err = exc.value
    assert err.location.line == line and err.message.startswith("cut_record: the log stops")
    assert "cut short" in (err.hint or "")


# ------------------------------------------------------------------ --strict: every warning
def test_strict_refuses_a_meaning_level_repair_too() -> None:
    """Twice-encoded arguments (the fixture's call toolu_04) read whole but are repaired
    (decoded once more): lenient mode warns, so --strict refuses, at the warning's line with
    its reason and message."""
    src = IMPORTERS / "openhands" / "function-calling.json"
    _, stats = imported("openhands", src)
    (w,) = stats.warnings
    assert w.reason == "double_encoded" and w.message.startswith("event 11 (/10) call ")
    with pytest.raises(CaseError) as exc:
        imported("openhands", src, strict=True)
    assert exc.value.code == "import_invalid" and exc.value.location.line == w.line
    assert exc.value.message == f"double_encoded: {w.message}"


def test_a_conversation_folder_whose_last_event_file_is_cut(tmp_path: Path) -> None:
    """The event store (12.3): the last file cut short names where its text stops and is
    dropped (``cut_record``); an earlier file broken before its end is skipped
    (``invalid_line``), never taken for a cut."""
    events = json.loads((IMPORTERS / "openhands" / "function-calling.json").read_text())
    folder = tmp_path / "conv" / "events"
    folder.mkdir(parents=True)
    for k, e in enumerate(events):
        (folder / f"{k}.json").write_text(json.dumps(e, indent=2), encoding="utf-8")
    last = folder / f"{len(events) - 1}.json"
    text = last.read_text(encoding="utf-8")
    last.write_text(text[: len(text) // 2], encoding="utf-8")
    (folder / "3.json").write_text('{"id": 3, "source": "agent"} junk', encoding="utf-8")
    _, stats = imported("openhands", tmp_path / "conv")
    by_reason = {w.reason: w for w in stats.warnings}
    cut = by_reason["cut_record"]
    assert cut.line == len(events) and cut.message.startswith(
        f"events/{len(events) - 1}.json stops at line "
    )
    assert "the event is dropped" in cut.message
    bad = by_reason["invalid_line"]
    assert bad.line == 4 and bad.message.startswith("events/3.json is not JSON: line 1 column 30")
