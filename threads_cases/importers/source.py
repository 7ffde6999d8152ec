"""What every transcript reader shares: the file, its records, and what to do with a bad line.

A format reader (:class:`~threads_cases.importers.claude_code.ClaudeCodeSource`,
:class:`~threads_cases.importers.codex.CodexSource`) reads its file twice. The first pass
(:meth:`TranscriptSource._records`) reads every line into records, checks them, collects the
header (thread id, model, tools) and marks in ``self.keep`` (one mark per record) the
records the second pass maps; the second pass (``items()``, fed by :meth:`_kept`) yields
:class:`~threads_cases.importers.common.Turn` and
:class:`~threads_cases.importers.common.Extra` items from the kept records only.

A line is read strictly first (spec/strict-json.md, the fast path). A line the strict reader
refuses is read as its writer reads it and recovered where it is damaged
(:func:`~threads_cases.importers.lenient.read_line`): each repair and skip is an
:class:`~threads_cases.importers.common.ImportWarning` in ``stats.warnings`` with its line.
With ``strict`` the first such line raises ``import_invalid`` instead (spec/importers.md
section 4). A record whose ``timestamp`` is present but not a real time is refused in both
modes with ``log_invalid`` (never repaired: a guessed time would be a lie in the log).
Reason codes: ``io_error`` (unreadable transcript), ``import_invalid``, ``log_invalid``.
"""

from __future__ import annotations

import contextlib
import gc
import os
import weakref
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from ..core.errors import CaseError
from ..core.files import MAX_LOG_BYTES, open_regular
from ..core.strictjson import parse
from ..core.timestamps import valid_ts_ms
from .common import Stats, check_timestamp, import_error, parse_ts_ms, stats_for
from .lenient import read_line

#: ``times`` of a record without a time (below every valid time, MIN_MS)
NO_TIME = -(2**63)
#: bytes read at a time by both passes (:meth:`TranscriptSource._spans`)
CHUNK = 1 << 19
#: pass 1 keeps the values it read of the first this many bytes of lines, so that pass 2
#: parses no line a second time; past it (a transcript this large) pass 2 parses the rest
#: of the lines again, so memory stays bounded by about this much JSON
HOLD_BYTES = 256 << 20


