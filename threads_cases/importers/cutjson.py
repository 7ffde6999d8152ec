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
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
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


def close_cut(text: str) -> Cut | None:
    """The document ``text`` (not JSON as it is) closed after its last whole value, or
    ``None`` when no container opens at its start or what is left does not read."""
    stack: list[_Open] = []
    best: tuple[int, str] | None = None
    pos = _WS.match(text, 0).end()  # type: ignore[union-attr]
    n = len(text)

    def done() -> tuple[int, str]:
        return pos, "".join(o.closer for o in reversed(stack))

    while pos < n:
        ch = text[pos]
        if ch in "[{":
            stack.append(_Open("]" if ch == "[" else "}", 0 if ch == "[" else None, ch == "{"))
            pos += 1
            best = done()
        elif ch in "]}":
            if not stack:
                break
            stack.pop()
            pos += 1
            if not stack:
                best = (pos, "")
                break
            best = done()
        elif ch == ",":
            if not stack:
                break
            top = stack[-1]
            if top.closer == "]":
                top.key = int(top.key or 0) + 1
            else:
                top.expect_key = True
            pos += 1
        elif ch == ":":
            pos += 1
        elif ch == '"':
            m = _STRING.match(text, pos)
            if m is None:
                break  # a string cut in the middle
            pos = m.end()
            cur = stack[-1] if stack else None
            if cur is not None and cur.closer == "}" and cur.expect_key:
                try:
                    cur.key = orjson.loads(m.group())
                except orjson.JSONDecodeError:
                    break
                cur.expect_key = False
            elif _WS.match(text, pos).end() < n:  # type: ignore[union-attr]
                best = done()
        else:
            m = _SCALAR.match(text, pos)
            if m is None:
                break
            pos = m.end()
            if _WS.match(text, pos).end() < n:  # type: ignore[union-attr]
                best = done()  # a number or literal the text goes on after: whole
        pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
    if best is None:
        return None
    end, closers = best
    try:
        value = orjson.loads(text[:end].rstrip().rstrip(",") + closers)
    except orjson.JSONDecodeError:
        return None
    path = [o.key for o in stack if o.key is not None]
    return Cut(value, path, end)
