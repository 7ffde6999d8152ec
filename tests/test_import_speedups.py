"""The importer's fast paths give the answers of the general code they skip (issue 20):
the request hash from orjson's bytes of plain messages, the table look-ups for event times,
and the one-round-trip strict reader."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

import threads_cases.importers.request_hash as request_hash
from threads_cases.core.errors import CaseError
from threads_cases.core.strictjson import parse
from threads_cases.core.timestamps import check_ts, valid_ts_ms
from threads_cases.importers import import_events
from threads_cases.importers.common import parse_ts_ms

HERE = Path(__file__).parent / "importers"
SAMPLES = [
    HERE / "claude-code-parallel.jsonl",
    HERE / "realistic" / "cc-sidechain-task-agent.jsonl",
    HERE / "realistic" / "cc-compaction-auto-and-manual.jsonl",
]


def _hashes(path: Path) -> list[str]:
    return [
        e["data"]["request_sha256"]
        for e in import_events("claude-code", path)
        if e["type"] == "model_requested"
    ]


def _with_floats(src: Path, dst: Path) -> Path:
    """``src`` with floats in the first tool input: its events are no longer plain."""
    out = []
    done = False
    for line in src.read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        content = obj.get("message", {}).get("content") if isinstance(obj, dict) else None
        if not done and obj.get("type") == "assistant" and isinstance(content, list):
            for b in content:
                if b.get("type") == "tool_use":
                    b["input"] = {**b["input"], "ratio": 0.1, "big": 1e21, "tiny": 5e-324}
                    done = True
        out.append(json.dumps(obj, ensure_ascii=False, separators=(",", ":")))
    assert done
    dst.write_text("\n".join(out) + "\n", encoding="utf-8")
    return dst


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_request_hashes_from_orjson_equal_the_canonical_ones(
    sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    floats = _with_floats(sample, tmp_path / "floats.jsonl")
    fast = {p: _hashes(p) for p in (sample, floats)}
    original = request_hash.RequestHasher.__init__

    def never_plain(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        self.plain = False

    monkeypatch.setattr(request_hash.RequestHasher, "__init__", never_plain)
    for p in (sample, floats):
        assert fast[p] and _hashes(p) == fast[p]
    assert fast[sample] != fast[floats]  # the floats are hashed, in their JCS form


def test_a_bad_time_of_day_on_a_known_day_is_still_refused() -> None:
    assert check_ts("2025-09-14T10:00:05.123Z") == 1757844005123
    assert valid_ts_ms("2025-09-14T10:00:06.000Z") == 1757844006000  # the day is known now
    for bad, why in (
        ("2025-09-14T24:00:00.000Z", "hour 24"),
        ("2025-09-14T10:60:00.000Z", "minute 60"),
        ("2025-09-14T10:00:60.000Z", "second 60"),
        ("2025-09-14T10:00:00.000ZZ", "YYYY-MM-DDTHH:MM:SS.mmmZ"),
        ("2025-09-14T10:00:00.12Z", "YYYY-MM-DDTHH:MM:SS.mmmZ"),
        ("2025-09-14T10:00:00.\u0663\u0663\u0663Z", "YYYY-MM-DDTHH:MM:SS.mmmZ"),
    ):
        assert valid_ts_ms(bad) is None
        with pytest.raises(CaseError) as exc:
            check_ts(bad)
        assert exc.value.code == "log_invalid" and why in exc.value.message
    # the importer's reader takes the same fast path and still reads other spellings
    assert parse_ts_ms("2025-09-14T10:00:06.000Z") == 1757844006000
    assert parse_ts_ms("2025-09-14T12:00:06+02:00") == 1757844006000
    assert parse_ts_ms("2025-09-14T24:00:00.000Z") is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b'{"a":1,"a":2}', "duplicate key 'a'"),
        (b'{"a":9007199254740992}', "outside +-(2^53-1)"),
        (b'{"a":123456789012345678901234}', "outside +-(2^53-1)"),
        (b'{"a\\u003a":1,"a:":2}', "duplicate key 'a:'"),
        (b"[" * 257 + b"]" * 257, "nesting deeper than 256"),
    ],
)
def test_the_one_round_trip_reader_still_refuses(text: bytes, message: str) -> None:
    with pytest.raises(CaseError) as exc:
        parse(text, code="log_invalid", file="f.jsonl", line=7)
    err = exc.value
    assert err.code == "log_invalid" and message in err.message and err.location.line == 7


@pytest.mark.parametrize(
    "text",
    [
        b'{"a":9007199254740991,"b":-9007199254740991}',
        b'{"a":1e21,"b":12345678901234567.0,"c":"12345678901234567890"}',
        b"[" * 256 + b"]" * 256,
    ],
)
def test_the_one_round_trip_reader_still_accepts(text: bytes) -> None:
    assert parse(text) == json.loads(text)


@pytest.mark.parametrize("chunk", [1, 7, 64, 1 << 19])
def test_chunked_lines_are_the_lines_of_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """Both passes read the file in chunks (TranscriptSource._spans): every line, across
    chunk ends, longer than several chunks, blank, ending in CR LF or in no newline at all,
    is the line iterating the file gives (without its newline), and an import of the sample
    cut into such chunks gives the same events."""
    import threads_cases.importers.source as source

    data = b'{"a":1}\n\n{"b":"' + b"x" * 200 + b'"}\r\n  \n{"c":[1,2]}\n{"d":0}'
    path = tmp_path / "lines.jsonl"
    path.write_bytes(data)
    want = [(n, line.rstrip(b"\n")) for n, line in enumerate(data.splitlines(True), 1)]
    monkeypatch.setattr(source, "CHUNK", chunk)
    src = source.TranscriptSource(path)
    got = [(n, bytes(view[a:b])) for n, _, view, a, b in src._spans()]
    assert got == want
    sample = SAMPLES[0]
    chunked = import_events("claude-code", sample)
    monkeypatch.setattr(source, "CHUNK", 1 << 19)
    assert chunked == import_events("claude-code", sample)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b'{\n  "a": 1,\n  "a": 2\n}\n', "duplicate key 'a'"),
        (b'{\n  "a": 9007199254740992\n}\n', "outside +-(2^53-1)"),
        (b'{\n  "a": 123456789012345678901234\n}\n', "outside +-(2^53-1)"),
        (b'{\n  "a\\u003a": 1,\n  "a:": 2\n}\n', "duplicate key 'a:'"),
        (b"[" * 257 + b"]" * 257 + b"\n", "nesting deeper than 256"),
    ],
)
def test_the_indented_round_trip_still_refuses(text: bytes, message: str) -> None:
    """A document as the tools write one is accepted by the indented round trip; these are
    refused as before (the round trip cannot give their bytes back)."""
    with pytest.raises(CaseError) as exc:
        parse(text, code="case_invalid", file="case.json")
    assert exc.value.code == "case_invalid" and message in exc.value.message


@pytest.mark.parametrize(
    "text",
    [
        b'{"a":9007199254740991,"b":-9007199254740991,"c":[{"d":null,"e":[]},{}]}',
        b'{"a":1e21,"b":12345678901234567.0,"c":"12345678901234567890"}',
        b'{"a:b":"c:d","\\u00e9":"\\ud83d\\ude00","n":-0.0,"f":1.5}',
        b"[" * 200 + b"]" * 200,
    ],
)
def test_an_indented_document_reads_as_the_walk_reads_it(
    text: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A document spelled as the tools write one (orjson, two-space indent, final newline)
    takes the indented round trip and reads as the walk reads it (forced by a round trip
    that never matches); Python's spelling of the same value takes the walk."""
    import threads_cases.core.strictjson as strictjson

    value = json.loads(text)
    ours = orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
    python = json.dumps(value, indent=2).encode() + b"\n"
    assert strictjson._writes_back(orjson.loads(ours), ours)
    fast = [parse(ours), parse(python)]
    monkeypatch.setattr(strictjson, "_writes_back", lambda value, data: False)
    assert fast == [parse(ours), parse(python)] == [value, value]


