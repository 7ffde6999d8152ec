"""Thread logs: reading, checking and writing JSON Lines event logs (spec/thread-log.md).

A log is strict JSON Lines, one event envelope per line, in one dialect. Reading turns each
line into a *canonical* envelope (``threads-py`` keys)::

    {"event_id": str, "thread_id": str, "seq": int, "type": str, "actor_kind": str,
     "epoch": int, "branch_id": str, "critical": bool, "ts": str, "data": {...}}

and checks, in this order: the strict JSON rules (spec/strict-json.md), the dialect's key
spelling, ``schemas/event.schema.json`` (envelope, then the data of the type), one thread_id,
seq 0, 1, 2, ... without gaps, and unique event_ids. Every refusal is
``CaseError("log_invalid")`` with the file, the line and a JSON pointer.

The per-line checks are :class:`~threads_cases.core.eventcheck.LogChecker`'s (one compiled
check for a valid line). A repeated event_id hash is confirmed against the earlier lines at
once, so a repeat is reported at its own line, before any later problem (the earliest
offending line, as every implementation reports it).
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any, cast

from .canonical import canonical_line, dump_object_document
from .dialects import CANONICAL, Dialect, get_dialect
from .errors import CaseError, Problem
from .eventcheck import LogChecker, check_depth
from .events import Event
from .reducer import Reducer
from .shapes import JsonObject, State
from .strictjson import iter_blocks, iter_lines, line_rules, parse, source_name

Source = str | os.PathLike[str] | IO[bytes]


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


def _log_bytes(source: Source) -> int:
    """The size of a log given as a path (0 when it is a stream or cannot be read: the
    reader then reports that itself), for :class:`LogChecker`'s table of event ids."""
    if isinstance(source, (str, os.PathLike)):
        try:
            return os.stat(source).st_size
        except OSError:
            return 0
    return 0


def _duplicate(event_id: str, name: str, line: int) -> CaseError:
    return CaseError(
        "log_invalid", f"duplicate event_id {event_id!r}", file=name, line=line, pointer="/event_id"
    )


def read_log(source: Source, *, dialect: str | Dialect = CANONICAL) -> Iterator[Event]:
    """Stream the canonical envelopes of a log file or binary stream.

    Raises ``CaseError("log_invalid")`` with file, line and pointer at the first problem; a
    repeated event_id at the line that repeats it (spec/thread-log.md 5.5).
    """
    checker = LogChecker(dialect, log_bytes=_log_bytes(source))
    name = source_name(source)
    fast, lineno = checker.fast_line, 0
    for lines in iter_blocks(source):
        for body in lines:
            lineno += 1
            ev = fast(body)
            if ev is None:
                ev = _exact_line(checker, body, name, lineno)
            if checker.last_repeated and _repeats_earlier(
                source, checker.dialect, ev["event_id"], lineno
            ):
                raise _duplicate(ev["event_id"], name, lineno)
            yield cast(Event, ev)


def _exact_line(checker: LogChecker, body: bytes, name: str, lineno: int) -> dict[str, Any]:
    """A line the compiled check passed on, by the rules one by one: the line rules, then
    :meth:`LogChecker.exact_line` (the same refusals as :func:`iter_lines` and
    :meth:`LogChecker.check_line` give)."""
    ruled = line_rules(body, lineno, "log_invalid", name)
    if isinstance(ruled, CaseError):
        raise ruled
    return checker.exact_line(body, name, lineno)


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
    return cast(State, _fold(source, dialect, Reducer(copy_data=False)))


def write_reduced(
    source: Source, write: Callable[[bytes], object], *, dialect: str | Dialect = CANONICAL
) -> None:
    """Reduce a log (as :func:`reduce_log`) and write its state in ``dialect`` as a canonical
    document (``canonical_document(get_dialect(d).encode_state(reduce_log(...)))``, the same
    bytes) to ``write``. Each message but the last is held as its JSON text while the log is
    read, and the document is written a message at a time: memory is about the size of the
    state's JSON, not of its Python values (about 4.5x that; issue 37).

    Raises ``CaseError("log_invalid")`` as :func:`reduce_log` does, before writing anything.
    """
    d = get_dialect(dialect) if isinstance(dialect, str) else dialect
    state = _fold(source, d, Reducer(copy_data=False, freeze=True))
    dump_object_document(d.encode_state(state), write)


