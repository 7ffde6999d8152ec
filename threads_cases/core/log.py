"""Thread logs: reading, checking and writing JSON Lines event logs (spec/thread-log.md).

A log is strict JSON Lines, one event envelope per line, in one dialect. Reading turns each
line into a *canonical* envelope (``threads-py`` keys)::

    {"event_id": str, "thread_id": str, "seq": int, "type": str, "actor_kind": str,
     "epoch": int, "branch_id": str, "critical": bool, "ts": str, "data": {...}}

and checks, in this order: the strict JSON rules (spec/strict-json.md), the dialect's key
spelling, ``schemas/event.schema.json`` (envelope, then the data of the type), one thread_id,
seq 0, 1, 2, ... without gaps, and unique event_ids. Every refusal is
``CaseError("log_invalid")`` with the file, the line and a JSON pointer.

Duplicate event_ids are found with a table of 64-bit hashes (8 bytes an event, not the ids
themselves), so memory stays small on logs of millions of events; a hash that repeats is
confirmed against the earlier lines at once, so a repeat is reported at its own line, before
any later problem (the earliest offending line, as every implementation reports it).
"""

from __future__ import annotations

import io
import os
import re
from array import array
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any, cast

from .canonical import canonical_line
from .depth import depth_message, maybe_too_deep, too_deep
from .dialects import CANONICAL, Dialect, get_dialect
from .errors import CaseError, Problem, pointer_join
from .reducer import Reducer
from .schemas import fast_validator, schema_problems
from .shapes import State
from .strictjson import iter_lines, parse, source_name
from .timestamps import check_ts

Source = str | os.PathLike[str] | IO[bytes]


class _IdTable:
    """An open-addressing set of 64-bit event_id hashes in a flat ``array('Q')``."""

    def __init__(self) -> None:
        self._table = array("Q", bytes(8 * 1024))
        self._mask = 1023
        self._count = 0

    @staticmethod
    def _hash(event_id: str) -> int:
        # Python's own 64-bit string hash (salted per process, which is all a table needs).
        return (hash(event_id) & 0xFFFFFFFFFFFFFFFF) or 1

    def add(self, event_id: str) -> bool:
        """Add; return True if an equal hash was present (a possible duplicate)."""
        h = self._hash(event_id)
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
        self._table = array("Q", bytes(8 * (self._mask + 1)))
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

    def __init__(self, dialect: str | Dialect = CANONICAL, *, unique_ids: bool = True) -> None:
        self.dialect = get_dialect(dialect) if isinstance(dialect, str) else dialect
        self._event = fast_validator("event.schema.json", f"event.{CANONICAL}")
        self._thread_id: str | None = None
        self._next_seq = 0
        #: ``unique_ids=False``: the caller numbers the events and makes their ids unique itself
        #: (the importer's emitter), so the table of id hashes is not kept
        self._ids = _IdTable() if unique_ids else None
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


def _repeats_earlier(source: Source, dialect: Dialect, event_id: str, line: int) -> bool:
    """Whether ``event_id``, whose 64-bit hash repeated at ``line``, is on an earlier line.

    A path is read again from its start; a seekable stream too (and put back where it was);
    a stream that cannot be read again takes the hash's word (a false repeat needs a 64-bit
    hash collision). Only called on a repeated hash, so a valid log is read once."""
    if not isinstance(source, (str, os.PathLike)):
        if not source.seekable():
            return True
        pos = source.tell()
        source.seek(0)
        try:
            return _id_before(source, dialect, event_id, line)
        finally:
            source.seek(pos)
    return _id_before(source, dialect, event_id, line)


def _id_before(source: Source, dialect: Dialect, event_id: str, line: int) -> bool:
    key = dialect.envelope.get("event_id", "event_id")
    lines = iter_lines(source)
    try:
        for lineno, body in lines:
            if lineno >= line:
                return False
            if isinstance(body, CaseError):
                continue
            try:
                raw = parse(body)
            except CaseError:
                continue
            if isinstance(raw, dict) and raw.get(key) == event_id:
                return True
        return False
    finally:
        lines.close()  # type: ignore[attr-defined]  # a generator: closes the file it opened


def _duplicate(event_id: str, name: str, line: int) -> CaseError:
    return CaseError(
        "log_invalid", f"duplicate event_id {event_id!r}", file=name, line=line, pointer="/event_id"
    )


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


