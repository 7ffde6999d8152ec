"""Transcript lines read the way their writer reads them, and damaged lines recovered
(spec/importers.md section 4).

Claude Code and the Codex CLI write JSON Lines that a strict reader (spec/strict-json.md)
refuses in a few ways their own runtime accepts. :func:`read_line` reads one line as
JavaScript's ``JSON.parse`` does and says what it had to change:

* a repeated key keeps its last value (``duplicate_key``);
* an integer token beyond +-(2^53-1) becomes the JavaScript number (the nearest double).
  Doubles from 1e21 up are kept as numbers; below 1e21 the strict writer cannot write them
  (strict-json.md 4.1), so the value becomes the string of the JavaScript number's digits,
  for example ``1234567890123456789`` -> ``"1234567890123456800"`` (``big_integer``);
* a lone surrogate escape becomes U+FFFD (``lone_surrogate``); invalid UTF-8 bytes become
  U+FFFD as Node's UTF-8 decoder makes them (``invalid_utf8``).

A line nested so deep that reading it exhausts the reader's recursion (far past the 256
levels strict JSON allows) is skipped as ``too_deep``, not taken for a record cut short.

It also recovers what crashes and interrupted writes leave behind:

* NUL bytes (a run before a record, or a block of NULs at the end of the file) are dropped
  (``nul_bytes``); a line of NULs only is skipped;
* several records on one line (``}{`` joins, or a record cut short with the next record
  starting on the same line) are split where each piece reads as a whole record (an object
  with a string ``type``) ending at the end of the line or at the start of the next piece
  (``joined_records``); what cannot be read is skipped (``cut_record``). A cut record or a
  line of NULs that reaches the end of the line is a :class:`Note` with ``at_end``: a file
  whose last line is one stopped in the middle of a write.

Each change is a :class:`Note`: ``code`` is ``import_repaired`` (the record was kept,
changed) or ``import_skipped`` (bytes were dropped), ``reason`` one of the words above.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import orjson

from ..core.errors import pointer_join

MAX_SAFE_INTEGER = 2**53 - 1
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_RECORD_START = re.compile(r"\{\s*\"")
_DECODER = json.JSONDecoder()
#: bytes translated so that each ASCII digit is 0 and every other byte 1: a run of 20 zeros
#: is a run of 20 digits, the shortest integer token orjson may read as a double (beyond
#: 2^64); found with ``in`` (C speed, where a regular expression scans 10x slower than
#: orjson parses)
_DIGITS = bytes(0 if 48 <= i <= 57 else 1 for i in range(256))
_RUN = bytes(20)


@dataclass(frozen=True)
class Note:
    """One repair or skip: ``code`` (``import_repaired`` | ``import_skipped``), ``reason``
    (a short word, see the module docstring) and a one-line ``message``."""

    code: str
    reason: str
    message: str
    #: a ``cut_record`` (or a line of NULs only) that reaches the end of the line: the line
    #: does not end with a whole record
    at_end: bool = field(default=False, compare=False)


class _Unreadable(ValueError):
    pass


def js_integer(token: str) -> float | str:
    """The value JavaScript holds for an integer token beyond +-(2^53-1): a double from 1e21
    up, else the decimal string of that double (``"1234567890123456800"``)."""
    f = float(int(token))
    if math.isinf(f) or abs(f) >= 1e21:
        return f
    return str(int(Decimal(repr(f))))


class _JsReader:
    """One ``json.loads`` with JSON.parse's rules, collecting :class:`Note` s."""

    def __init__(self) -> None:
        self.notes: list[Note] = []

    def pairs(self, items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in items:
            if k in out:
                self.notes.append(
                    Note("import_repaired", "duplicate_key", f"key {k!r} repeated: last value kept")
                )
            out[k] = v
        return out

    def integer(self, token: str) -> int | float | str:
        n = int(token)
        if -MAX_SAFE_INTEGER <= n <= MAX_SAFE_INTEGER:
            return n
        v = js_integer(token)
        self.notes.append(
            Note(
                "import_repaired",
                "big_integer",
                f"integer {token} is beyond 2^53: kept as the JavaScript number {v!r}",
            )
        )
        return v

    def number(self, token: str) -> float:
        f = float(token)
        if math.isinf(f):
            raise _Unreadable(f"number {token} is out of the range of a double")
        return f

    def constant(self, token: str) -> Any:
        raise _Unreadable(f"{token} is not JSON")

    def loads(self, text: str, start: int = 0) -> tuple[Any, int]:
        decoder = json.JSONDecoder(
            object_pairs_hook=self.pairs,
            parse_int=self.integer,
            parse_float=self.number,
            parse_constant=self.constant,
        )
        value, end = decoder.raw_decode(text, start)
        if _SURROGATE_ESCAPE.search(text, start, end):
            value = self._fix_surrogates(value)
        return value, end

    def _fix_surrogates(self, value: Any, path: tuple[str | int, ...] = ()) -> Any:
        """``value`` with every lone surrogate replaced by U+FFFD, one note per string
        repaired, naming its JSON pointer (a key repaired is named by its object's)."""
        if isinstance(value, str):
            if _SURROGATE.search(value):
                where = pointer_join(path) or "the top-level value"
                self.notes.append(
                    Note(
                        "import_repaired",
                        "lone_surrogate",
                        f"lone surrogate replaced by U+FFFD at {where}",
                    )
                )
                return _SURROGATE.sub("\ufffd", value)
            return value
        if isinstance(value, list):
            return [self._fix_surrogates(v, (*path, i)) for i, v in enumerate(value)]
        if isinstance(value, dict):
            out = {}
            for k, v in value.items():
                key = self._fix_surrogates(k, path)
                out[key] = self._fix_surrogates(v, (*path, key))
            return out
        return value


#: a run of 20 digits puts 5 digits in a row among the bytes at every 4th place (20 places in
#: a row hold exactly 5 multiples of 4), so a sample of a quarter of the text rules it out
_SAMPLE_RUN = bytes(5)
#: places of the sample checked one by one before the whole text is translated
_LOCAL_CHECKS = 16


def long_integer_in(text: str | bytes) -> bool:
    """Whether ``text`` may hold an integer token orjson reads as a double (20 digits in a
    row): when not, ``orjson.loads`` reads every integer of it exactly. Every 4th byte is
    looked at first (a quarter of the translating); the places where it finds 5 digits in a
    row are looked at closely, and past a few of them the whole text is."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    sample = data[::4].translate(_DIGITS)
    at = sample.find(_SAMPLE_RUN)
    for _ in range(_LOCAL_CHECKS):
        if at < 0:
            return False
        # a run of 20 whose multiples of 4 are 4*at .. 4*at+16 starts at 4*at-3 or later and
        # ends at 4*at+19 or earlier
        if _RUN in data[max(0, 4 * at - 3) : 4 * at + 20].translate(_DIGITS):
            return True
        at = sample.find(_SAMPLE_RUN, at + 1)
    return at >= 0 and _RUN in data.translate(_DIGITS)


def loads_exact(text: str | bytes) -> Any:
    """``orjson.loads(text)``, except that every integer keeps its exact value: orjson reads
    an integer token beyond 64 bits as a double, silently, so a text holding one is read
    again by a reader that keeps it (the caller then applies section 4's ``big_integer``
    rule, :func:`..arguments.js_numbers`, where the value needs it). Raises
    ``orjson.JSONDecodeError`` where orjson does."""
    value = orjson.loads(text)
    if not long_integer_in(text):
        return value
    try:  # orjson read it: the same JSON, only the integers read exactly
        return json.loads(text)
    except (ValueError, RecursionError):
        return value


def js_loads(text: str) -> tuple[Any, list[Note]]:
    """One whole JSON text read as ``JSON.parse`` reads it: ``(value, notes)``.
    Raises ``ValueError`` when JSON.parse would refuse it too."""
    reader = _JsReader()
    value, end = reader.loads(text)
    if text[end:].strip():
        raise _Unreadable("unexpected content after the value")
    return value, reader.notes


def _piece_at(text: str, pos: int) -> tuple[Any, int, list[Note]] | None:
    """A whole record starting at ``pos`` and ending at the end or before the next ``{``."""
    reader = _JsReader()
    try:
        value, end = reader.loads(text, pos)
    except (ValueError, RecursionError):
        return None
    rest = text[end:].lstrip()
    if rest and not rest.startswith("{"):
        return None
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        return None
    return value, len(text) - len(rest), reader.notes


def _split(text: str) -> tuple[list[Any], list[Note]]:
    """The records of a line holding several, some possibly cut short."""
    values: list[Any] = []
    notes: list[Note] = []
    pos = len(text) - len(text.lstrip())
    while pos < len(text):
        got = _piece_at(text, pos)
        if got is not None:
            values.append(got[0])
            notes.extend(got[2])
            pos = got[1]
            continue
        nxt = None
        for m in _RECORD_START.finditer(text, pos + 1):
            if _piece_at(text, m.start()) is not None:
                nxt = m.start()
                break
        end = len(text) if nxt is None else nxt
        notes.append(
            Note(
                "import_skipped",
                "cut_record",
                f"{end - pos} character(s) that are not a whole record (a record cut short)",
                at_end=nxt is None,
            )
        )
        pos = end
    if len(values) > 1:
        notes.append(
            Note("import_repaired", "joined_records", f"{len(values)} records joined on one line")
        )
    return values, notes


def read_line(body: bytes) -> tuple[list[Any], list[Note]]:
    """The records of one transcript line as its writer reads them, and what was changed.

    ``body`` is the line without its end. Returns ``(values, notes)``: usually one value;
    none for a line that holds nothing readable; several for records joined on one line.
    """
    notes: list[Note] = []
    if b"\x00" in body:
        n = body.count(b"\x00")
        body = body.replace(b"\x00", b"")
        if not body.strip():
            only = f"a line of {n} NUL byte(s) only"
            return [], [Note("import_skipped", "nul_bytes", only, at_end=True)]
        notes.append(Note("import_repaired", "nul_bytes", f"{n} NUL byte(s) dropped"))
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        text = body.decode("utf-8", "replace")
        notes.append(Note("import_repaired", "invalid_utf8", "invalid UTF-8 replaced by U+FFFD"))
    text = text.removeprefix("\ufeff")
    try:
        value, more = js_loads(text)
        return [value], notes + more
    except RecursionError:  # whole, but nested past what a reader can follow: not cut short
        deep = "a record nested too deep to read (far past the 256 levels of strict JSON)"
        return [], [*notes, Note("import_skipped", "too_deep", deep)]
    except ValueError:
        pass
    values, more = _split(text)
    return values, notes + more
