"""Checking a log's events one at a time (spec/thread-log.md section 5): the dialect's
spelling, the schema, ``ts``, one thread_id, seq without gaps, unique event_ids, and the value
rules of a read line (depth, numbers canonical JSON can write).

:meth:`LogChecker.check_line` is the reader's whole per-line check. A valid line goes through
one compiled check: the line parsed once by orjson, its bytes compared with orjson's own
writing of the value (equal bytes rule out a duplicate key, an unsafe integer and nesting past
254 levels, as in :func:`~threads_cases.core.strictjson.parse`), two byte scans (the depth and
number rules can only be broken by a line holding more than 248 brackets, an exponent ``e+``
or 16 integer digits before ``.0``: orjson's spelling of every double from 2^53 to 1e21), and
one jsonschema-rs validator for the event's type that holds the envelope, the data and the
calendar rule of ``ts`` (:func:`~threads_cases.core.schemas.compiled_event_validators`). A line
that fails any of them goes the exact way, rule by rule in the spec's order, so a refusal has
the same reason code, message, line and pointer as before; a valid line is never refused by
the fast check (tests/test_event_check.py holds both ways to the same answers).

Duplicate event_ids are found with a table of 64-bit hashes (8 bytes an event, not the ids
themselves), so memory stays small on logs of millions of events; a hash that repeats is
confirmed by the caller against the earlier lines (the earliest offending line, as every
implementation reports it).
"""

from __future__ import annotations

import re
from array import array
from typing import Any

import orjson

from .canonical import canonical_line
from .depth import MAX_EVENT_DEPTH, depth_message, maybe_too_deep, too_deep
from .dialects import CANONICAL, Dialect, get_dialect
from .errors import CaseError, pointer_join
from .schemas import LazyValidator, compiled_event_validators, fast_validator, schema_problems
from .strictjson import MAX_LINE_BYTES, parse
from .timestamps import check_ts

_STRICT = orjson.OPT_STRICT_INTEGER
_loads, _dumps = orjson.loads, orjson.dumps


#: orjson's spelling of a double from 2^53 to 1e16: 16 integer digits and ``.0``. The literal
#: ``.0`` is searched for in C and the 16 bytes before each one looked at (a pattern that
#: starts with the digits tries every byte: about 50k instructions a line)
_WIDE_DOUBLE = re.compile(rb"\.0(?<=[0-9]{16}\.0)")
_wide_double = _WIDE_DOUBLE.search


def _sixteen_digits(body: bytes) -> bool:
    """Whether ``body`` holds 16 digits and ``.0``: orjson's spelling of a double from 2^53
    to 1e16."""
    return _wide_double(body) is not None


#: A JSON text with more than MAX_EVENT_DEPTH opening brackets closes each of them too, so it
#: is longer than this; a shorter line cannot break the depth rule (not even counted)
_DEEP_LINE = 2 * MAX_EVENT_DEPTH + 1


#: The id table's first size: a slot per this many bytes of the log, at most _MOST_SLOTS
_BYTES_PER_SLOT = 192
_MOST_SLOTS = 1 << 23