def read_log(source: Source, *, dialect: str | Dialect = CANONICAL) -> Iterator[dict[str, Any]]:
    """Stream the canonical envelopes of a log file or binary stream.

    Raises ``CaseError("log_invalid")`` with file, line and pointer at the first problem; a
    repeated event_id at the line that repeats it (spec/thread-log.md 5.5).
    """
    checker = LogChecker(dialect)
    name = source_name(source)
    for lineno, body in iter_lines(source):
        if isinstance(body, CaseError):
            raise body
        raw = parse(body, code="log_invalid", file=name, line=lineno)
        try:
            check_line_value(body, raw)
            ev = checker.check(raw)
        except CaseError as exc:
            raise exc.at(file=name, line=lineno) from None
        if checker.last_repeated and _repeats_earlier(
            source, checker.dialect, ev["event_id"], lineno
        ):
            raise _duplicate(ev["event_id"], name, lineno)
        yield ev


def check_events(
    events: Iterable[dict[str, Any]], *, dialect: str | Dialect = CANONICAL
) -> Iterator[dict[str, Any]]:
    """Check in-memory envelopes as :func:`read_log` checks lines; locations say ``event N``
    (0-based index) instead of a line. Each envelope goes through the strict JSON rules by
    way of its canonical bytes, so a value a file could not hold is refused too."""
    checker = LogChecker(dialect)
    seen: set[str] = set()
    for index, ev in enumerate(events):
        try:
            check_depth(canonical_line(ev), ev)
            out = checker.check(ev)
        except CaseError as exc:
            if exc.code == "unsafe_value":
                exc = CaseError("log_invalid", exc.message, pointer=exc.location.pointer)
            raise exc.at(file=f"event {index}") from None
        if out["event_id"] in seen:
            raise CaseError(
                "log_invalid",
                f"duplicate event_id {out['event_id']!r}",
                file=f"event {index}",
                pointer="/event_id",
            )
        seen.add(out["event_id"])
        yield out


def reduce_log(source: Source, *, dialect: str | Dialect = CANONICAL) -> State:
    """Read, check and reduce a log file; returns the canonical state (spec/reducer.md).

    Raises ``CaseError("log_invalid")`` with file and line for any reader or reducer refusal.
    """
    reducer = Reducer(copy_data=False)
    name = source_name(source)
    for line, ev in enumerate(read_log(source, dialect=dialect), 1):
        try:
            reducer.apply(ev)
        except CaseError as exc:
            raise exc.at(file=name, line=line) from None
    return cast(State, reducer.state)


def validate_log(source: Source, *, dialect: str | Dialect = CANONICAL) -> list[Problem]:
    """Every problem of a log, not only the first: line rules, strict JSON, schema, thread_id,
    seq, duplicates and reducer rules. An event with a problem is skipped and checking goes
    on with the next line (an unreadable line counts as holding the next seq, so it gives one
    problem, not a seq gap after it). Reducer rules go on without the skipped events, so an
    event that depended on a skipped one is reported too. Returns ``[]`` for a valid log."""
    return inspect_log(source, dialect=dialect)[1]


def inspect_log(
    source: Source, *, dialect: str | Dialect = CANONICAL
) -> tuple[list[dict[str, Any]], list[Problem]]:
    """:func:`validate_log` that also keeps the canonical events it read (the events that
    passed the reader's checks, in order): ``(events, problems)``. The case loader uses it to
    read each log of a case once."""
    d = get_dialect(dialect) if isinstance(dialect, str) else dialect
    name = source_name(source)
    problems: list[Problem] = []
    events: list[dict[str, Any]] = []
    checker = LogChecker(d)
    seqs = _SeqFollower(checker, d)
    reducer = Reducer(copy_data=False)
    known: set[str] | None = None  # every kept event_id, from the first repeated hash on
    try:
        for lineno, body in iter_lines(source):
            expected = checker._next_seq
            raw: Any = None
            try:
                if isinstance(body, CaseError):
                    raise body
                raw = parse(body, code="log_invalid", file=name, line=lineno)
                seqs.before(raw)
                check_line_value(body, raw)
                ev = checker.check(raw)
            except CaseError as exc:
                seqs.refused(raw, expected)
                problems.append(exc.at(file=name, line=lineno).problem())
                continue
            if checker.last_repeated:
                # the events kept so far are in memory: a set of their ids answers, where
                # reading the file again per repeat made a log of many duplicates quadratic
                known = known if known is not None else {e["event_id"] for e in events}
                if ev["event_id"] in known:
                    problems.append(_duplicate(ev["event_id"], name, lineno).problem())
                    continue
            events.append(ev)
            if known is not None:
                known.add(ev["event_id"])
            if reducer.state["last_seq"] is not None:
                # events skipped above are absent from the fold: judge this one on its own
                reducer.state["last_seq"] = ev["seq"] - 1
            try:
                reducer.apply(ev)
            except CaseError as exc:
                # the reducer refused this event and kept its state; move past it so that
                # the next event is judged on its own
                reducer.state["last_seq"] = ev["seq"]
                reducer.state["last_event_id"] = ev["event_id"]
                problems.append(exc.at(file=name, line=lineno).problem())
    except CaseError as exc:  # the file itself could not be opened
        problems.append(exc.problem())
        return events, problems
    return events, problems


