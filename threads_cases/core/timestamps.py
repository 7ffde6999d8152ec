"""Event timestamps: the ``ts`` of an envelope (spec/thread-log.md section 2.5).

A ``ts`` is ``YYYY-MM-DDTHH:MM:SS.mmmZ``: RFC 3339 in UTC, a real calendar date of the
proleptic Gregorian calendar, years 0001 to 9999, hours 00-23, minutes and seconds 00-59 (no
leap second), exactly three decimals. Times are counted in milliseconds since
1970-01-01T00:00:00.000Z, from :data:`MIN_MS` to :data:`MAX_MS`.

The arithmetic is done by hand (days from a civil date and back) so the TypeScript
implementation (``ts/src/core/timestamps.ts``) gives the same answers and messages.
Refusals are ``CaseError("log_invalid")`` with pointer ``/ts``.
"""

from __future__ import annotations

import functools
import re

from .errors import CaseError
from .texts import quote

#: 0001-01-01T00:00:00.000Z
MIN_MS = -62_135_596_800_000
#: 9999-12-31T23:59:59.999Z
MAX_MS = 253_402_300_799_999
_DAY_MS = 86_400_000
_TS = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})\.([0-9]{3})Z")


_YEAR = "(?:[1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])"  # 0001-9999
_LEAP_YEAR = "(?:[0-9]{2}(?:[02468][48]|[13579][26]|[2468]0)|(?:[02468][48]|[13579][26]|[2468]0)00)"
_MONTH_DAY = (
    "(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
    "|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
    "|02-(?:0[1-9]|1[0-9]|2[0-8]))"
)
#: The whole ``ts`` rule (section 2.4 and the form of section 2) as one regular expression
#: (a real date of years 0001-9999, February 29 in leap years only, a real time of day), for
#: a compiled check that holds it beside the schema; it matches exactly the ``ts`` for which
#: :func:`timestamp_problem` says ``None`` (tests/test_timestamps.py). Refusals still come
#: from :func:`check_ts`, with its messages.
CALENDAR_PATTERN = (
    f"^(?:{_YEAR}-{_MONTH_DAY}|{_LEAP_YEAR}-02-29)"
    "T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9][.][0-9]{3}Z$"
)


def _days_in_month(year: int, month: int) -> int:
    if month == 2:
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        return 29 if leap else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm)."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _civil_from_days(z: int) -> tuple[int, int, int]:
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return yoe + era * 400 + (m <= 2), m, d


def timestamp_problem(ts: str) -> str | None:
    """Why ``ts`` is not a valid event time, or ``None`` when it is one."""
    m = _TS.fullmatch(ts)
    if m is None:
        return "is not of the form YYYY-MM-DDTHH:MM:SS.mmmZ"
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    if year < 1:
        return "year 0000 is out of range (0001 to 9999)"
    if not 1 <= month <= 12:
        return f"month {m.group(2)} does not exist"
    if not 1 <= day <= _days_in_month(year, month):
        return f"{m.group(1)}-{m.group(2)} has no day {m.group(3)}"
    if hour > 23:
        return f"hour {m.group(4)} is out of range (00 to 23)"
    if minute > 59:
        return f"minute {m.group(5)} is out of range (00 to 59)"
    if second > 59:
        return f"second {m.group(6)} is out of range (00 to 59)"
    return None


#: Days since the epoch of the ``YYYY-MM-DD`` prefixes already found valid (a log's events
#: fall on few days), so :func:`valid_ts_ms` checks only the time of day of a new ``ts``.
_KNOWN_DAYS: dict[str, int] = {}
#: ``"THH:MM"`` -> seconds, ``":SS."`` -> seconds, ``"mmm"`` -> ms: every valid spelling.
_HOUR_MINUTE = {f"T{h:02d}:{m:02d}": h * 3600 + m * 60 for h in range(24) for m in range(60)}
_SECOND = {f":{s:02d}.": s for s in range(60)}
_MILLI = {f"{ms:03d}": ms for ms in range(1000)}


#: ``"YYYY-MM-DDTHH:MM"`` -> its milliseconds since the epoch, for the minutes of known days
#: :func:`valid_ts_ms` met (the events of a log share their minute by the dozen)
_MINUTES: dict[str, int] = {}


