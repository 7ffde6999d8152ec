"""``threads export`` files as thread logs (spec/importers.md section 9): the chain and the
head verified (a broken chain is a refusal naming the line), the shared event types mapped,
the rest kept as extension events; an export cut short imports with its open turn
interrupted. The exports are written by tests/threads_exports.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import cli
from imported_cases import run_both, save_turns
from threads_exports import THREAD, _env, events, export_lines, write_export

from threads_cases.case.turns import list_turns
from threads_cases.core.canonical import canonical_line
from threads_cases.core.errors import CaseError
from threads_cases.importers import Stats, import_events

CUT_TURN = [
    ("user_message", {"content": "And Tromsø?"}, "user"),
    ("turn_started", {"turn_id": "t3"}, "system"),
]


def imported(path: Path, **kw: Any) -> tuple[list[dict[str, Any]], Stats]:
    stats = Stats()
    return import_events("threads", path, stats=stats, **kw), stats


def refusal(path: Path, **kw: Any) -> CaseError:
    with pytest.raises(CaseError) as info:
        import_events("threads", path, **kw)
    return info.value


def test_an_export_maps_the_shared_types_and_keeps_the_rest(tmp_path: Path) -> None:
    evs, stats = imported(write_export(tmp_path / "t.jsonl", export_lines(events())))
    turns = list_turns(evs)
    assert [t["status"] for t in turns] == ["completed", "completed"]
    assert [t["text"] for t in turns] == ["Weather in Oslo?", "And Bergen?"]
    started = evs[0]["data"]
    assert started["agent"]["name"] == "weather-bot"
    assert started["agent"]["system"] == "You answer weather questions."
    assert started["agent"]["tools"][0]["description"] == "Weather for a city"
    assert started["metadata"] == {
        "source": "threads",
        "session_id": THREAD,
        "export": {"runtime": "threads 0.9"},
        "thread": {"project": "demo"},
    }
    kept = [e["type"] for e in evs if e["type"].startswith("x_")]
    assert kept == [
        "x_threads.snapshot_taken",
        "x_threads.checkpoint_written",
        "x_threads.sandbox_read",
    ]
    results = [e["data"]["content"] for e in evs if e["type"] == "tool_result"]
    assert results == ["rain, 4C", "sun, 9C"]
    assert stats.skipped["model_requested (recomputed by the import)"] == 4
    assert not stats.warnings


def test_a_threads_ts_export_imports_to_the_same_bytes(tmp_path: Path) -> None:
    py = write_export(tmp_path / "py.jsonl", export_lines(events()))
    ts = write_export(tmp_path / "ts.jsonl", export_lines(events(), dialect="threads-ts"))
    a, _ = imported(py)
    b, _ = imported(ts)
    assert [canonical_line(e) for e in a][1:] == [canonical_line(e) for e in b][1:]


def test_every_turn_saves_and_passes_on_both(tmp_path: Path) -> None:
    src = write_export(tmp_path / "t.jsonl", export_lines(events()))
    p = cli("import", "threads", src, "-o", tmp_path / "log.jsonl", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    names = save_turns(tmp_path / "log.jsonl", tmp_path / "cases")
    results = run_both(tmp_path / "cases", tmp_path)
    assert len(results) == 2 * len(names) == 4
    assert {r["verdict"] for r in results.values()} == {"pass"}, results


def test_a_changed_line_breaks_the_chain_at_the_next_line(tmp_path: Path) -> None:
    lines = export_lines(events())
    changed = json.loads(lines[2])  # line 3, the user_message
    changed["data"]["content"] = "Weather in Paris?"
    lines[2] = canonical_line(changed)
    err = refusal(write_export(tmp_path / "t.jsonl", lines))
    assert err.code == "import_invalid" and err.location.line == 4
    assert "chain is broken" in err.message and "line 3" in err.message


def test_a_removed_line_breaks_the_chain(tmp_path: Path) -> None:
    lines = export_lines(events())
    del lines[5]
    err = refusal(write_export(tmp_path / "t.jsonl", lines))
    assert err.location.line == 6 and "chain is broken" in err.message


def test_a_line_not_in_canonical_form_is_refused(tmp_path: Path) -> None:
    lines = export_lines(events())
    lines[2] = json.dumps(json.loads(lines[2]), indent=None).encode()
    err = refusal(write_export(tmp_path / "t.jsonl", lines))
    assert err.location.line == 3 and "canonical form" in err.message


def test_a_head_that_does_not_match_and_lines_after_it(tmp_path: Path) -> None:
    lines = export_lines(events())
    head = json.loads(lines[-1])
    head["head"]["events"] += 1
    bad = [*lines[:-1], canonical_line(head)]
    err = refusal(write_export(tmp_path / "a.jsonl", bad))
    assert err.location.line == len(lines) and "head checkpoint does not match" in err.message
    err = refusal(write_export(tmp_path / "b.jsonl", [*lines, lines[1]]))
    assert err.location.line == len(lines) + 1 and "after the head" in err.message


def test_an_export_cut_short_interrupts_its_open_turn(tmp_path: Path) -> None:
    base = events()
    extra = [_env(len(base) + i, t, d, a) for i, (t, d, a) in enumerate(CUT_TURN)]
    lines = export_lines([*base, *extra])[:-1]  # no head
    cut = lines[-1][:-20]  # and the last line cut by a crash
    src = write_export(tmp_path / "t.jsonl", [*lines[:-1], cut], newline_at_end=False)
    evs, stats = imported(src)
    turns = list_turns(evs)
    # the third turn's user_message is whole, its turn_started cut: interrupted
    assert [t["status"] for t in turns] == ["completed", "completed", "failed"]
    (w,) = stats.warnings
    assert (w.line, w.code, w.reason) == (len(lines), "import_skipped", "cut_record")
    # cut at a line boundary, without the head: the same, with a note
    src = write_export(tmp_path / "u.jsonl", lines)
    evs, stats = imported(src)
    assert [t["status"] for t in list_turns(evs)] == ["completed", "completed", "failed"]
    assert any("interrupted" in n and "head checkpoint" in n for n in stats.notes)
    err = refusal(src, strict=True)
    assert err.code == "import_invalid" and "before its head checkpoint" in err.message


def test_a_file_without_the_header_is_refused_at_line_1(tmp_path: Path) -> None:
    lines = export_lines(events())
    err = refusal(write_export(tmp_path / "t.jsonl", lines[1:]))
    assert err.location.line == 1 and "header" in err.message


def test_auto_detects_an_export_and_a_log_reader_names_the_import(tmp_path: Path) -> None:
    src = write_export(tmp_path / "t.jsonl", export_lines(events()))
    p = cli("import", "auto", src, "-o", tmp_path / "log.jsonl", cwd=tmp_path)
    assert p.returncode == 0 and "read as threads (import auto)" in p.stderr, p.stderr
    p = cli("turns", src, cwd=tmp_path)
    assert p.returncode != 0
    assert "import threads" in p.stderr and "--dialect threads-py" not in p.stderr, p.stderr


def test_save_from_threads(tmp_path: Path) -> None:
    src = write_export(tmp_path / "t.jsonl", export_lines(events()))
    p = cli(
        "save",
        src,
        "--from",
        "threads",
        "--turn",
        "2",
        "--name",
        "bergen",
        "--dir",
        tmp_path / "cases",
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "cases" / "bergen" / "case.json").is_file()


def test_an_upstream_conformance_case_is_refused_in_one_line(tmp_path: Path) -> None:
    case = tmp_path / "weather"
    case.mkdir()
    upstream = {"kind": "replay", "family": "tool-calls", "clock": {"step_ms": 1}}
    (case / "case.json").write_text(json.dumps(upstream))
    p = cli("import", "threads", case / "case.json", "-o", tmp_path / "l.jsonl", cwd=tmp_path)
    errors = [x for x in p.stderr.splitlines() if x.startswith("error[")]
    assert p.returncode == 2 and len(errors) == 1, p.stderr
    assert "conformance case of the upstream threads runtime" in errors[0]


def test_a_number_not_written_as_jcs_writes_it_is_refused(tmp_path: Path) -> None:
    evs = events()
    evs[11]["data"]["bytes"] = 1e21  # the checkpoint_written event: JCS writes 1e+21
    lines = export_lines(evs)
    assert b"1e+21" in lines[12]
    assert not refusal_or_none(write_export(tmp_path / "ok.jsonl", lines))
    lines[12] = lines[12].replace(b"1e+21", b"1e21")  # orjson's spelling
    err = refusal(write_export(tmp_path / "t.jsonl", lines))
    assert err.location.line == 13 and "canonical form" in err.message


def refusal_or_none(path: Path) -> CaseError | None:
    try:
        import_events("threads", path)
    except CaseError as err:
        return err
    return None


def test_a_result_that_answers_no_call_is_dropped_with_a_warning(tmp_path: Path) -> None:
    base = events()
    stray = next(e for e in base if e["type"] == "tool_result")
    at = base.index(stray)
    orphan = {**stray, "data": {**stray["data"], "tool_use_id": "t-nowhere"}}
    changed = [*base[: at + 1], orphan, *base[at + 1 :]]
    changed = [{**e, "seq": n, "event_id": f"ev{n}"} for n, e in enumerate(changed)]
    src = write_export(tmp_path / "t.jsonl", export_lines(changed))
    evs, stats = imported(src)
    assert [t["status"] for t in list_turns(evs)] == ["completed", "completed"]
    (w,) = stats.warnings
    assert (w.line, w.code, w.reason) == (at + 3, "import_repaired", "unmatched_result")
    assert "'t-nowhere' answers no tool call of the turn; dropped" in w.message
    assert stats.skipped["tool_result whose call is not in the turn"] == 1
    err = refusal(src, strict=True)
    assert err.code == "import_invalid" and err.location.line == at + 3
    assert "unmatched_result" in err.message
