"""The decoded forms of a text that secrets are also looked for in (spec/case-format.md
10.2): JSON string escapes, URL percent-encoding and base64 / base64url runs.

A credential is often written encoded: a cloud service-account file holds its private key
with ``\\n`` as backslash-n, a URL holds ``%2D`` for ``-``, a Docker ``config.json`` or an
``Authorization`` header holds ``base64(user:password)``. Each decoder gives the decoded
text and a map from its positions back to the text it came from, so a secret found in the
decoded form is a span of the original, covering every character that encodes it: redacted
whole, never its first line only.

Positions are code points (Python ``str`` indices); the TypeScript implementation uses
UTF-16 units and maps the same way, so both give the same redacted text.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass

#: JSON's two-character escapes (a ``\\uXXXX`` escape is handled apart)
_SIMPLE = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_HEX4 = re.compile(r"[0-9A-Fa-f]{4}")
_PERCENT = re.compile(r"%[0-7][0-9A-Fa-f]")
#: a maximal run of the base64 and base64url alphabets, with its padding: scanning left to
#: right, a match can only start where a run starts (a later start of the same run is
#: shorter), so no lookbehind is needed, which would be tried at every position
_RUN = "[A-Za-z0-9+/_-]{%d,}={0,2}"


@dataclass
class Decoded:
    """A decoded text and the map back: ``starts[i]`` is the decoded position where segment
    ``i`` starts; it came from ``text[sources[i][0]:sources[i][1]]``, copied as is when
    ``copied[i]``, else one escape decoded to the segment's characters."""

    text: str
    starts: list[int]
    sources: list[tuple[int, int]]
    copied: list[bool]

    def source_span(self, a: int, b: int) -> tuple[int, int]:
        """The span of the original text that decoded ``[a, b)`` (``b > a``) came from: from
        the first character's source to the end of the last one's."""
        i = bisect.bisect_right(self.starts, a) - 1
        j = bisect.bisect_right(self.starts, b - 1) - 1
        start = self.sources[i][0] + (a - self.starts[i] if self.copied[i] else 0)
        end = self.sources[j][0] + (b - self.starts[j]) if self.copied[j] else self.sources[j][1]
        return start, end


class _Builder:
    def __init__(self, text: str) -> None:
        self.text = text
        self.parts: list[str] = []
        self.starts: list[int] = []
        self.sources: list[tuple[int, int]] = []
        self.copied: list[bool] = []
        self.length = 0
        self.changed = False

    def copy(self, a: int, b: int) -> None:
        if a < b:
            self._add(self.text[a:b], a, b, True)

    def decode(self, chars: str, a: int, b: int) -> None:
        self.changed = True
        self._add(chars, a, b, False)

    def _add(self, chars: str, a: int, b: int, copied: bool) -> None:
        self.parts.append(chars)
        self.starts.append(self.length)
        self.sources.append((a, b))
        self.copied.append(copied)
        self.length += len(chars)

    def done(self) -> Decoded | None:
        if not self.changed:
            return None
        return Decoded("".join(self.parts), self.starts, self.sources, self.copied)


def _unicode_escape(text: str, j: int) -> tuple[str, int] | None:
    """The character of the ``\\uXXXX`` escape at ``j`` (a surrogate pair of two escapes
    as one character) and where it ends, or None: a lone surrogate is not decoded."""
    if not _HEX4.fullmatch(text, j + 2, j + 6):
        return None
    unit = int(text[j + 2 : j + 6], 16)
    if unit < 0xD800 or unit > 0xDFFF:
        return chr(unit), j + 6
    if unit <= 0xDBFF and text.startswith("\\u", j + 6) and _HEX4.fullmatch(text, j + 8, j + 12):
        low = int(text[j + 8 : j + 12], 16)
        if 0xDC00 <= low <= 0xDFFF:
            return chr(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)), j + 12
    return None


def json_unescaped(text: str) -> Decoded | None:
    """``text`` with every JSON string escape decoded (``\\n``, ``\\"``, ``\\\\``,
    ``\\uXXXX``...), read left to right; a backslash that starts no escape, and a lone
    surrogate escape, stay as written. None when nothing was decoded."""
    if "\\" not in text:
        return None
    out = _Builder(text)
    i = 0
    while (j := text.find("\\", i)) >= 0:
        out.copy(i, j)
        c = text[j + 1 : j + 2]
        if c in _SIMPLE:
            out.decode(_SIMPLE[c], j, j + 2)
            i = j + 2
            continue
        got = _unicode_escape(text, j) if c == "u" else None
        if got is not None:
            out.decode(got[0], j, got[1])
            i = got[1]
            continue
        out.copy(j, j + 1)
        i = j + 1
    out.copy(i, len(text))
    return out.done()


def url_decoded(text: str) -> Decoded | None:
    """``text`` with every ``%XX`` of an ASCII character (``%00`` to ``%7F``) decoded; other
    escapes, and ``+``, stay as written. None when nothing was decoded."""
    if "%" not in text:
        return None
    out = _Builder(text)
    i = 0
    for m in _PERCENT.finditer(text):
        out.copy(i, m.start())
        out.decode(chr(int(m.group()[1:], 16)), m.start(), m.end())
        i = m.end()
    out.copy(i, len(text))
    return out.done()


def base64_runs(text: str, min_length: int) -> Iterator[tuple[int, int, str]]:
    """``(start, end, decoded)`` of every run of at least ``min_length`` characters of the
    base64 or base64url alphabet (with up to two ``=``) that decodes to UTF-8 text: ``-``
    and ``_`` read as ``+`` and ``/``, missing padding supplied; a run whose length without
    padding leaves 1 modulo 4, or whose bytes are not UTF-8, is not text."""
    if len(text) < min_length:
        return
    for m in re.finditer(_RUN % min_length, text):
        core = m.group().rstrip("=")
        if len(core) % 4 == 1:
            continue
        std = core.replace("-", "+").replace("_", "/")
        try:
            data = base64.b64decode(std + "=" * (-len(std) % 4), validate=True)
            yield m.start(), m.end(), data.decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            continue