class _SeqFollower:
    """How :func:`inspect_log` keeps counting seq past a refused line, so that one mistake
    gives one problem: a line that says no seq held the next one; a line whose seq is too
    high is a gap (the lines after it go on from its seq) or a typo (the next line has the
    seq that was expected after it), and the next line tells which."""

    def __init__(self, checker: LogChecker, d: Dialect) -> None:
        self.checker, self.d = checker, d
        self.typo_next: int | None = None  # after a seq too high: the next line's if a typo

    def seq_of(self, raw: Any) -> int | None:
        ok = isinstance(raw, dict) and _decodes(self.d, raw)
        seq = self.d.decode_event(raw).get("seq") if ok else None
        return seq if isinstance(seq, int) and not isinstance(seq, bool) else None

    def before(self, raw: Any) -> None:
        """Called with each line read, before its checks."""
        if self.typo_next is not None and self.seq_of(raw) == self.typo_next:
            self.checker._next_seq = self.typo_next  # the line before had a mistyped seq
        self.typo_next = None

    def refused(self, raw: Any, expected: int) -> None:
        """The line that should hold seq ``expected`` was refused (``raw``: its value, None
        when it did not read as JSON)."""
        self.typo_next = None
        seq = self.seq_of(raw) if raw is not None else None
        if seq is not None and seq >= expected:
            self.typo_next = expected + 1 if seq > expected else None
            self.checker._next_seq = seq + 1
        if self.checker._next_seq == expected:
            self.checker._next_seq += 1  # an unreadable line held the next event


def _decodes(d: Dialect, raw: dict[str, Any]) -> bool:
    try:
        d.decode_event(raw)
    except CaseError:
        return False
    return True


def encode_log(events: Iterable[dict[str, Any]], *, dialect: str | Dialect = CANONICAL) -> bytes:
    """The canonical bytes of a log in ``dialect`` (one JCS line per event, ``\\n`` ends)."""
    sink = io.BytesIO()
    dump_log(events, sink.write, dialect=dialect)
    return sink.getvalue()


def dump_log(
    events: Iterable[dict[str, Any]],
    write: Callable[[bytes], object],
    *,
    dialect: str | Dialect = CANONICAL,
) -> None:
    """Give the canonical lines of a log (as :func:`encode_log`) to ``write`` one by one:
    memory is one line, not the log and a list of its lines (a 268 MB log took 2x its size).
    Raises ``CaseError("unsafe_value")`` at the first event canonical JSON cannot hold."""
    d = get_dialect(dialect) if isinstance(dialect, str) else dialect
    for ev in events:
        write(canonical_line(d.encode_event(ev)))
        write(b"\n")


def reduce(
    events: Source | Iterable[dict[str, Any]], *, dialect: str | Dialect = CANONICAL
) -> State:
    """Reduce a log to its canonical state (spec/reducer.md).

    ``events`` is a path or binary stream of a JSON Lines log, or an iterable of envelope
    dicts in ``dialect``. Everything is checked as the log reader checks it. Returns the
    canonical state (``get_dialect(name).encode_state`` spells it in another dialect).
    Raises ``CaseError("log_invalid")`` with a file and line (or ``event N``) and a pointer.
    """
    if isinstance(events, (str, os.PathLike)) or hasattr(events, "readline"):
        return reduce_log(events, dialect=dialect)  # type: ignore[arg-type]
    reducer = Reducer()
    for index, ev in enumerate(check_events(events, dialect=dialect)):
        try:
            reducer.apply(ev)
        except CaseError as exc:
            raise exc.at(file=f"event {index}") from None
    return cast(State, reducer.state)