def _fold(source: Source, dialect: str | Dialect, reducer: Reducer) -> dict[str, Any]:
    """The loop of :func:`reduce_log`: read_log's with ``reducer`` inside it (one pass, no
    generator between them); returns the reducer's state."""
    checker = LogChecker(dialect, log_bytes=_log_bytes(source))
    name = source_name(source)
    fast, apply, lineno = checker.fast_line, reducer.apply_read, 0
    with _cycle_collector_paused():
        for lines in iter_blocks(source):
            for body in lines:
                lineno += 1
                ev = fast(body)
                if ev is None:
                    ev = _exact_line(checker, body, name, lineno)
                if checker.last_repeated and _repeats_earlier(
                    source, checker.dialect, ev["event_id"], lineno
                ):
                    raise _duplicate(ev["event_id"], name, lineno)
                try:
                    apply(ev)
                except CaseError as exc:
                    raise exc.at(file=name, line=lineno) from None
    return reducer.state


@contextlib.contextmanager
def _cycle_collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused, then resumed as it was. Parsed JSON and the
    reducer's state hold no reference cycles, so a collection frees nothing there, while each
    one walks every container the growing state holds: on a 100,000-event log the collections
    took about a seventh of reduce's time (benchmarks/README.md)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def validate_log(source: Source, *, dialect: str | Dialect = CANONICAL) -> list[Problem]:
    """Every problem of a log, not only the first: line rules, strict JSON, schema, thread_id,
    seq, duplicates and reducer rules. An event with a problem is skipped and checking goes
    on with the next line (an unreadable line counts as holding the next seq, so it gives one
    problem, not a seq gap after it). Reducer rules go on without the skipped events, so an
    event that depended on a skipped one is reported too. Returns ``[]`` for a valid log."""
    return inspect_log(source, dialect=dialect)[1]


def inspect_log(
    source: Source, *, dialect: str | Dialect = CANONICAL, reducer: Reducer | None = None
) -> tuple[list[dict[str, Any]], list[Problem]]:
    """:func:`validate_log` that also keeps the canonical events it read (the events that
    passed the reader's checks, in order): ``(events, problems)``. The case loader uses it to
    read and reduce each log of a case once: ``reducer`` (a fresh ``Reducer(copy_data=False)``)
    is the one the log is folded into, which holds the log's state when there is no problem
    (with problems, the state of the events that passed, for reporting only)."""
    d = get_dialect(dialect) if isinstance(dialect, str) else dialect
    name = source_name(source)
    problems: list[Problem] = []
    events: list[dict[str, Any]] = []
    checker = LogChecker(d, log_bytes=_log_bytes(source))
    seqs = _SeqFollower(checker, d)
    reducer = reducer if reducer is not None else Reducer(copy_data=False)
    known: set[str] | None = None  # every kept event_id, from the first repeated hash on
    try:
        for lineno, body in iter_lines(source):
            expected = checker._next_seq
            raw: Any = None
            try:
                if isinstance(body, CaseError):
                    raise body
                # the compiled check, unless the line before left a seq question open
                ev = checker.fast_line(body) if seqs.typo_next is None else None
                if ev is None:
                    raw = parse(body, code="log_invalid", file=name, line=lineno)
                    seqs.before(raw)
                    ev = checker.check_value(raw, body)
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


def encode_log(events: Iterable[Event], *, dialect: str | Dialect = CANONICAL) -> bytes:
    """The canonical bytes of a log in ``dialect`` (one JCS line per event, ``\\n`` ends)."""
    sink = io.BytesIO()
    dump_log(cast(Iterable[dict[str, Any]], events), sink.write, dialect=dialect)
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
    events: Source | Iterable[Event] | Iterable[JsonObject],
    *,
    dialect: str | Dialect = CANONICAL,
) -> State:
    """Reduce a log to its canonical state (spec/reducer.md).

    ``events`` is a path or binary stream of a JSON Lines log, or an iterable of envelope
    dicts in ``dialect``: :data:`threads_cases.Event` in the canonical one, the same keys
    spelled as the dialect says otherwise (spec/dialects.md). Everything is checked as the
    log reader checks it. Returns the canonical state (``get_dialect(name).encode_state``
    spells it in another dialect).
    Raises ``CaseError("log_invalid")`` with a file and line (or ``event N``) and a pointer.
    """
    if isinstance(events, (str, os.PathLike)) or hasattr(events, "readline"):
        return reduce_log(events, dialect=dialect)  # type: ignore[arg-type]
    reducer = Reducer()
    given = cast(Iterable[dict[str, Any]], events)
    for index, ev in enumerate(check_events(given, dialect=dialect)):
        try:
            reducer.apply(ev)
        except CaseError as exc:
            raise exc.at(file=f"event {index}") from None
    return cast(State, reducer.state)