def valid_ts_ms(ts: str) -> int | None:
    """The milliseconds of ``ts`` when it is a valid event time on a day already seen by
    :func:`check_ts`, else ``None`` (the caller decides with :func:`check_ts`). The fast path
    of every ``ts`` check: table look-ups, no exception, no regex."""
    base = _MINUTES.get(ts[:16])
    if base is None:
        days = _KNOWN_DAYS.get(ts[:10])
        hm = _HOUR_MINUTE.get(ts[10:16])
        if days is None or hm is None:
            return None
        if len(_MINUTES) >= 100_000:  # a log spread over many minutes: start afresh
            _MINUTES.clear()
        base = _MINUTES[ts[:16]] = (days * 86400 + hm) * 1000
    sec = _SECOND.get(ts[16:20])
    milli = _MILLI.get(ts[20:23])
    if sec is None or milli is None or ts[23:] != "Z":
        return None
    return base + sec * 1000 + milli


@functools.lru_cache(maxsize=4096)  # neighbouring events share their ts; a refusal is not cached
def check_ts(ts: str) -> int:
    """The milliseconds of a valid ``ts``. Raises ``CaseError("log_invalid")`` at ``/ts``."""
    ms = valid_ts_ms(ts)
    if ms is not None:
        return ms
    problem = timestamp_problem(ts)
    if problem is not None:
        raise CaseError(
            "log_invalid",
            f"ts {quote(ts)} {problem}",
            pointer="/ts",
            hint="ts is an RFC 3339 UTC time with a real date, e.g. 2026-11-29T20:05:43.123Z",
        )
    if len(_KNOWN_DAYS) >= 100_000:  # a log spread over many days: start afresh
        _KNOWN_DAYS.clear()
    _KNOWN_DAYS[ts[:10]] = _days_from_civil(int(ts[0:4]), int(ts[5:7]), int(ts[8:10]))
    return parse_ts(ts)


def parse_ts(ts: str) -> int:
    """``YYYY-MM-DDTHH:MM:SS.mmmZ`` (already checked) -> milliseconds since the epoch."""
    y, mo, d, h, mi, s, ms = (int(ts[a:b]) for a, b in _FIELDS)
    return (_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s) * 1000 + ms


_FIELDS = ((0, 4), (5, 7), (8, 10), (11, 13), (14, 16), (17, 19), (20, 23))


_DAY_TEXT: dict[int, str] = {}  # days since the epoch -> YYYY-MM-DD, for format_ts
_CLOCK = [f"{h:02d}:{m:02d}" for h in range(24) for m in range(60)]  # minute of day -> HH:MM
_TWO = [f"{n:02d}" for n in range(60)]


def format_ts(ms: int) -> str:
    """Milliseconds since the epoch -> ``YYYY-MM-DDTHH:MM:SS.mmmZ``.
    Raises ``CaseError("invalid_request")`` outside :data:`MIN_MS` .. :data:`MAX_MS` (a clock
    that would leave year 9999)."""
    if not MIN_MS <= ms <= MAX_MS:
        raise CaseError(
            "invalid_request",
            f"the clock would reach {ms} ms, outside 0001-01-01T00:00:00.000Z .. "
            "9999-12-31T23:59:59.999Z",
            hint="event times stay within years 0001 to 9999",
        )
    days, rest = divmod(ms, _DAY_MS)
    date = _DAY_TEXT.get(days)
    if date is None:
        if len(_DAY_TEXT) >= 100_000:
            _DAY_TEXT.clear()
        y, m, d = _civil_from_days(days)
        date = _DAY_TEXT[days] = f"{y:04d}-{m:02d}-{d:02d}"
    secs, milli = divmod(rest, 1000)
    minutes, sec = divmod(secs, 60)
    return f"{date}T{_CLOCK[minutes]}:{_TWO[sec]}.{milli:03d}Z"


#: A fork point leaves at least this much clock for a replay (one day; a replay uses 1 ms
#: an event), so a saved case never replays past year 9999 (spec/case-format.md 5.2).
REPLAY_ROOM_MS = 86_400_000


def check_fork_room(ts: str, at: str) -> None:
    """Refuse a fork point whose ``ts`` is later than ``9999-12-30T23:59:59.999Z``: the replay
    clock would leave year 9999. Raises ``CaseError("invalid_request")``."""
    if parse_ts(ts) > MAX_MS - REPLAY_ROOM_MS:
        raise CaseError(
            "invalid_request",
            f"the fork point {quote(at)} is at {ts}, later than 9999-12-30T23:59:59.999Z: "
            "a replay's clock would pass year 9999",
            hint="fork at an event recorded at least a day before the end of year 9999",
        )
