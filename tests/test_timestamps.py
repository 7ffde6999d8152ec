"""Event timestamps (spec/thread-log.md 2.4): real calendar times in years 0001-9999, parsed and
formatted by hand so that both languages agree; checked against Python's datetime."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from threads_cases.core.errors import CaseError
from threads_cases.core.timestamps import (
    MAX_MS,
    MIN_MS,
    check_fork_room,
    check_ts,
    format_ts,
    parse_ts,
    timestamp_problem,
)

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@given(st.integers(MIN_MS, MAX_MS))
def test_format_agrees_with_datetime_and_round_trips(ms: int) -> None:
    text = format_ts(ms)
    dt = EPOCH + timedelta(milliseconds=ms)
    want = f"{dt.year:04d}-" + dt.strftime("%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"
    assert text == want
    assert check_ts(text) == parse_ts(text) == ms


@given(st.text(alphabet="0123456789", min_size=17, max_size=17))
def test_a_time_is_valid_exactly_when_datetime_accepts_it(digits: str) -> None:
    d = digits
    ts = f"{d[0:4]}-{d[4:6]}-{d[6:8]}T{d[8:10]}:{d[10:12]}:{d[12:14]}.{d[14:17]}Z"
    try:
        datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ")
        real = d[12:14] != "60"
    except ValueError:
        real = False
    assert (timestamp_problem(ts) is None) == real, ts


@pytest.mark.parametrize(
    ("ts", "message"),
    [
        ("2026-02-30T00:00:00.000Z", "2026-02 has no day 30"),
        ("0000-01-01T00:00:00.000Z", "year 0000 is out of range"),
        ("2026-11-29T24:00:00.000Z", "hour 24 is out of range"),
        ("2026-11-29 20:00:00.000Z", "is not of the form"),
    ],
)
def test_a_refusal_is_log_invalid_at_ts(ts: str, message: str) -> None:
    with pytest.raises(CaseError) as info:
        check_ts(ts)
    assert info.value.code == "log_invalid" and info.value.location.pointer == "/ts"
    assert message in info.value.message


def test_the_clock_never_leaves_year_9999() -> None:
    assert format_ts(MAX_MS) == "9999-12-31T23:59:59.999Z"
    assert format_ts(MIN_MS) == "0001-01-01T00:00:00.000Z"
    for ms in (MAX_MS + 1, MIN_MS - 1):
        with pytest.raises(CaseError) as info:
            format_ts(ms)
        assert info.value.code == "invalid_request"


def test_a_fork_point_in_the_last_day_of_9999_is_refused() -> None:
    check_fork_room("9999-12-30T23:59:59.999Z", "e1")
    with pytest.raises(CaseError) as info:
        check_fork_room("9999-12-31T00:00:00.000Z", "e1")
    assert info.value.code == "invalid_request" and "year 9999" in info.value.message