class _IdTable:
    """An open-addressing set of 64-bit event_id hashes in a flat ``array('q')`` (0: free)."""

    def __init__(self, log_bytes: int = 0) -> None:
        # sized for a log of ``log_bytes`` (a slot per 192 bytes, a power of two from 1,024
        # to 2^23): a log of lines of 384 bytes or more never grows it (each growth puts
        # every hash in again, one at a time: about a twentieth of reduce's time when the
        # table grew from 1,024 slots), and its memory is what the table grows to anyway
        slots = 1024
        while slots < min(log_bytes // _BYTES_PER_SLOT, _MOST_SLOTS):
            slots *= 2
        self._table = array("q", bytes(8 * slots))
        self._mask = slots - 1
        self._count = 0

    def add(self, event_id: str) -> bool:
        """Add; return True if an equal hash was present (a possible duplicate)."""
        # Python's own 64-bit string hash (salted per process, which is all a table needs);
        # signed, as the table stores it (``& mask`` of a negative int is its low bits)
        h = hash(event_id) or 1
        table, mask = self._table, self._mask
        i = h & mask
        while True:
            slot = table[i]
            if slot == 0:
                table[i] = h
                self._count += 1
                if self._count * 2 > mask:
                    self._grow()
                return False
            if slot == h:
                return True
            i = (i + 1) & mask

    def _grow(self) -> None:
        old = self._table
        self._mask = self._mask * 2 + 1
        self._table = array("q", bytes(8 * (self._mask + 1)))
        table, mask = self._table, self._mask
        for h in old:
            if h:
                i = h & mask
                while table[i]:
                    i = (i + 1) & mask
                table[i] = h


class LogChecker:
    """Checks envelopes one at a time: dialect spelling, schema, thread_id, seq, event_id.

    :meth:`check` returns the canonical envelope or raises ``CaseError("log_invalid")``
    (without a file or line: the caller adds them).
    """

    def __init__(
        self, dialect: str | Dialect = CANONICAL, *, unique_ids: bool = True, log_bytes: int = 0
    ) -> None:
        self.dialect = get_dialect(dialect) if isinstance(dialect, str) else dialect
        #: the whole event schema, for a line the compiled check does not pass (compiled then)
        self._event = LazyValidator(
            lambda: fast_validator("event.schema.json", f"event.{CANONICAL}")
        )
        #: type -> one validator of the whole event (envelope, data, the calendar rule of ts)
        self._compiled, self._extension = compiled_event_validators()
        self._renames = bool(self.dialect.envelope)
        self._thread_id: str | None = None
        self._next_seq = 0
        #: ``unique_ids=False``: the caller numbers the events and makes their ids unique itself
        #: (the importer's emitter), so the table of id hashes is not kept
        #: (``log_bytes``: the log's size when known, which the table is sized for)
        self._ids = _IdTable(log_bytes) if unique_ids else None
        #: whether the last checked event's event_id hash repeated an earlier one (a possible
        #: duplicate: the caller confirms it against the earlier lines, see _repeats_earlier)
        self.last_repeated = False

    def check(self, raw: Any) -> dict[str, Any]:
        if not isinstance(raw, dict):
            raise CaseError("log_invalid", "a log line must be a JSON object", pointer="")
        ev = self.dialect.decode_event(raw)
        if not self._event.is_valid(ev):
            problems = schema_problems(ev, "event.schema.json", f"envelope.{CANONICAL}")
            if not problems and isinstance(ev.get("type"), str) and not ev["type"].startswith("x_"):
                problems = schema_problems(
                    ev["data"], "event.schema.json", f"data.{ev['type']}", prefix="/data"
                )
            if not problems:
                problems = [(_rs_pointer(self._event, ev), "the event breaks event.schema.json")]
            pointer, message = problems[0]
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise CaseError(
                "log_invalid", f"schema: {message}{more}", pointer=pointer, hint=_hint_for(raw)
            )
        check_ts(ev["ts"])  # a real calendar time in years 0001-9999 (thread-log.md 2.4)
        if self._thread_id is None:
            self._thread_id = ev["thread_id"]
        elif ev["thread_id"] != self._thread_id:
            raise CaseError(
                "log_invalid",
                f"thread_id {ev['thread_id']!r} differs from {self._thread_id!r} of line 1",
                pointer="/thread_id",
            )
        if ev["seq"] != self._next_seq:
            raise CaseError(
                "log_invalid",
                f"seq gap: seq {ev['seq']} where {self._next_seq} is expected",
                pointer="/seq",
            )
        self._next_seq += 1
        if self._ids is not None:
            self.last_repeated = self._ids.add(ev["event_id"])
        return ev

    def check_line(self, body: bytes, file: str, line: int) -> dict[str, Any]:
        """Every rule of one read line (spec/thread-log.md 5.1-5.5): the canonical envelope,
        or ``CaseError("log_invalid")`` at ``file``, ``line`` and the rule's pointer. A valid
        line takes the compiled check; any other the rules one by one (module docstring)."""
        ev = self.fast_line(body)
        return ev if ev is not None else self.exact_line(body, file, line)

    def exact_line(self, body: bytes, file: str, line: int) -> dict[str, Any]:
        """:meth:`check_line` by the rules one by one (the strict parse, then
        :meth:`check_value`), for a line :meth:`fast_line` passed on."""
        raw = parse(body, code="log_invalid", file=file, line=line)
        try:
            return self.check_value(raw, body)
        except CaseError as exc:
            raise exc.at(file=file, line=line) from None

    def check_value(self, raw: Any, body: bytes) -> dict[str, Any]:
        """The rules one by one for a line already parsed strictly (``raw``, from ``body``):
        the value rules and those of :meth:`check`, ``CaseError`` without a file or line.
        The exact path of a line :meth:`fast_line` passed on (it answers as that would)."""
        check_line_value(body, raw)
        return self.check(raw)

    def fast_line(self, body: bytes) -> dict[str, Any] | None:
        """The compiled check of a read line: its canonical envelope when it keeps every rule
        (the checker's counts moved on as :meth:`check` moves them), or ``None``, nothing
        changed, when a rule may be broken: the exact path (:meth:`check_value` after a
        strict parse) then decides. ``body`` is orjson's own writing of a JSON object, so it
        keeps the line rules too, within :data:`~.strictjson.MAX_LINE_BYTES`."""
        try:
            raw = _loads(body)
            if type(raw) is not dict or _dumps(raw, option=_STRICT) != body:
                return None  # not an object written as orjson writes it: the exact path
        except (orjson.JSONDecodeError, orjson.JSONEncodeError):
            return None
        if (
            (
                len(body) > _DEEP_LINE
                and (
                    len(body) > MAX_LINE_BYTES
                    or body.count(b"{") + body.count(b"[") > MAX_EVENT_DEPTH
                )
            )
            or (body.find(b"+") >= 0 and body.find(b"e+") >= 0)
            or _wide_double(body) is not None
        ):
            return None  # too long, or the depth or number rule may be broken
        if self._renames:
            try:
                ev = self.dialect.decode_event(raw)
            except CaseError:
                return None
        else:
            ev = raw
        etype = ev.get("type")
        if type(etype) is not str:
            return None
        try:
            check = self._compiled[etype]  # compiled on first use (KeyError: no such type)
        except KeyError:
            check = self._extension if etype.startswith("x_") else None
        if check is None or not check.is_valid(ev) or ev["seq"] != self._next_seq:
            return None
        if self._thread_id is None:
            self._thread_id = ev["thread_id"]
        elif ev["thread_id"] != self._thread_id:
            return None
        self._next_seq += 1
        ids = self._ids
        if ids is not None:
            # _IdTable.add inline (one call fewer an event): a free slot takes the hash
            h = hash(ev["event_id"]) or 1
            table = ids._table
            i = h & ids._mask
            if table[i] == 0 and ids._count * 2 + 2 <= ids._mask:
                table[i] = h
                ids._count += 1
                self.last_repeated = False
            else:
                self.last_repeated = ids.add(ev["event_id"])
        return ev

    def check_schema(self, ev: dict[str, Any]) -> None:
        """The schema part of :meth:`check` (the same refusal) for a canonical envelope whose
        writer guarantees the rest: a ``ts`` it formatted from a valid time, one thread_id,
        seq numbered from 0 and unique event_ids (the importer's emitter)."""
        if not self._event.is_valid(ev):
            self.check(ev)  # raises the schema refusal with its pointer and message


_CLAUDE_TYPES = frozenset(
    {
        "user",
        "assistant",
        "summary",
        "system",
        "progress",
        "file-history-snapshot",
        "queue-operation",
    }
)
_CODEX_TYPES = frozenset(
    {
        "thread.started",
        "turn.started",
        "item.started",
        "item.completed",
        "turn.completed",
        "session_meta",
        "response_item",
        "event_msg",
        "turn_context",
    }
)


def _hint_for(raw: dict[str, Any]) -> str | None:
    """A hint when a line looks like a transcript or another dialect (``None``: the default)."""
    if "threads_export" in raw or "prev_hash" in raw:  # importers/threads_export.py's marks
        return (
            "this looks like a `threads export` file of the threads runtime, not a thread "
            "log: import it with `threads-cases import threads FILE -o LOG`"
        )
    if "event_id" in raw or "eventId" in raw:
        if "eventId" in raw:
            return "this looks like the threads-ts dialect: pass --dialect threads-ts"
        if "event_id" in raw and "thread_id" in raw:
            return "this looks like the threads-py dialect: pass --dialect threads-py"
        return None
    kind = raw.get("type")
    if {"uuid", "parentUuid", "sessionId"} & raw.keys() or kind in _CLAUDE_TYPES:
        return (
            "this looks like a Claude Code transcript, not a thread log: import it with "
            "`threads-cases import claude-code FILE -o LOG`"
        )
    if kind in _CODEX_TYPES or ("payload" in raw and "timestamp" in raw):
        return (
            "this looks like a Codex session, not a thread log: import it with "
            "`threads-cases import codex FILE -o LOG`"
        )
    return None


def _rs_pointer(fast: Any, ev: Any) -> str:
    for err in fast.iter_errors(ev):
        return "".join(
            "/" + str(p).replace("~", "~0").replace("/", "~1") for p in err.instance_path
        )
    return ""


def check_depth(text: bytes, raw: Any) -> None:
    """Refuse an event nested deeper than 248 levels (thread-log.md 5.1a): ``log_invalid`` at
    the first container past the limit (keys in code point order). ``text`` is its JSON."""
    if maybe_too_deep(text):
        path = too_deep(raw)
        if path is not None:
            raise CaseError("log_invalid", depth_message(), pointer=pointer_join(path))


#: A number token that may be a double canonical JSON cannot write (magnitude above 2^53-1
#: and below 1e21): it has an exponent, or 16 digits and more before its fraction.
_MAYBE_WIDE_DOUBLE = re.compile(rb"[0-9][eE]|[0-9]{16}\.")


def check_line_value(text: bytes, raw: Any) -> None:
    """The value rules of a read line (thread-log.md 5.1a, 5.1b): its depth, then every
    number writable by canonical JSON (a double such as ``1e16`` is ``log_invalid`` at its
    pointer, as in a log given as values). ``text`` is the line's JSON."""
    check_depth(text, raw)
    if _MAYBE_WIDE_DOUBLE.search(text):
        try:
            canonical_line(raw)
        except CaseError as exc:
            if exc.code != "unsafe_value":
                raise
            raise CaseError("log_invalid", exc.message, pointer=exc.location.pointer) from None