_BLOCKS: list[Any] = [
    {"type": "text", "text": "hi"},
    {"type": "text", "text": 3},
    {"type": "text"},
    {"type": "thinking", "thinking": "t"},
    {"type": "thinking", "thinking": None},
    {"type": "tool_use", "id": "c1", "name": "bash", "input": {"x": [1, 2.5]}},
    {"type": "tool_use", "id": "", "name": "bash", "input": {}},
    {"type": "tool_use", "id": "c1", "name": "", "input": {}},
    {"type": "tool_use", "id": "c1", "name": "bash", "input": "{}"},
    {"type": "tool_use", "id": "c1", "name": "bash"},
    {"type": "tool_result", "tool_use_id": "c1", "content": "ok", "is_error": False},
    {"type": "tool_result", "tool_use_id": "c1", "is_error": "no"},
    {"type": "image", "source": {"type": "url", "url": "u"}},
    {"type": "image", "source": "u"},
    {"type": "web_search_call", "action": {"q": 1}},
    {"type": ""},
    {"type": 1},
    {"text": "no type"},
    "text",
    None,
]


@pytest.mark.parametrize("block", _BLOCKS, ids=lambda b: json.dumps(b)[:40])
def test_blocks_the_emitter_does_not_check_again_are_ones_the_schema_accepts(
    block: Any,
) -> None:
    """blocks_certain decides when the schema's validator is skipped: whatever it accepts,
    the validators of model_responded, user_message and tool_result accept too."""
    from threads_cases.core.schemas import compiled_event_validators
    from threads_cases.importers.emitter import blocks_certain

    check = compiled_event_validators()[0]
    env = {
        "event_id": "L1.x",
        "thread_id": "t",
        "seq": 1,
        "actor_kind": "model",
        "epoch": 0,
        "branch_id": "main",
        "critical": False,
        "ts": "2026-01-01T00:00:00.000Z",
    }
    usage = {"input_tokens": 0, "output_tokens": 0}
    events = {
        "model_responded": {
            "turn_id": "t1",
            "message": {"role": "assistant", "content": [block]},
            "stop_reason": "end_turn",
            "usage": usage,
        },
        "user_message": {"content": [block]},
        "tool_result": {
            "turn_id": "t1",
            "tool_use_id": "c1",
            "name": "bash",
            "content": [block],
            "is_error": False,
        },
    }
    certain = blocks_certain([block])
    for etype, data in events.items():
        valid = check[etype].is_valid({**env, "type": etype, "data": data})
        assert valid or not certain, etype
    # the usual blocks are decided here, without the validator
    usual = ("text", "thinking", "tool_use", "web_search_call")
    if isinstance(block, dict) and block.get("type") in usual and valid:
        assert certain


