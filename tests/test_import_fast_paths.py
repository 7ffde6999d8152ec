"""More of the importers' fast paths give the answers of the general code they skip (issues
31 and 37): the sampled test for integers orjson cannot read exactly, the minute table of
event times, the emitter's times (never matched against the schema's pattern again), and
Claude Code's pass 1 dropping ``toolUseResult`` before it holds a record."""

from __future__ import annotations

import random
from pathlib import Path

import orjson
import pytest

from threads_cases.core import timestamps
from threads_cases.core.timestamps import MAX_MS, MIN_MS, check_ts, format_ts, valid_ts_ms
from threads_cases.importers import import_to_file
from threads_cases.importers.emitter import TS_FORM
from threads_cases.importers.lenient import _DIGITS, _RUN, long_integer_in

ROOT = Path(__file__).resolve().parent.parent
SESSION = ROOT / "examples" / "sessions" / "claude-code-session.jsonl"


def _whole(data: bytes) -> bool:
    """The test the sample stands for: 20 digits in a row anywhere."""
    return _RUN in data.translate(_DIGITS)


@pytest.mark.parametrize(
    "alphabet",
    [b"0123456789", b"0123456789a", b"01234567890123456789x", b"ab1", b'1234567890,"e.-'],
)
def test_the_sampled_long_integer_test_is_the_whole_one(alphabet: bytes) -> None:
    rng = random.Random(alphabet)
    for _ in range(3000):
        data = bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 120)))
        assert long_integer_in(data) is _whole(data), data
        assert long_integer_in(data.decode()) is _whole(data)


@pytest.mark.parametrize(
    "data",
    [
        b"9" * 20,
        b"x" + b"9" * 20,
        b"xy" + b"9" * 20 + b"z",
        b"xyz" + b"9" * 21,
        b"1" * 19 + b"x" + b"1" * 19,
        # many places of 5 sampled digits in a row, none a run of 20: the local checks give
        # way to the whole text, whose answer is the whole test's
        (b"1234a" * 4 + b"x") * 200,
        (b"1234a" * 4 + b"x") * 200 + b"7" * 20,
        (b"1234567890123456789x") * 300,
    ],
)
def test_the_sampled_long_integer_test_at_its_edges(data: bytes) -> None:
    assert long_integer_in(data) is _whole(data)


def test_the_minute_table_gives_the_times_the_day_table_gives() -> None:
    check_ts("2025-10-09T08:53:21.630Z")  # a known day
    rng = random.Random(5)
    chars = "0123456789-T:.Z x"
    for _ in range(20000):
        ts = list("2025-10-09T08:53:21.630Z")
        for _ in range(rng.randint(0, 3)):
            k = rng.randrange(len(ts))
            op = rng.random()
            if op < 0.4:
                ts[k] = rng.choice(chars)
            elif op < 0.7:
                ts.insert(k, rng.choice(chars))
            else:
                del ts[k]
        text = "".join(ts)
        days = timestamps._KNOWN_DAYS.get(text[:10])
        parts = [
            timestamps._HOUR_MINUTE.get(text[10:16]),
            timestamps._SECOND.get(text[16:20]),
            timestamps._MILLI.get(text[20:23]),
        ]
        if days is None or None in parts or text[23:] != "Z":
            want = None
        else:
            hm, sec, milli = parts
            assert hm is not None and sec is not None and milli is not None
            want = (days * 86400 + hm + sec) * 1000 + milli
        assert valid_ts_ms(text) == want, text


def test_every_time_the_emitter_formats_keeps_the_schema_pattern() -> None:
    rng = random.Random(6)
    edges = [MIN_MS, MAX_MS, 0, -1, 86_399_999, 951_782_400_000, 253_402_300_799_999]
    for ms in edges + [rng.randint(MIN_MS, MAX_MS) for _ in range(20000)]:
        text = format_ts(ms)
        assert TS_FORM.fullmatch(text), text
        assert check_ts(text) == ms  # a real date, read back as the same time


