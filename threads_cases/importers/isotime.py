"""ISO 8601 times as eval logs and trajectories write them (``2026-03-04T10:00:01.250000+00:00``,
``2025-02-01T00:14:10.787622`` without an offset: UTC), read fast (spec/importers.md
sections 9 and 10).

:func:`iso_ms` reads them with :meth:`datetime.fromisoformat` (C code) and falls back to
:func:`~threads_cases.importers.common.parse_ts_ms`, the importers' reader of every other
spelling, for anything it does not take. A time it cannot read is ``None`` (the event takes
the previous event's time, section 1).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ..core.errors import CaseError
from ..core.texts import quote
from ..core.timestamps import MAX_MS, MIN_MS
from .common import TS_HINT, parse_ts_ms

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def iso_ms(value: Any) -> int | None:
    """``value`` (an ISO 8601 time, or any time :func:`parse_ts_ms` reads) in epoch ms."""
    if type(value) is str and len(value) >= 19 and value[10] == "T":
        try:
            dt = datetime.fromisoformat(value)
        except ValueError:
            return parse_ts_ms(value)
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=UTC)
        try:
            delta = dt - _EPOCH
        except OverflowError:
            return parse_ts_ms(value)
        ms = (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000
        return ms if MIN_MS <= ms <= MAX_MS else None
    return parse_ts_ms(value)


def event_ms(value: Any, *, file: str, pointer: str) -> int | None:
    """:func:`iso_ms` of an event's ``timestamp``; ``None`` when it has none. A time that is
    present but not a real one is refused, never guessed: ``CaseError("log_invalid")`` at
    ``pointer`` (spec/importers.md section 4, "Timestamps are never repaired")."""
    if value is None:
        return None
    ms = iso_ms(value)
    if ms is None:
        raise CaseError(
            "log_invalid",
            f"timestamp {quote(value)} is not a real time (an ISO 8601 time, years 0001 to 9999)",
            file=file,
            pointer=pointer,
            hint=TS_HINT,
        )
    return ms
