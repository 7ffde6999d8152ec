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
        value = orjson.loads(text[:end].rstrip().rstrip(",") + closers)
    except orjson.JSONDecodeError:
        return None
    path = [o.key for o in scan.stack if o.key is not None]
    return Cut(value, path, end)
