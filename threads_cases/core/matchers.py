"""Event matchers: the patterns that cases use to look for events in a log (spec/matchers.md).

A matcher is a JSON object (spec/matchers.md section 2)::

    {"type": str, "data"?: any,
     "seq"?: int, "actor_kind"?: str, "epoch"?: int, "branch_id"?: str, "critical"?: bool}

It matches a *canonical* (``threads-py`` spelled) event envelope when ``type`` and every
envelope key it names equal the event's (section 4) and its ``data`` matches the event's
``data`` as a subset (section 5): an object matches when each of its keys is present in the
actual object with a matching value; an array matches an array of the same length item by
item; scalars compare under the value rules of section 3 (numbers by value, so ``1`` matches
``1.0`` and ``-0`` matches ``0``; booleans are not numbers; strings by exact code points;
``null`` only matches ``null``, never a missing key).

Functions:

* :func:`validate_matcher` - refuse a malformed matcher with ``CaseError("invalid_request")``;
* :func:`value_matches`, :func:`values_equal` - the subset rule and full equality on values
  (from :mod:`.values`, re-exported);
* :func:`matches`, :func:`differences` - one matcher against one event;
* :func:`diff_values` - every difference between two values under full equality;
* :func:`nearest`, :func:`explain` - the event that fits a failing matcher best, in words;
* :func:`find_all`, :func:`match_in_order` - "must" (any order) and "expect" (ordered
  subsequence) semantics over a list of events.

Every function that takes a matcher validates it first (``invalid_request`` with a JSON
pointer). Events are trusted to be canonical envelopes as :func:`threads_cases.core.log.read_log`
returns them; they are never validated here.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .canonical import MAX_SAFE_INTEGER, compact
from .errors import CaseError, pointer_join
from .texts import quote
from .values import ARRAY as _ARRAY
from .values import NUMBER as _NUMBER
from .values import OBJECT as _OBJECT
from .values import OTHER as _OTHER
from .values import json_kind as _kind
from .values import scalar_equal as _scalar_equal
from .values import value_matches, values_equal

__all__ = [
    "ENVELOPE_KEYS",
    "MATCHER_KEYS",
    "Difference",
    "diff_values",
    "differences",
    "explain",
    "find_all",
    "match_in_order",
    "matches",
    "nearest",
    "validate_matcher",
    "value_matches",
    "values_equal",
]

#: Envelope keys a matcher may name besides ``type`` (spec/matchers.md section 2), with the
#: kind of value each takes.
ENVELOPE_KEYS: dict[str, str] = {
    "seq": "integer",
    "actor_kind": "string",
    "epoch": "integer",
    "branch_id": "string",
    "critical": "boolean",
}

#: Every key a matcher may hold.
MATCHER_KEYS: frozenset[str] = frozenset({"type", "data", *ENVELOPE_KEYS})

#: Keys compared by whole-value equality against the envelope (everything except ``data``).
_EXACT_KEYS: tuple[str, ...] = ("type", *ENVELOPE_KEYS)

# --------------------------------------------------------------------------- validation


def _invalid(message: str, pointer: str) -> CaseError:
    return CaseError("invalid_request", message, pointer=pointer)


def _key_pointer(pointer: str, key: str | int) -> str:
    return pointer + pointer_join([key])


def _suggest(key: str) -> str:
    """A hint for an unknown matcher key: another dialect's spelling or a near miss."""
    try:
        from .dialects import dialect_names, get_dialect

        for name in dialect_names():
            for canonical, spelled in get_dialect(name).envelope.items():
                if key == spelled and canonical in MATCHER_KEYS:
                    return (
                        f"; matchers use the threads-py spelling {quote(canonical)} "
                        f"({quote(key)} is how {name} spells it)"
                    )
    except CaseError:  # pragma: no cover - a broken dialect file must not hide the refusal
        pass
    close = difflib.get_close_matches(key, sorted(MATCHER_KEYS), n=1, cutoff=0.6)
    return f"; did you mean {quote(close[0])}?" if close else ""


def _check_json(value: Any, pointer: str) -> None:
    """Refuse what is not a JSON value that every implementation reads the same way."""
    kind = _kind(value)
    if kind == _OBJECT:
        for key, item in value.items():
            if not isinstance(key, str):
                raise _invalid("an object key is not a string", pointer)
            _check_json(item, _key_pointer(pointer, key))
    elif kind == _ARRAY:
        for index, item in enumerate(value):
            _check_json(item, _key_pointer(pointer, index))
    elif kind == _NUMBER:
        if isinstance(value, float):
            if not math.isfinite(value):
                raise _invalid("a number is not finite", pointer)
        elif not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            raise _invalid(f"integer {value} is outside +-(2^53-1)", pointer)
    elif kind == _OTHER:
        raise _invalid(f"a {type(value).__name__} is not a JSON value", pointer)


