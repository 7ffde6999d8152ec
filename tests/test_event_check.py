"""The compiled check of a log line (threads_cases/core/eventcheck.py) answers as the rules
one by one do: a line it accepts is one the exact path accepts, with the same envelope; the
ts calendar pattern inside it is exactly :func:`timestamp_problem`; orjson spells every
double the number rule refuses in a way its byte scan sees; and the block reader cuts lines
as the line rules say (spec/thread-log.md 5, spec/strict-json.md 3)."""

from __future__ import annotations

import base64
import io
import itertools
import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from threads_cases.core import strictjson
from threads_cases.core.canonical import canonical_line
from threads_cases.core.errors import CaseError
from threads_cases.core.eventcheck import LogChecker, _sixteen_digits, check_line_value
from threads_cases.core.strictjson import iter_lines, parse
from threads_cases.core.timestamps import CALENDAR_PATTERN, timestamp_problem

ROOT = Path(__file__).resolve().parent.parent
REDUCE = sorted((ROOT / "spec" / "conformance" / "reduce").glob("*.json"))
CORPUS = sorted((ROOT / "tests" / "badinput" / "logs").glob("*.jsonl"))


def _log_lines(case: dict[str, Any]) -> list[bytes]:
    if "log_text" in case:
        data = str(case["log_text"]).encode("utf-8")
    elif "log_base64" in case:
        data = base64.b64decode(case["log_base64"])
    else:
        data = b"".join(canonical_line(ev) + b"\n" for ev in case["log"])
    return data.split(b"\n")


def _logs() -> list[tuple[str, str, list[bytes]]]:
    out = []
    for path in REDUCE:
        case = orjson.loads(path.read_bytes())
        out.append((path.name, case["dialect"], _log_lines(case)))
    for path in CORPUS:
        out.append((path.name, "threads-py", path.read_bytes().split(b"\n")))
    return out


def _exact(checker: LogChecker, body: bytes) -> dict[str, Any] | CaseError:
    try:
        raw = parse(body, code="log_invalid")
        check_line_value(body, raw)
        return checker.check(raw)
    except CaseError as exc:
        return exc


@pytest.mark.parametrize("name,dialect,lines", _logs(), ids=[n for n, _, _ in _logs()])
def test_the_compiled_check_accepts_only_what_the_rules_accept(
    name: str, dialect: str, lines: list[bytes]
) -> None:
    fast, exact = LogChecker(dialect), LogChecker(dialect)
    for body in lines:
        if not body.strip() or body.endswith(b"\r"):
            continue
        try:
            orjson.loads(body)
        except orjson.JSONDecodeError:
            continue
        got = fast.fast_line(body)
        want = _exact(exact, body)
        if got is not None:
            assert not isinstance(want, CaseError), (name, body, want)
            assert got == want
        elif isinstance(want, CaseError):
            return  # the log stops at its first refusal; the checkers' counts part here
        else:
            # a valid line the compiled check passed on: the exact path moved the counts
            fast._thread_id, fast._next_seq = exact._thread_id, exact._next_seq
            assert fast._ids is not None
            fast._ids.add(want["event_id"])
        assert (fast._thread_id, fast._next_seq) == (exact._thread_id, exact._next_seq)


def test_valid_conformance_logs_take_the_compiled_check() -> None:
    taken = passed_on = 0
    for path in REDUCE:
        case = orjson.loads(path.read_bytes())
        if "error" in case or case["dialect"] != "threads-py":
            continue
        checker = LogChecker()
        for body in _log_lines(case):
            if body:
                if checker.fast_line(body) is None:
                    passed_on += 1
                    checker.check(orjson.loads(body))
                else:
                    taken += 1
    assert taken > 100 and passed_on <= taken // 20, (taken, passed_on)


