"""A JSON document cut short (a recording stopped in the middle of a write), closed where
its last whole value ends (spec/importers.md sections 9 and 10, "Cut short").

:func:`close_cut` scans the text once, keeping the containers open at each point, and
returns the document as it would read if the writer had closed every open array and object
right after the last value it finished: a string, number or literal cut in the middle is
dropped, an object is closed after its last whole member. It also returns the path (object
keys and array indices, outermost first) of the containers still open where the text
stops, so an importer knows which element of a list was cut (and drops it: it is partial).

It is the lenient path only: a document that reads as JSON never comes here, and ``--strict``
refuses a cut one instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import orjson

from .lenient import loads_exact
from .wrong_format import HEAD, not_text

_WS = re.compile(r"[ \t\r\n]*")
_STRING = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"', re.DOTALL)
#: deeper than strict JSON's 256 levels is no document a writer closes: not recovered
MAX_DEPTH = 512
_SCALAR = re.compile(r"[^\s\[\]{},:\"]+")


@dataclass
class _Open:
    closer: str
    key: str | int | None  # the member being read (object) or the element index (array)
    expect_key: bool


@dataclass(frozen=True)
class Cut:
    """A cut document closed: ``value``, ``open_path`` (the keys and indices of the
    containers open where the text stops, outermost first) and ``offset`` (how many
    characters of the text were kept)."""

    value: Any
    open_path: list[str | int]
    offset: int


class _Scan:
    """One pass over a document: the containers open at each point and the last point where
    every value read is whole (``best``: its offset and the closers it needs)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.stack: list[_Open] = []
        self.best: tuple[int, str] | None = None
        self.pos = self._ws(0)

    def _ws(self, pos: int) -> int:
        return _WS.match(self.text, pos).end()  # type: ignore[union-attr]

    def _whole(self) -> None:
        self.best = self.pos, "".join(o.closer for o in reversed(self.stack))

    def _close(self) -> bool:
        """A ``]`` or ``}``: False when the document ends here (or does not match)."""
        if not self.stack:
            return False
        self.stack.pop()
        self.pos += 1
        if not self.stack:
            self.best = (self.pos, "")
            return False
        self._whole()
        return True

    def _comma(self) -> bool:
        if not self.stack:
            return False
        top = self.stack[-1]
        if top.closer == "]":
            top.key = int(top.key or 0) + 1
        else:
            top.expect_key = True
        self.pos += 1
        return True

    def _string(self) -> bool:
        m = _STRING.match(self.text, self.pos)
        if m is None:
            return False  # a string cut in the middle
        self.pos = m.end()
        cur = self.stack[-1] if self.stack else None
        if cur is not None and cur.closer == "}" and cur.expect_key:
            try:
                cur.key = orjson.loads(m.group())
            except orjson.JSONDecodeError:
                return False
            cur.expect_key = False
        elif self._ws(self.pos) < len(self.text):
            self._whole()
        return True

    def _scalar(self) -> bool:
        m = _SCALAR.match(self.text, self.pos)
        if m is None:
            return False
        self.pos = m.end()
        if self._ws(self.pos) < len(self.text):
            self._whole()  # a number or literal the text goes on after: whole
        return True

    def run(self) -> None:
        text, n = self.text, len(self.text)
        while self.pos < n:
            ch = text[self.pos]
            if ch in "[{":
                if len(self.stack) >= MAX_DEPTH:
                    self.best = None
                    return
                opened = _Open("]" if ch == "[" else "}", 0 if ch == "[" else None, ch == "{")
                self.stack.append(opened)
                self.pos += 1
                self._whole()
                ok = True
            elif ch in "]}":
                ok = self._close()
            elif ch == ",":
                ok = self._comma()
            elif ch == ":":
                self.pos += 1
                ok = True
            else:
                ok = self._string() if ch == '"' else self._scalar()
            if not ok:
                return
            self.pos = self._ws(self.pos)


def close_cut(text: str) -> Cut | None:
    """The document ``text`` (not JSON as it is) closed after its last whole value, or
    ``None`` when no container opens at its start, it nests deeper than :data:`MAX_DEPTH`
    or what is left does not read."""
    scan = _Scan(text)
    scan.run()
    if scan.best is None:
        return None
    end, closers = scan.best
    try:
        value = loads_exact(text[:end].rstrip().rstrip(",") + closers)
    except orjson.JSONDecodeError:
        return None
    path = [o.key for o in scan.stack if o.key is not None]
    return Cut(value, path, end)


#: the hint of a refusal (``--strict``) of a document cut short
CUT_HINT = (
    "the file is cut short (its writer stopped in the middle of a write); without --strict "
    "its complete leading entries import, the turn open there interrupted"
)


class NotJson(ValueError):
    """A document that is not JSON and was not cut short: ``message`` names the line and
    column where reading stops, ``line`` the line; for bytes that are not text, ``message``
    names the first byte that is not (:func:`.wrong_format.not_text`) and ``line`` is
    ``None``."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.message, self.line = message, line


def line_col(text: str, offset: int) -> tuple[int, int]:
    """The line and column (both from 1, the column in characters) of ``text[offset]``."""
    start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - start + 1


@dataclass(frozen=True)
class Document:
    """One JSON document read (:func:`read_document`): ``value``; for a document cut short,
    ``cut`` (where it was closed), ``line`` (the line its text stops on) and ``message``
    (a warning's text naming the line and column where the text stops and where its last
    whole value ends)."""

    value: Any
    cut: Cut | None = None
    line: int = 0
    message: str = ""
    #: the message's first part: ``<what> stops at line L column C, ... (cut short)``
    stops: str = ""
    #: the column (from 1, in characters) of ``line`` where the text stops
    column: int = 0


def read_document(data: bytes, what: str) -> Document:
    """``data`` read as one JSON document with orjson, or, when its text stops in the middle
    of a value (orjson's error is at its end), the document closed after its last whole
    value (:func:`close_cut`). ``what`` names it in messages ("the file", a member's name).

    Raises :class:`NotJson` when the text breaks JSON before its end (a damaged document,
    not a cut one: nothing is guessed), or when it is cut but nothing of it can be closed
    (no container opens at its start, nesting past :data:`MAX_DEPTH`)."""
    try:
        return Document(loads_exact(data))  # integers exact: section 4's big_integer
    except orjson.JSONDecodeError as exc:
        first = exc
    text = data.decode("utf-8", "replace")
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        first = exc
    else:  # whole, but its bytes are not UTF-8: not a cut, and not JSON
        raise NotJson(f"{what} is not JSON: {first.msg}", 1)
    end = len(text.rstrip())
    if first.pos < end:
        binary = not_text(data[:HEAD])
        if binary is not None:  # not JSON because not text: say where the text breaks
            raise NotJson(binary, None)
        line, col = line_col(text, first.pos)
        raise NotJson(f"{what} is not JSON: line {line} column {col}: {first.msg}", line)
    line, col = line_col(text, max(end - 1, 0))
    stops = f"{what} stops at line {line} column {col}, in the middle of a value (cut short)"
    cut = close_cut(text)
    if cut is None:
        raise NotJson(f"{stops}, and no whole value of it can be read", line)
    wline, wcol = line_col(text, max(cut.offset - 1, 0))
    message = f"{stops}: read to its last whole value, which ends at line {wline} column {wcol}"
    return Document(cut.value, cut, line, message, stops, col)