def _is_count(value: Any) -> bool:
    """An integer from 0 to 2^53-1; an integral float (3.0) is the same number as 3."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return False
    return bool(0 <= value <= MAX_SAFE_INTEGER)


def validate_matcher(matcher: Any, *, pointer: str = "") -> dict[str, Any]:
    """Return ``matcher`` unchanged if it is a valid matcher (spec/matchers.md section 2).

    A valid matcher is a JSON object ``{"type": str, "data"?: any, "seq"?: int,
    "actor_kind"?: str, "epoch"?: int, "branch_id"?: str, "critical"?: bool}``: ``type``,
    ``actor_kind`` and ``branch_id`` are non-empty strings, ``seq`` and ``epoch`` integers
    from 0 to 2^53-1 (``3.0`` counts as the integer 3), ``critical`` a boolean and ``data``
    any JSON value. ``pointer`` is where the matcher sits in its document (for example
    ``"/must/0"``); refusals point below it.

    Raises ``CaseError("invalid_request")`` with a JSON pointer for: a matcher that is not an
    object (pointer of the matcher), an unknown key (pointer of the key, checked first, in
    sorted order), a missing ``type`` (pointer of the matcher), a key whose value has the
    wrong type (pointer of the key), and a ``data`` value that is not JSON: a non-string key,
    a non-finite number, an integer outside +-(2^53-1) or a non-JSON Python type (pointer of
    the value).
    """
    if not isinstance(matcher, dict):
        kind = "an array" if isinstance(matcher, list) else f"a {type(matcher).__name__}"
        if matcher is None:
            kind = "null"
        raise _invalid(f"a matcher must be a JSON object, not {kind}", pointer)
    for key in sorted(matcher, key=str):
        if not isinstance(key, str):
            raise _invalid(f"matcher key {quote(key)} is not a string", pointer)
        if key not in MATCHER_KEYS:
            raise _invalid(
                f"unknown matcher key {quote(key)}; allowed: {', '.join(sorted(MATCHER_KEYS))}"
                + _suggest(key),
                _key_pointer(pointer, key),
            )
    if "type" not in matcher:
        raise _invalid('a matcher needs a "type" (the event type to look for)', pointer)
    for key in ("type", "actor_kind", "branch_id"):
        if key in matcher and not (isinstance(matcher[key], str) and matcher[key]):
            raise _invalid(
                f"{key} must be a non-empty string, not {compact(matcher[key])}",
                _key_pointer(pointer, key),
            )
    for key in ("seq", "epoch"):
        if key in matcher and not _is_count(matcher[key]):
            raise _invalid(
                f"{key} must be an integer from 0 to 2^53-1, not {compact(matcher[key])}",
                _key_pointer(pointer, key),
            )
    if "critical" in matcher and not isinstance(matcher["critical"], bool):
        raise _invalid(
            f"critical must be true or false, not {compact(matcher['critical'])}",
            _key_pointer(pointer, "critical"),
        )
    if "data" in matcher:
        _check_json(matcher["data"], _key_pointer(pointer, "data"))
    return matcher


# --------------------------------------------------------------------------- matching


def _matches(matcher: dict[str, Any], event: dict[str, Any]) -> bool:
    for key in _EXACT_KEYS:
        if key in matcher and (key not in event or not values_equal(matcher[key], event[key])):
            return False
    return "data" not in matcher or (
        "data" in event and value_matches(matcher["data"], event["data"])
    )


def matches(matcher: dict[str, Any], event: dict[str, Any]) -> bool:
    """Whether a canonical event envelope matches ``matcher`` (spec/matchers.md section 4).

    ``type`` and each envelope key the matcher names must equal the event's (value rules of
    section 3); ``data``, when present, must match the event's data by the subset rule
    (section 5); a matcher without ``data`` accepts any data. Raises
    ``CaseError("invalid_request")`` for an invalid matcher (see :func:`validate_matcher`).
    """
    return _matches(validate_matcher(matcher), event)


@dataclass(frozen=True)
class Difference:
    """One place where an event (or value) does not fit (spec/matchers.md section 7).

    ``pointer`` is an RFC 6901 JSON pointer relative to the event (``"/data/is_error"``,
    ``"/type"``) or to the compared value for :func:`diff_values`. ``expected`` is the value
    wanted there and ``actual`` the value found (``None`` when absent). ``missing`` is True
    when the key is absent from the actual value; ``extra`` is True when the key is present in
    the actual value but absent from the expected one (only :func:`diff_values` reports those).
    For an array whose length differs, the difference is reported once, at the array.
    """

    pointer: str
    expected: Any
    actual: Any
    missing: bool = False
    extra: bool = False

    def to_json(self) -> dict[str, Any]:
        """``{"pointer", "expected", "actual", "missing", "extra"}``."""
        return {
            "pointer": self.pointer,
            "expected": self.expected,
            "actual": self.actual,
            "missing": self.missing,
            "extra": self.extra,
        }

    def render(self) -> str:
        """``/data/is_error expected false, got true`` (or ``..., missing`` / ``unexpected``)."""
        where = self.pointer or "/"
        if self.missing:
            return f"{where} expected {compact(self.expected)}, missing"
        if self.extra:
            return f"{where} not expected, got {compact(self.actual)}"
        return f"{where} expected {compact(self.expected)}, got {compact(self.actual)}"


def _diff(
    expected: Any, actual: Any, path: list[str | int], subset: bool, out: list[Difference]
) -> None:
    """Append the differences of ``actual`` against ``expected`` in path order."""
    ke = _kind(expected)
    if ke != _kind(actual):
        out.append(Difference(pointer_join(path), expected, actual))
    elif ke == _OBJECT:
        keys = set(expected) if subset else set(expected) | set(actual)
        for key in sorted(keys):
            path.append(key)
            if key not in actual:
                out.append(Difference(pointer_join(path), expected[key], None, missing=True))
            elif key not in expected:
                out.append(Difference(pointer_join(path), None, actual[key], extra=True))
            else:
                _diff(expected[key], actual[key], path, subset, out)
            path.pop()
    elif ke == _ARRAY:
        if len(expected) != len(actual):
            out.append(Difference(pointer_join(path), expected, actual))
            return
        for index, (e, a) in enumerate(zip(expected, actual, strict=True)):
            path.append(index)
            _diff(e, a, path, subset, out)
            path.pop()
    elif not _scalar_equal(ke, expected, actual):
        out.append(Difference(pointer_join(path), expected, actual))


def _differences(matcher: dict[str, Any], event: dict[str, Any]) -> list[Difference]:
    out: list[Difference] = []
    for key in sorted(k for k in matcher if k in MATCHER_KEYS):
        if key not in event:
            out.append(Difference(pointer_join([key]), matcher[key], None, missing=True))
        elif key == "data":
            _diff(matcher[key], event[key], [key], True, out)
        elif not values_equal(matcher[key], event[key]):
            out.append(Difference(pointer_join([key]), matcher[key], event[key]))
    return out


def differences(matcher: dict[str, Any], event: dict[str, Any]) -> list[Difference]:
    """Every place where ``event`` does not fit ``matcher`` (spec/matchers.md section 7).

    Empty exactly when :func:`matches` is true. Pointers are relative to the event; the list
    is in path order (keys by code point, array items by index). Under ``/data`` the subset
    rule applies: keys the matcher lacks are never reported; a key the event lacks is
    reported with ``missing=True``; a kind mismatch or an array of another length is reported
    once at that pointer with the whole expected and actual values. Raises
    ``CaseError("invalid_request")`` for an invalid matcher.
    """
    return _differences(validate_matcher(matcher), event)


def diff_values(expected: Any, actual: Any, pointer: str = "") -> list[Difference]:
    """Every difference between two JSON values under full equality (:func:`values_equal`).

    Empty exactly when ``values_equal(expected, actual)``. Keys absent from ``actual`` give
    ``missing=True``, keys absent from ``expected`` give ``extra=True``; a kind mismatch, a
    scalar mismatch or an array of another length is one difference at that place. Pointers
    start with ``pointer`` (an RFC 6901 prefix such as ``"/state"``); the list is in path
    order (keys by code point, array items by index). Never raises.
    """
    out: list[Difference] = []
    _diff(expected, actual, [], False, out)
    if pointer:
        out = [
            Difference(pointer + d.pointer, d.expected, d.actual, d.missing, d.extra) for d in out
        ]
    return out


# --------------------------------------------------------------------------- searching


def nearest(
    matcher: dict[str, Any], events: Sequence[dict[str, Any]]
) -> tuple[int, list[Difference]] | None:
    """The index of the event that fits ``matcher`` best, with its differences (section 8).

    Best means: an event of the matcher's ``type`` before one of another type, then fewest
    differences, then earliest. A matching event has no differences, so it is always the
    nearest. Returns ``None`` for an empty ``events``. Raises ``CaseError("invalid_request")``
    for an invalid matcher.
    """
    validate_matcher(matcher)
    best: tuple[int, int, int] | None = None
    best_diffs: list[Difference] = []
    for index, event in enumerate(events):
        other_type = 0 if values_equal(matcher["type"], event.get("type")) else 1
        if best is not None and other_type > best[0]:
            continue
        diffs = _differences(matcher, event)
        score = (other_type, len(diffs), index)
        if best is None or score < best:
            best, best_diffs = score, diffs
            if score[:2] == (0, 0):
                break
    return None if best is None else (best[2], best_diffs)


def name_event(index: int, event: dict[str, Any]) -> str:
    """``seq N TYPE (EVENT_ID)``: how a matcher's sentence names an event."""
    seq = event.get("seq", f"#{index}")
    return f"seq {seq} {event.get('type', '?')} ({event.get('event_id', '?')})"