def test_tool_use_results_dropped_by_pass_1_change_no_byte(tmp_path: Path) -> None:
    """The log of a session is the same with and without the ``toolUseResult`` copies."""
    lines = SESSION.read_bytes().splitlines()
    stripped = []
    for line in lines:
        value = orjson.loads(line)
        if isinstance(value, dict):
            value.pop("toolUseResult", None)
        stripped.append(orjson.dumps(value))
    assert stripped != lines  # the session holds some
    bare = tmp_path / "bare.jsonl"
    bare.write_bytes(b"\n".join(stripped) + b"\n")
    import_to_file("claude-code", SESSION, tmp_path / "a.jsonl")
    import_to_file("claude-code", bare, tmp_path / "b.jsonl")
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()


def _refs(value: object) -> list[str]:
    if isinstance(value, dict):
        out = [value["$ref"]] if isinstance(value.get("$ref"), str) else []
        return out + [r for v in value.values() for r in _refs(v)]
    if isinstance(value, list):
        return [r for v in value for r in _refs(v)]
    return []


def test_the_event_validators_need_the_event_schema_alone() -> None:
    """compiled_event_validators reads event.schema.json alone: it names no other file."""
    from threads_cases.core import schemas

    doc = schemas._event_document()
    assert doc == schemas._documents()["event.schema.json"]
    refs = _refs(doc)
    assert refs and all(r.startswith("#/") for r in refs)


@pytest.mark.parametrize(
    "change",
    [
        {},
        {"type": "x_tool.note"},
        {"type": "x_"},
        {"type": "x_" + "a" * 121},
        {"type": "nothing_known"},
        {"data": []},
        {"event_id": "bad id"},
        {"seq": -1},
        {"actor_kind": "robot"},
        {"critical": 0},
        {"extra": 1},
    ],
)
def test_an_extension_event_is_valid_as_the_whole_event_schema_says(change: dict) -> None:
    """The emitter checks an ``x_`` event with the envelope's validator only: its answer is
    the whole event schema's for the events the emitter writes (a real ``ts``)."""
    from threads_cases.core.schemas import compiled_event_validators, fast_validator

    ev = {
        "event_id": "e.x",
        "thread_id": "t",
        "seq": 3,
        "type": "x_claude_code.system",
        "actor_kind": "system",
        "epoch": 0,
        "branch_id": "main",
        "critical": False,
        "ts": "2026-03-02T09:00:00.000Z",
        "data": {"content": "hi", "n": 1.5},
        **change,
    }
    whole = fast_validator("event.schema.json", "event.threads-py").is_valid(ev)
    assert compiled_event_validators()[1].is_valid(ev) is whole


class _Count(int):
    """An int subclass: usage_of keeps it, usage_problems names it."""


@pytest.mark.parametrize(
    "raw",
    [
        {"input_tokens": 3, "output_tokens": 4},
        {"input_tokens": 3},
        {"input_tokens": -1, "output_tokens": 5},
        {"input_tokens": True, "output_tokens": 5},
        {"input_tokens": 1.0, "output_tokens": 5},
        {"input_tokens": 2**53, "output_tokens": 5},
        {"input_tokens": _Count(3), "output_tokens": 5},
        {"input_tokens": 3, "output_tokens": 4, "service_tier": "standard"},
        {"input_tokens": 3, "output_tokens": 4, "detail": {"a": 1}},
        {},
        None,
        [1],
    ],
)
def test_a_usage_kept_whole_has_no_problem_to_warn_of(raw: object) -> None:
    """The emitter skips the usage warning when usage_kept kept every value."""
    from threads_cases.importers.common import usage_problems
    from threads_cases.importers.emitter import usage_kept, usage_of

    out, every = usage_kept(raw)
    assert out == usage_of(raw)
    if every:
        assert usage_problems(raw) == []