_OUTPUTS = [
    '{"output":"ok","metadata":{"exit_code":0}}',
    '{"output":"no","metadata":{"exit_code":2}}',
    '{"metadata":{"exit_code":1},"metadata":{"exit_code":0}}',
    '{"metadata":{"exit_code":0},"metadata":{"exit_code":1}}',
    '{"metadata":{"exit_code":9007199254740993}}',
    '{"metadata":{"exit_code":18446744073709551617}}',
    '{"metadata":{"exit_code":1.0},"x":1,"x":2}',
    '{"success":false}',
    '{"success":false,"success":true}',
    '{"success":true,"success":false}',
    '\ufeff{"success":false}',
    '{"a":"\\ud800","success":false}',
    "[" * 300 + "]" * 300,
    '{"metadata":' + "[" * 300 + "]" * 300 + ',"success":false}',
    '{"metadata":{"exit_code":true}}',
    "plain text, not JSON",
    "",
]


@pytest.mark.parametrize("text", _OUTPUTS, ids=lambda t: t[:40])
def test_a_codex_output_is_an_error_as_the_strict_or_js_reading_says(text: str) -> None:
    """rollout_output skips the strict round trip for text orjson reads as reporting no
    error: the answer is still the one of the strict (else JSON.parse) reading."""
    from threads_cases.importers.codex.rollout import _reports_error, rollout_output
    from threads_cases.importers.codex.values import json_object

    assert rollout_output(text) == (text, _reports_error(json_object(text)))