def explain(
    matcher: dict[str, Any], events: Sequence[dict[str, Any]], *, label: str = "must"
) -> str:
    """One sentence on how ``matcher`` fares against ``events`` (spec/matchers.md section 8).

    For a matcher that matches nothing::

        must {"data":{"is_error":false},"type":"tool_result"} matched no event; nearest is
        seq 7 tool_result (e7): /data/is_error expected false, got true

    (one line). The matcher is written as compact canonical JSON (RFC 8785, so keys are
    sorted), the nearest event (:func:`nearest`) by its seq, type and event_id, and each
    difference as ``POINTER expected VALUE, got VALUE`` (``..., missing`` for an absent key),
    joined by ``"; "``. Long values are cut to about 80 characters. ``label`` starts the
    sentence (``"must"``, ``"expect"``). With no events: ``... matched no event; the log has
    no events``; when an event matches: ``... matches seq 3 user_message (e3)``. Raises
    ``CaseError("invalid_request")`` for an invalid matcher.
    """
    validate_matcher(matcher)
    head = f"{label} {compact(matcher, None)}"
    found = nearest(matcher, events)
    if found is None:
        return f"{head} matched no event; the log has no events"
    index, diffs = found
    name = name_event(index, events[index])
    if not diffs:
        return f"{head} matches {name}"
    return f"{head} matched no event; nearest is {name}: " + "; ".join(d.render() for d in diffs)