def _ts_samples() -> list[str]:
    years = ["0000", "0001", "0004", "0100", "0400", "1900", "2000", "2023", "2024", "2100"]
    years += ["2400", "9996", "9999"]
    dates = [f"{y}-{m:02d}-{d:02d}" for y in years for m in range(0, 14) for d in range(0, 33)]
    times = ["00:00:00.000", "23:59:59.999", "24:00:00.000", "12:60:00.000", "12:00:60.000"]
    out = [f"{d}T{t}Z" for d, t in itertools.product(dates, times[:1])]
    out += [f"2024-02-29T{t}Z" for t in times]
    out += ["2024-02-29T00:00:00.000z", "2024-02-29T00:00:00.00Z", "2024-02-29 00:00:00.000Z"]
    out += ["2024-02-29T00:00:00.000Z\n", "12024-02-29T00:00:00.000Z", "2024-1-01T00:00:00.000Z"]
    return out


def test_the_calendar_pattern_is_the_ts_rule() -> None:
    pattern = re.compile(CALENDAR_PATTERN.replace("$", r"\Z"))  # ECMA's $: the end only
    for ts in _ts_samples():
        assert (pattern.search(ts) is not None) == (timestamp_problem(ts) is None), ts


def test_the_compiled_validators_hold_the_calendar_rule() -> None:
    """jsonschema-rs's regular expressions answer as Python's on the same samples."""
    checker = LogChecker()
    base = {
        "event_id": "e0",
        "thread_id": "t",
        "seq": 0,
        "type": "x_note",
        "actor_kind": "system",
        "epoch": 0,
        "branch_id": "main",
        "critical": False,
        "data": {},
    }
    for ts in _ts_samples()[::7] + _ts_samples()[-12:]:
        ev = {**base, "ts": ts}
        assert checker._extension.is_valid(ev) == (timestamp_problem(ts) is None), ts


@settings(max_examples=400, deadline=None)
@given(st.floats(min_value=2.0**53, max_value=1e21, exclude_max=True))
def test_orjson_spells_every_unwritable_double_so_the_scan_sees_it(x: float) -> None:
    for value in (x, -x):
        text = orjson.dumps({"n": [value]})
        assert b"e+" in text or re.search(rb"[0-9]{16}\.0", text), text


def _reference_lines(data: bytes, limit: int) -> list[tuple[int, bytes | str]]:
    """The line rules read with readline (the reader before the block reader)."""
    fh, out, lineno = io.BytesIO(data), [], 0
    while raw := fh.readline(limit + 2):
        lineno += 1
        if len(raw) > limit + 1 or (len(raw) == limit + 1 and not raw.endswith(b"\n")):
            while raw and not raw.endswith(b"\n"):
                raw = fh.readline(limit)
            out.append((lineno, "long"))
            continue
        body = raw[:-1] if raw.endswith(b"\n") else raw
        if body.endswith(b"\r"):
            out.append((lineno, "cr"))
        elif lineno == 1 and body.startswith(b"\xef\xbb\xbf"):
            out.append((lineno, "bom"))
        elif not body.strip():
            out.append((lineno, "blank"))
        else:
            out.append((lineno, body))
    return out


_KINDS = {"line longer": "long", "CR line": "cr", "byte order": "bom", "blank line": "blank"}


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from([b"{}", b'{"a":1}', b"x" * 9, b"\r", b" ", b"\xef\xbb\xbf{}", b""])
    ).map(lambda parts: b"\n".join(parts)),
    st.integers(min_value=1, max_value=12),
    st.integers(min_value=1, max_value=40),
)
def test_the_block_reader_cuts_lines_as_the_line_rules_say(
    data: bytes, block: int, limit: int
) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(strictjson, "_BLOCK", block)
        mp.setattr(strictjson, "MAX_LINE_BYTES", limit)
        got = []
        for lineno, body in iter_lines(io.BytesIO(data)):
            if isinstance(body, CaseError):
                kind = next(k for m, k in _KINDS.items() if body.message.startswith(m))
                got.append((lineno, kind))
            else:
                got.append((lineno, body))
    assert got == _reference_lines(data, limit)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([b"1", b"9", b".", b"0", b".0", b"12345678", b'"', b","])))
def test_the_sixteen_digit_scan_is_the_pattern(parts: list[bytes]) -> None:
    text = b"".join(parts)
    assert _sixteen_digits(text) == (re.search(rb"[0-9]{16}\.0", text) is not None)
