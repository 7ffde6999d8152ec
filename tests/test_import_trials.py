"""What real sessions contain, imported right (spec/importers.md sections 2-4).

tests/importers/trials/ holds twelve small transcripts (copied from the shared trials, with
their README) that each broke the importers; tests/importers/realistic/ holds invented but
realistic sessions with rewinds, compaction, sidechains, resumed sessions, an Agent SDK
transcript, damage from a crash and a Codex rollout with usage as totals only. Each right
value is asserted here; every completed turn of every transcript is saved and replayed on
both implementations.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import cli, reference_drivers
from hypothesis import given, settings
from hypothesis import strategies as st
from imported_cases import IMPLEMENTATIONS, run_both, save_turns

from threads_cases.case.turns import draft_matchers, fork_point, list_turns
from threads_cases.core.canonical import canonical_line
from threads_cases.core.dialects import get_dialect
from threads_cases.core.errors import CaseError
from threads_cases.core.log import validate_log
from threads_cases.importers import Stats, import_events, import_to_file
from threads_cases.importers.lenient import js_integer, read_line
from threads_cases.protocol.client import DriverImplementation

HERE = Path(__file__).resolve().parent
TRIALS = HERE / "importers" / "trials"
REALISTIC = HERE / "importers" / "realistic"


def fmt_of(path: Path) -> str:
    return "codex" if "codex" in path.name or "rollout" in path.name else "claude-code"


def imported(path: Path, **kw: Any) -> tuple[list[dict[str, Any]], Stats]:
    stats = Stats()
    return import_events(fmt_of(path), path, stats=stats, **kw), stats


def of_type(events: list[dict[str, Any]], t: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == t]


def replies(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["data"] for e in of_type(events, "model_responded")]


def warnings(stats: Stats) -> list[tuple[int, str, str]]:
    return [(w.line, w.code, w.reason) for w in stats.warnings]


# --------------------------------------------------------------------------- the trials
def test_copies_of_one_reply_merge_with_the_largest_usage() -> None:
    events, stats = imported(TRIALS / "01b-dedup-larger-usage-first.jsonl")
    first = replies(events)[0]
    assert [b["type"] for b in first["message"]["content"]] == ["text", "tool_use"]
    assert (first["usage"]["input_tokens"], first["usage"]["output_tokens"]) == (200, 100)
    assert stats.warnings == []


def test_usage_falls_back_to_the_entry() -> None:
    events, _ = imported(TRIALS / "04b-old-cli-entry-level-usage.jsonl")
    usage = replies(events)[0]["usage"]
    assert usage == {"input_tokens": 11, "output_tokens": 2, "cache_read_input_tokens": 4000}
    assert of_type(events, "turn_completed")[0]["data"]["usage"] == {
        "input_tokens": 11,
        "output_tokens": 2,
    }


def test_lines_without_ids_chained_by_parent_form_one_reply() -> None:
    events, _ = imported(TRIALS / "04c-sdk-no-id-no-model.jsonl")
    assert [[b["type"] for b in r["message"]["content"]] for r in replies(events)] == [
        ["text", "tool_use"],
        ["text"],
    ]
    assert [t["status"] for t in list_turns(events)] == ["completed"]


def test_a_repeated_key_keeps_the_last_value() -> None:
    events, stats = imported(TRIALS / "05b-literal-duplicate-key.jsonl")
    assert len(replies(events)) == 2 and len(of_type(events, "tool_called")) == 1
    assert warnings(stats) == [
        (2, "import_repaired", "duplicate_key"),
        (4, "import_repaired", "duplicate_key"),
    ]
    with pytest.raises(CaseError) as exc:
        imported(TRIALS / "05b-literal-duplicate-key.jsonl", strict=True)
    assert exc.value.code == "import_invalid" and exc.value.location.line == 2


@pytest.mark.parametrize(
    "name", ["09a-manual-compact-detached-boundary.jsonl", "09b-auto-compact-mid-turn.jsonl"]
)
def test_compaction_never_starts_or_splits_a_turn(name: str) -> None:
    events, _ = imported(TRIALS / name)
    turns = list_turns(events)
    assert all(t["status"] == "completed" for t in turns)
    assert not any(t["text"].startswith("This session is being continued") for t in turns)
    assert len(of_type(events, "x_claude_code.compact_summary")) == 1
    boundary = [e for e in of_type(events, "x_claude_code.system") if e["data"]["subtype"]]
    assert boundary[0]["data"]["subtype"] == "compact_boundary"
    if name.startswith("09b"):
        assert len(turns) == 1 and turns[0]["tools"] == ["Bash", "Edit"]
    else:
        assert [t["text"] for t in turns] == [
            "Write fib.py with a fib(n) function.",
            "Add a docstring to fib.",
        ]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("11a-cut-record-joined-next.jsonl", [(2, "import_skipped", "cut_record")]),
        ("11b-two-records-joined.jsonl", [(8, "import_repaired", "joined_records")]),
        ("11c-nul-run-then-record.jsonl", [(4, "import_repaired", "nul_bytes")]),
    ],
)
def test_damaged_lines_are_recovered_or_skipped_with_a_warning(
    name: str, expected: list[tuple[int, str, str]]
) -> None:
    events, stats = imported(TRIALS / name)
    assert warnings(stats) == expected
    turns = list_turns(events)
    assert [t["status"] for t in turns] == ["completed", "completed"]
    assert [t["tools"] for t in turns] == [["Bash"], ["Bash"]]
    with pytest.raises(CaseError):
        imported(TRIALS / name, strict=True)


def test_big_integers_become_the_javascript_number() -> None:
    events, stats = imported(TRIALS / "16b-big-integer-in-tool-input.jsonl")
    assert of_type(events, "tool_called")[0]["data"]["input"] == {"post_id": "1234567890123456800"}
    assert warnings(stats) == [(2, "import_repaired", "big_integer")]
    events, stats = imported(TRIALS / "16d-codex-args-big-int.jsonl")
    call = of_type(events, "tool_called")[0]["data"]
    assert call["input"] == {"issue_id": "1234567890123456800", "fields": ["title"]}
    assert warnings(stats) == [(5, "import_repaired", "big_integer")]


def test_a_lone_surrogate_becomes_u_fffd() -> None:
    events, stats = imported(TRIALS / "X1-lone-surrogate-escape.jsonl")
    result = of_type(events, "tool_result")[0]["data"]["content"]
    assert result == "Release 2 \ufffd\u2026 [output truncated]"
    # one warning per string repaired, each naming where it was (the same line holds the
    # tool result twice: in the message and in Claude Code's toolUseResult copy)
    assert [(w.line, w.reason, w.message) for w in stats.warnings] == [
        (3, "lone_surrogate", "lone surrogate replaced by U+FFFD at /message/content/0/content"),
        (3, "lone_surrogate", "lone surrogate replaced by U+FFFD at /toolUseResult"),
    ]


# --------------------------------------------------------------------------- realistic sessions
def test_realistic_sessions_turns_and_warnings() -> None:
    events, stats = imported(REALISTIC / "cc-rewind-edited-message.jsonl")
    assert [t["text"][:14] for t in list_turns(events)] == [
        "Why does `make",
        "Actually, only",
        "Thanks.",
    ]
    first = replies(events)[0]["message"]["content"]
    assert first[0] == {"type": "text", "text": "Let me look at the Makefile first."}
    assert replies(events)[2]["usage"]["output_tokens"] == 41  # the zero placeholder lost

    events, stats = imported(REALISTIC / "cc-resumed-twice.jsonl")
    assert [t["status"] for t in list_turns(events)] == ["completed", "failed", "completed"]
    assert replies(events)[0]["usage"] == {"input_tokens": 14, "output_tokens": 33}

    events, stats = imported(REALISTIC / "cc-crash-damaged.jsonl")
    assert [t["status"] for t in list_turns(events)] == ["completed"] * 3
    assert {w[2] for w in warnings(stats)} == {
        "big_integer",
        "lone_surrogate",
        "duplicate_key",
        "cut_record",
        "nul_bytes",
        "invalid_utf8",
        "joined_records",
    }
    assert warnings(stats)[-1] == (10, "import_skipped", "nul_bytes")  # the trailing block

    events, _ = imported(REALISTIC / "codex-rollout-totals-reasoning.jsonl")
    thinking = [
        b for r in replies(events) for b in r["message"]["content"] if b["type"] == "thinking"
    ]
    assert thinking[0]["thinking"].startswith("The station id is too big")
    assert [r["usage"]["input_tokens"] for r in replies(events)] == [2000, 2100, 2200]


def all_transcripts() -> list[Path]:
    return sorted([*TRIALS.glob("*.jsonl"), *REALISTIC.glob("*.jsonl")])


def test_at_least_six_realistic_sessions() -> None:
    assert len(list(REALISTIC.glob("*.jsonl"))) >= 6


def test_every_completed_turn_saves_and_passes_on_both_implementations(tmp_path: Path) -> None:
    """Import each transcript (a strict log), save every completed turn, run them all."""
    saved: list[str] = []
    for src in all_transcripts():
        log = tmp_path / f"{src.stem}.jsonl"
        import_to_file(fmt_of(src), src, log)
        assert validate_log(log) == []
        saved += save_turns(log, tmp_path / "cases", f"{src.stem[:40]}-", completed=True)
    assert len(saved) >= 25
    verdicts = run_both(tmp_path / "cases", tmp_path)
    for name in saved:
        for impl in IMPLEMENTATIONS:
            r = verdicts[(name, impl)]
            assert r["verdict"] == "pass", r


def test_cli_lists_every_repair_in_json_and_verbose(tmp_path: Path) -> None:
    src = REALISTIC / "cc-crash-damaged.jsonl"
    p = cli("import", "claude-code", src, "-o", "t.jsonl", "--format", "json", "-v", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["turns"] == 3 and out["output"] == "t.jsonl"
    assert {w["code"] for w in out["warnings"]} == {"import_repaired", "import_skipped"}
    assert all(set(w) == {"line", "code", "reason", "message"} for w in out["warnings"])
    assert p.stderr == ""  # in the JSON, said once (spec/importers.md section 4)
    p = cli("import", "claude-code", src, "-o", "t.jsonl", "-v", cwd=tmp_path)
    lines = [x for x in p.stderr.splitlines() if x.startswith("warning[")]
    assert len(lines) == len(out["warnings"])
    assert lines[-1].startswith(f"warning[import_skipped]: {src}:10: nul_bytes: ")
    p = cli("import", "claude-code", src, "-o", "s.jsonl", "--strict", cwd=tmp_path)
    assert p.returncode == 1 and p.stderr.startswith(f"error[import_invalid]: {src}:2: ")
    assert not (tmp_path / "s.jsonl").exists()


# --------------------------------------------------------------------------- the reader
def test_js_integer_matches_javascript() -> None:
    assert js_integer("1234567890123456789") == "1234567890123456800"
    assert js_integer("9007199254740993") == "9007199254740992"
    assert js_integer("-9007199254740993") == "-9007199254740992"
    assert js_integer("123456789012345678901234") == 1.2345678901234568e23


records = st.dictionaries(
    st.text(min_size=1, max_size=5),
    st.one_of(st.integers(-(2**53) + 1, 2**53 - 1), st.text(max_size=8), st.booleans()),
    max_size=4,
).map(lambda d: {**d, "type": "user"})


@given(st.lists(records, min_size=1, max_size=4), st.integers(0, 40))
@settings(max_examples=60, deadline=None)
def test_joined_records_after_nul_runs_are_all_recovered(
    values: list[dict[str, Any]], nuls: int
) -> None:
    body = b"\x00" * nuls + b"".join(canonical_line(v) for v in values)
    got, notes = read_line(body)
    assert got == values
    reasons = {n.reason for n in notes}
    assert ("joined_records" in reasons) == (len(values) > 1)
    assert ("nul_bytes" in reasons) == (nuls > 0)


@given(records, st.integers(1, 30))
@settings(max_examples=60, deadline=None)
def test_a_cut_record_before_a_whole_one_is_skipped_and_the_whole_one_kept(
    value: dict[str, Any], cut: int
) -> None:
    whole = canonical_line(value)
    head = whole[: max(1, len(whole) - cut)]
    got, notes = read_line(head + whole)
    assert got[-1] == value
    if len(got) == 1:  # a cut through a multi-byte character also leaves invalid UTF-8
        assert "cut_record" in {n.reason for n in notes}
        assert {n.reason for n in notes} <= {"cut_record", "invalid_utf8"}


def test_a_whole_line_nested_too_deep_is_too_deep_not_a_cut_record(tmp_path: Path) -> None:
    """50,000 levels: a whole record no reader follows is skipped as too_deep (a trial's
    line was reported as "a record cut short"); the import goes on."""
    deep = '{"type":"user","x":' + "[" * 50_000 + "]" * 50_000 + "}"
    got, notes = read_line(deep.encode())
    assert got == [] and [(n.code, n.reason, n.at_end) for n in notes] == [
        ("import_skipped", "too_deep", False)
    ]
    session = Path(__file__).resolve().parents[1] / "examples" / "sessions"
    src = (session / "claude-code-session.jsonl").read_text().splitlines()
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join([*src[:3], deep, *src[3:]]) + "\n")
    p = cli("import", "claude-code", path, "-o", tmp_path / "out.jsonl", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "warning[import_skipped]: " in p.stderr and "t.jsonl:4: too_deep: " in p.stderr


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_codex_exec_mcp_arguments_with_a_big_integer_parse_as_an_object(tmp_path: Path) -> None:
    args = '{"ticket": 12345678901234567890, "ticket": 7, "tags": ["a"]}'
    item = {
        "id": "item_1",
        "type": "mcp_tool_call",
        "server": "tracker",
        "tool": "get",
        "arguments": args,
        "result": {"content": [{"type": "text", "text": "ok"}]},
        "status": "completed",
    }
    f = write(
        tmp_path / "codex-exec.jsonl",
        [
            json.dumps({"type": "thread.started", "thread_id": "th-1"}),
            json.dumps({"type": "turn.started"}),
            json.dumps({"type": "item.completed", "item": item}),
            json.dumps(
                {
                    "type": "item.completed",
                    "item": {"id": "i2", "type": "agent_message", "text": "done"},
                }
            ),
            json.dumps(
                {"type": "turn.completed", "usage": {"input_tokens": 5, "output_tokens": 2}}
            ),
        ],
    )
    events, stats = imported(f, prompt="get the ticket")
    assert of_type(events, "tool_called")[0]["data"]["input"] == {"ticket": 7, "tags": ["a"]}
    assert warnings(stats) == [
        (3, "import_repaired", "big_integer"),
        (3, "import_repaired", "duplicate_key"),
    ]
    assert [t["status"] for t in list_turns(events)] == ["completed"]


def test_codex_reasoning_from_content_and_usage_from_totals(tmp_path: Path) -> None:
    def line(t: str, payload: dict[str, Any]) -> str:
        return json.dumps({"timestamp": "2026-04-17T11:00:00.000Z", "type": t, "payload": payload})

    def totals(i: int, o: int) -> str:
        usage = {"input_tokens": i, "output_tokens": o, "total_tokens": i + o}
        return line("event_msg", {"type": "token_count", "info": {"total_token_usage": usage}})

    f = write(
        tmp_path / "codex-rollout.jsonl",
        [
            line("session_meta", {"id": "s-1", "cwd": "/w"}),
            line("response_item", {"type": "message", "role": "user", "content": "hi"}),
            line(
                "response_item",
                {
                    "type": "reasoning",
                    "summary": [],
                    "content": [{"type": "reasoning_text", "text": "greet"}],
                },
            ),
            line("response_item", {"type": "message", "role": "assistant", "content": "hello"}),
            totals(100, 10),
            totals(100, 10),  # a repeated count changes nothing
            line("response_item", {"type": "message", "role": "user", "content": "again"}),
            line(
                "response_item", {"type": "message", "role": "assistant", "content": "hello again"}
            ),
            totals(250, 14),
        ],
    )
    events, _ = imported(f)
    assert replies(events)[0]["message"]["content"][0] == {"type": "thinking", "thinking": "greet"}
    assert [(r["usage"]["input_tokens"], r["usage"]["output_tokens"]) for r in replies(events)] == [
        (100, 10),
        (150, 4),
    ]


@pytest.fixture(scope="module")
def writers() -> Iterator[list[DriverImplementation]]:
    """The Python and the TypeScript driver, started once for the files below (each request
    is answered on its own: a driver keeps nothing between ``write_case`` requests)."""
    drivers = reference_drivers()
    yield drivers
    for drv in drivers:
        drv.close()


@pytest.mark.xdist_group("import-trials-writers")  # one worker starts the two drivers
@pytest.mark.parametrize(
    "name",
    [
        "trials/09b-auto-compact-mid-turn.jsonl",
        "realistic/cc-compaction-auto-and-manual.jsonl",
        "realistic/cc-crash-damaged.jsonl",
    ],
)
def test_both_writers_save_imported_turns_byte_for_byte(
    name: str, writers: list[DriverImplementation]
) -> None:
    """A turn holding x_ extension events (compaction records) saves to the same bytes from
    the Python and the TypeScript writer."""
    events, _ = imported(HERE / "importers" / name)
    for t in list_turns(events):
        if t["status"] != "completed":
            continue
        outputs = []
        for drv in writers:
            d = get_dialect(drv.dialect)
            answer = drv.request(
                {
                    "cmd": "write_case",
                    "thread": {
                        "log": [d.encode_event(e) for e in events],
                        "dialect": drv.dialect,
                        "artifacts": {},
                        "portable": True,
                    },
                    "name": "imported",
                    "at": fork_point(events, t["index"]),
                    "expect": draft_matchers(events, t["index"]),
                    "external_effects": "stub",
                }
            )
            assert "files" in answer, answer
            outputs.append({k: base64.b64decode(v) for k, v in answer["files"].items()})
        assert outputs[0] == outputs[1], (name, t["index"])