def find_all(
    matchers: Sequence[dict[str, Any]], events: Sequence[dict[str, Any]]
) -> list[int | None]:
    """The "must" semantics (spec/matchers.md section 9): for each matcher, the index of the
    first event it matches, or ``None``. Matchers are independent: several may name the same event,
    and their order does not matter. Raises ``CaseError("invalid_request")`` with pointer
    ``/<i>`` (and below) for an invalid matcher at index ``i``.
    """
    for i, m in enumerate(matchers):
        validate_matcher(m, pointer=pointer_join([i]))
    out: list[int | None] = []
    for m in matchers:
        out.append(next((j for j, ev in enumerate(events) if _matches(m, ev)), None))
    return out


def match_in_order(
    matchers: Sequence[dict[str, Any]], events: Sequence[dict[str, Any]]
) -> tuple[bool, int]:
    """The "expect" semantics (spec/matchers.md section 9): whether the matchers match an
    ordered subsequence of ``events``, each matcher a later event than the one before.

    Returns ``(all_matched, count)`` where ``count`` is how many matchers, from the first,
    matched in order. Matching is greedy, each matcher taking the earliest event after the
    previous match; this finds the longest matching prefix. No matchers give ``(True, 0)``.
    Raises ``CaseError("invalid_request")`` with pointer ``/<i>`` for an invalid matcher.
    """
    for i, m in enumerate(matchers):
        validate_matcher(m, pointer=pointer_join([i]))
    position = 0
    count = 0
    for m in matchers:
        while position < len(events) and not _matches(m, events[position]):
            position += 1
        if position == len(events):
            break
        count += 1
        position += 1
    return count == len(matchers), count