_MORE_BLOCKS = [
    *_BLOCKS,
    {"type": "tool_result", "tool_use_id": "c1", "content": [{"type": "text", "text": "x"}]},
    {"type": "tool_result", "tool_use_id": "c1", "content": [{"type": "text"}]},
    {"type": "tool_result", "tool_use_id": "", "content": "ok"},
    {"type": "tool_result", "tool_use_id": "c1", "is_error": None},
    {"type": "tool_result", "tool_use_id": 1, "content": "ok"},
    {"type": "tool_use", "id": "", "name": "bash", "input": {}},
    {"type": "tool_use", "id": "c1", "name": "", "input": {}},
    {"type": "thinking", "thinking": 1},
    {"type": "text", "text": None},
]


@pytest.mark.parametrize("block", _MORE_BLOCKS, ids=lambda b: json.dumps(b)[:40])
def test_the_usual_block_is_one_the_full_block_check_accepts(block: Any) -> None:
    """claude_code._usual_block lets a block skip _block_problem: whatever it accepts,
    _block_problem accepts; and line_problem gives the answer it gave block by block."""
    from threads_cases.importers.claude_code import _block_problem, _usual_block, line_problem

    usual = isinstance(block, dict) and _usual_block(block)
    problem = _block_problem(block)
    assert problem is None or not usual
    usual_types = ("text", "thinking", "tool_use", "tool_result")
    if isinstance(block, dict) and block.get("type") in usual_types and problem is None:
        nested = block.get("type") == "tool_result" and isinstance(block.get("content"), list)
        assert usual or nested
    rec = {"type": "assistant", "message": {"role": "assistant", "content": [block]}}
    assert line_problem(rec) == (None if problem is None else f"message.content[0]{problem}")


@pytest.mark.parametrize(
    "record",
    [
        {"message": {"model": "m", "content": [{"type": "text", "text": "API Error: 500"}]}},
        {"message": {"model": "<synthetic>", "content": [{"type": "text", "text": " API Error"}]}},
        {"message": {"model": "<synthetic>", "content": [{"type": "text", "text": "No"}]}},
        {"message": {"model": "<synthetic>", "content": "API Error (429) rate"}},
        {"isApiErrorMessage": True, "message": {"model": "m", "content": "overloaded"}},
        {"isApiErrorMessage": 1, "message": {"model": "m", "content": "API Error"}},
        {"isApiErrorMessage": True, "error": "x", "message": {"content": []}},
    ],
)
def test_a_reply_is_an_api_error_as_the_full_test_says(record: dict[str, Any]) -> None:
    """api_error tells the usual reply by its flag and model before joining its text: the
    same answer as the test on the joined text."""
    from threads_cases.importers.claude_mapping import api_error, text_of

    msg = record["message"]
    text = text_of(msg["content"])
    synthetic = msg.get("model") == "<synthetic>" and text.lstrip().startswith("API Error")
    is_error = record.get("isApiErrorMessage") is True or synthetic
    data = api_error(record)
    assert (data is not None) == is_error
    if data is not None:
        assert data["text"] == text


def test_usage_keeps_the_counts_it_kept() -> None:
    """usage_of takes an exact int at once; a bool, a float, a negative or unsafe count and
    an int subclass are decided as before."""
    from threads_cases.importers.emitter import usage_of

    class Count(int):
        pass

    raw = {"input_tokens": 3, "a": True, "b": 1.0, "c": -1, "d": 2**53, "e": Count(4), "f": 0}
    assert usage_of(raw) == {"input_tokens": 3, "output_tokens": 0, "e": 4, "f": 0}