def _nothing() -> None:
    """No freeze to end."""


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """The garbage collector off inside the block, as it was after (``gc.disable``)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class TranscriptSource:
    """A transcript file read as JSON Lines records, with the keep marks of the first pass.

    ``path`` is the file, ``stats`` collects what was repaired and skipped; ``strict`` refuses
    (``import_invalid``) the first line that is not strict JSON or is malformed, where the
    default repairs or skips it with a warning.
    """

    format = ""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        strict: bool = False,
        stats: Stats | None = None,
    ) -> None:
        self.path = Path(path)
        self.file = str(path)
        self.stats = stats_for(stats, strict=strict, file=str(path))
        self.strict = strict
        self.keep = bytearray()
        self.times = array("q")  # per record: its time in ms, or NO_TIME
        #: the records of the lines read leniently (none for a blank line); pass 2 parses
        #: the other lines again
        self._read: dict[int, list[Any]] = {}
        #: whether the file ends in a damaged record (its last line that is not blank was
        #: cut short or is a block of NULs): the writer stopped in the middle of a write, so
        #: the turn open at the end may be cut short (spec/importers.md section 1)
        self.cut_at_end = False
        self._blank: set[int] = set()  # blank line numbers (off the fast path)
        self._cut: set[int] = set()  # lines that do not end with a whole record
        #: per record: its value as pass 1 read it, while the lines held stay within
        #: :data:`HOLD_BYTES` (None past it: pass 2 parses those lines again), and its line
        self._values: list[Any] = []
        self._linenos = array("q")
        #: whether every record's value is held: pass 2 then reads no line of the file
        self._all_held = True
        #: ends the freeze of what pass 1 read (:meth:`_records`)
        self._thaw: Callable[[], Any] = _nothing

    def _open(self) -> IO[bytes]:
        """The transcript, opened for reading its lines; ``io_error`` when unreadable."""
        # both passes read CHUNK bytes at a time (:meth:`_spans`), past this buffer
        return open_regular(self.path, code="io_error", limit=MAX_LOG_BYTES, buffering=1 << 18)

    def _spans(self) -> Iterator[tuple[int, bytes, memoryview, int, int]]:
        """``(line number from 1, chunk, a view of it, start, end)``: the line is
        ``chunk[start:end]``, without its ``\\n``, the lines of the file as iterating it
        gives them. The file is read in chunks of :data:`CHUNK` bytes and a line is not
        copied out of its chunk (a line across two chunks is joined into one of its own)."""
        lineno = 0
        parts: list[bytes] = []  # the start of a line cut by the end of its chunk
        with self._open() as fh:
            while data := fh.read(CHUNK):
                pos = 0
                if parts:
                    nl = data.find(b"\n")
                    if nl < 0:
                        parts.append(data)
                        continue
                    parts.append(data[:nl])
                    line = b"".join(parts)
                    parts = []
                    lineno += 1
                    yield lineno, line, memoryview(line), 0, len(line)
                    pos = nl + 1
                view = memoryview(data)
                find = data.find
                nl = find(b"\n", pos)
                while nl >= 0:
                    lineno += 1
                    yield lineno, data, view, pos, nl
                    pos = nl + 1
                    nl = find(b"\n", pos)
                if pos < len(data):
                    parts.append(data[pos:])
        if parts:  # the last line, without a newline
            line = b"".join(parts)
            yield lineno + 1, line, memoryview(line), 0, len(line)

    def _kind_of(self, body: bytes) -> str:
        """The line type named in an unreadable line, for the error message."""
        return "unparseable"

    def _records(self) -> Iterator[tuple[int, int, Any]]:
        """:meth:`_read_all` with the cyclic garbage collector paused: the values pass 1
        holds are trees of dicts and lists without cycles, and counting them as they pile up
        would start a collection every few hundred records that walks them all again (as
        much time as the second parse they save)."""
        with gc_paused():
            yield from self._read_all()
            if self._all_held:
                # what pass 1 holds leaves the collector's generations until pass 2 is done
                # (or the source is dropped): it is freed by reference counting as it goes
                gc.freeze()
                self._thaw = weakref.finalize(self, gc.unfreeze)

    def _read_all(self) -> Iterator[tuple[int, int, Any]]:
        """Pass 1: ``(record index, line number, value)`` for every record of the file; each
        record gets a keep mark (0) the caller sets with ``self.keep[index] = 1``, and its time
        (milliseconds, or :data:`NO_TIME`) in ``self.times`` for pass 2.

        The usual line is decided by one orjson round trip (strictjson.parse's own fast path,
        inlined: the text orjson writes back byte for byte is strict JSON) and the usual time
        by a table look-up; anything else goes through :meth:`_other_line`, which refuses or
        accepts it exactly as :func:`parse` and :func:`check_timestamp` do."""
        keep, times, values, linenos = self.keep, self.times, self._values, self._linenos
        hold, held = values.append, linenos.append
        all_held = True
        loads, dumps, strict_int = orjson.loads, orjson.dumps, orjson.OPT_STRICT_INTEGER
        lineno = 0
        budget = HOLD_BYTES
        for lineno, chunk, view, start, end in self._spans():
            budget -= end - start
            if budget < 0 and all_held:  # hold no more: pass 2 parses the rest again
                all_held = self._all_held = False
            # the line is compared in place: no copy of it is made unless it leaves the fast
            # path (a "\r" before its "\n" is JSON whitespace: loads reads the same value)
            try:
                value = loads(view[start:end])
                text = dumps(value, option=strict_int)
                same = (len(text) == end - start and chunk.startswith(text, start)) or (
                    text == chunk[start:end].rstrip(b"\r\n")
                )
            except (orjson.JSONDecodeError, orjson.JSONEncodeError, TypeError):
                same = False
            if same and type(value) is dict:
                ts = value.get("timestamp")
                ms = valid_ts_ms(ts) if type(ts) is str else None
                if ms is None:
                    check_timestamp(value, file=self.file, line=lineno)
                    ms = parse_ts_ms(ts)
                keep.append(0)
                times.append(NO_TIME if ms is None else ms)
                hold(value if all_held else None)
                held(lineno)
                yield len(keep) - 1, lineno, value
                continue
            for v in self._other_line(lineno, chunk[start:end].rstrip(b"\r\n")):
                check_timestamp(v, file=self.file, line=lineno)
                ms = parse_ts_ms(v.get("timestamp")) if isinstance(v, dict) else None
                keep.append(0)
                times.append(NO_TIME if ms is None else ms)
                values.append(v)  # held by self._read already
                held(lineno)
                yield len(keep) - 1, lineno, v
        while lineno in self._blank:
            lineno -= 1
        self.cut_at_end = lineno in self._cut

    def nothing_read(self) -> str | None:
        """Why the first pass read no record at all (an empty file, only blank lines, or no
        line readable as JSON), for a refusal that says so; None when it read one."""
        if self.keep:
            return None
        if not self._read:
            return "the file is empty"
        if all(not values for values in self._read.values()) and not self.stats.invalid:
            return "the file holds only blank lines"
        return "no line of the file could be read as a JSON record"

    def _other_line(self, lineno: int, body: bytes) -> list[Any]:
        """The records of a line off the fast path: none for a blank line, the strict
        reader's value, or (without ``strict``) what the lenient reader recovers, with its
        warnings; ``import_invalid`` with ``strict``."""
        st = self.stats
        if not body or body.isspace():
            st.skip("blank line")
            self._blank.add(lineno)
            self._read[lineno] = []  # pass 2 reads no record from it
            return []
        try:
            return [parse(body, code="import_invalid", file=self.file, line=lineno)]
        except CaseError as err:
            if self.strict:
                kind = self._kind_of(body)
                raise import_error(err.message, file=self.file, line=lineno, kind=kind) from None
        values, notes = read_line(body)
        for n in notes:
            st.warn(lineno, n.code, n.reason, n.message)
            if n.at_end:
                self._cut.add(lineno)
        if not values:
            st.invalid += 1
            st.skip("unreadable line")
        self._read[lineno] = values
        return values

    def _invalid(self, lineno: int, kind: str, message: str) -> None:
        """A malformed record: raise ``import_invalid`` with ``strict``, else skip it with an
        ``import_skipped`` warning."""
        if self.strict:
            raise import_error(message, file=self.file, line=lineno, kind=kind)
        self.stats.invalid += 1
        self.stats.skip("malformed line")
        self.stats.warn(lineno, "import_skipped", "invalid_line", f"{kind}: {message}")

    def _kept(self) -> Iterator[tuple[int, Any]]:
        """Pass 2: the records the first pass kept, ``(line number, value)``."""
        return ((lineno, v) for lineno, v, _ in self._kept_timed())

    def _kept_timed(self) -> Iterator[tuple[int, Any, int | None]]:
        """Pass 2: ``(line number, value, time in ms or None)`` of each kept record; the time
        is the first pass's reading of the record's ``timestamp``."""
        keep, read, times, held = self.keep, self._read, self.times, self._values
        if self._all_held:  # every line was parsed once, by pass 1: no line is read again
            linenos = self._linenos
            try:
                for idx in range(len(keep)):
                    if keep[idx]:
                        ms = times[idx]
                        yield linenos[idx], held[idx], None if ms == NO_TIME else ms
                    held[idx] = None  # freed as the mapping goes
            finally:
                self._thaw()
            self._all_held = False  # read again, pass 2 parses the lines
            return
        loads = orjson.loads
        idx = 0
        for lineno, _, view, start, end in self._spans():
            values = read.get(lineno)
            if values is None:
                if keep[idx]:
                    ms = times[idx]
                    value = held[idx] if held[idx] is not None else loads(view[start:end])
                    yield lineno, value, None if ms == NO_TIME else ms
                held[idx] = None
                idx += 1
                continue
            for v in values:
                if keep[idx]:
                    ms = times[idx]
                    yield lineno, v, None if ms == NO_TIME else ms
                idx += 1
