"""Where an inspect-ai log cut short says it stops (spec/importers.md 11.5): the note of the
interrupted turn, its ``turn_failed`` message and the ``cut_record`` warning name the place
where the text stops (the ``.json`` log's line and column; a ``.eval`` member's name, line
and column), never "line 1" nor an event number taken for a line; the archive's own cut
names the byte it stops at. The cut turn saves and replays ``pass`` on both implementations.

The logs are the project's hand-written fixtures (tests/importers/inspect-ai/), cut here; the
archive is rebuilt with a pretty-printed member so that its lines are not all line 1.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

from imported_cases import run_both, save_turns

from threads_cases.importers import Stats, import_events, import_to_file

INSPECT = Path(__file__).resolve().parent / "importers" / "inspect-ai"
MEMBER = "samples/count-lines_epoch_1.json"


def imported(path: Path, **kw: Any) -> tuple[list[dict[str, Any]], Stats]:
    stats = Stats()
    return import_events("inspect-ai", path, stats=stats, **kw), stats


def failed_message(events: list[dict[str, Any]]) -> str:
    (failed,) = [e for e in events if e["type"] == "turn_failed"]
    assert failed["data"]["error"]["code"] == "interrupted"
    return str(failed["data"]["error"]["message"])


def stop_of(text: str) -> tuple[int, int]:
    """The line and column (from 1) of the last non-blank character of ``text``."""
    body = text.rstrip()
    return body.count("\n") + 1, len(body) - body.rfind("\n") - 1


def saves_and_passes(tmp_path: Path, src: Path, **kw: Any) -> None:
    log = tmp_path / "log.jsonl"
    import_to_file("inspect-ai", src, log, **kw)
    names = save_turns(log, tmp_path / "cases")
    got = run_both(tmp_path / "cases", tmp_path)
    assert {k[0] for k in got} == set(names)
    assert {str(r["verdict"]) for r in got.values()} == {"pass"}, got


def test_a_json_log_cut_inside_an_event_names_its_line_not_line_1(tmp_path: Path) -> None:
    log = (INSPECT / "chat-log.json").read_text(encoding="utf-8")
    events_at = log.index('"events"')
    text = log[: log.index('"event"', log.index('"event"', events_at + 10) + 1) + 12]
    src = tmp_path / "cut.json"
    src.write_text(text, encoding="utf-8")
    line, col = stop_of(text)
    events, stats = imported(src)
    (w,) = [w for w in stats.warnings if w.reason == "cut_record"]
    assert w.line == line and w.message.startswith(f"the log stops at line {line} column {col},")
    (note,) = [n for n in stats.notes if "interrupted" in n]
    assert note.startswith(f"line {line}: the turn open where the text stops is recorded as ")
    where = f"the log stops at line {line} column {col}, inside sample s1 (epoch 1), in its event"
    assert where in note and "which is dropped" in note
    assert where in failed_message(events)
    saves_and_passes(tmp_path, src)


def archive_with(tmp_path: Path, name: str, member_text: str) -> Path:
    """The fixture archive with ``name`` (a member) replaced by ``member_text``."""
    data = (INSPECT / "react-agent.eval").read_bytes()
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as zf, zipfile.ZipFile(out, "w") as new:
        for info in zf.infolist():
            body = member_text.encode() if info.filename == name else zf.read(info.filename)
            new.writestr(info.filename, body, zipfile.ZIP_DEFLATED)
    src = tmp_path / "cut.eval"
    src.write_bytes(out.getvalue())
    return src


def test_an_eval_member_cut_names_the_member_and_its_line(tmp_path: Path) -> None:
    with zipfile.ZipFile(INSPECT / "react-agent.eval") as zf:
        sample = json.loads(zf.read(MEMBER))
    pretty = json.dumps(sample, indent=2)  # so that the place is not line 1 of the member
    at = pretty.index('"event"', pretty.index('"event"') + 1)
    text = pretty[: at + 10]
    line, col = stop_of(text)
    assert line > 1
    src = archive_with(tmp_path, MEMBER, text)
    events, stats = imported(src, sample="count-lines", epoch=1)
    (w,) = [w for w in stats.warnings if w.reason == "cut_record"]
    assert w.line == line
    assert w.message.startswith(f"{MEMBER} stops at line {line} column {col}, in the middle")
    (note,) = [n for n in stats.notes if "interrupted" in n]
    assert note.startswith(f"{MEMBER} line {line}: the turn open where the text stops")
    stops = f"{MEMBER} stops at line {line} column {col}, inside sample count-lines (epoch 1)"
    assert stops in note
    failed_message(events)  # interrupted (its reply's calls unanswered: the emitter's words)
    saves_and_passes(tmp_path, src, sample="count-lines", epoch=1)


def test_an_archive_cut_names_the_byte_it_stops_at(tmp_path: Path) -> None:
    data = (INSPECT / "react-agent.eval").read_bytes()
    src = tmp_path / "cut.eval"
    src.write_bytes(data[:2000])
    _, stats = imported(src)
    messages = [w.message for w in stats.warnings if w.reason == "cut_record"]
    assert "the archive stops at byte 2000, inside member samples/1_epoch_1.json" in messages
    (note,) = [n for n in stats.notes if "interrupted" in n]
    assert note.startswith("samples/1_epoch_1.json line 1: the turn open where the text stops")
    assert not note.startswith("line ")
