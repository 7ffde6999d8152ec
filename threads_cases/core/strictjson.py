"""Strict JSON reading (spec/strict-json.md); canonical writing is in :mod:`.canonical`.

Reading accepts exactly the JSON that every implementation reads the same way. It refuses,
with a :class:`~threads_cases.core.errors.CaseError` carrying the caller's reason code
(``log_invalid`` for logs, ``json_invalid`` for other files) and a line and JSON pointer:

* invalid UTF-8, a byte order mark, lone surrogates (escaped or raw);
* ``NaN``, ``Infinity`` and anything else that is not RFC 8259 JSON;
* an integer token outside +-(2^53-1), which a JavaScript reader cannot hold;
* duplicate object keys;
* nesting deeper than :data:`MAX_DEPTH` containers;
* in JSON Lines: blank lines, CR line ends, lines over :data:`MAX_LINE_BYTES`.

Parsing uses orjson for speed. Text that orjson writes back byte for byte (with
``OPT_STRICT_INTEGER``; compact, or indented by two spaces with a final newline as the
tools write ``.json`` files) is accepted at once: a duplicate key, an unsafe integer or
nesting past 255 levels would change or refuse the written bytes. Other text is walked once:
duplicate keys are detected by counting the ``:`` bytes of the text against the keys and
colons of the parsed value; a mismatch (or an escaped colon) re-parses the text with an exact
slow path.

:func:`canonical_line` and :func:`canonical_document` are re-exported from :mod:`.canonical`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from .canonical import MAX_DEPTH, MAX_SAFE_INTEGER
from .errors import CaseError, pointer_join
from .files import MAX_CASE_BYTES, MAX_LOG_BYTES, open_regular, read_regular
from .shapes import JsonValue

MAX_LINE_BYTES = 64 * 1024 * 1024
_BOM = b"\xef\xbb\xbf"
_ESCAPED_COLON = re.compile(rb"\\u003[aA]")
_ORJSON_POS = re.compile(r"line (\d+) column (\d+) \(char (\d+)\)")


class _Unsafe(Exception):
    def __init__(self, message: str, path: list[str | int]) -> None:
        super().__init__(message)
        self.message = message
        self.path = path


class _NeedsSlowPath(Exception):
    pass


def _walk(value: Any, depth: int, path: list[str | int]) -> tuple[int, int]:
    """Check depth and number ranges; return (number of keys, colons inside strings)."""
    keys = 0
    colons = 0
    if isinstance(value, dict):
        if depth >= MAX_DEPTH:
            raise _Unsafe(f"nesting deeper than {MAX_DEPTH} levels", path)
        for k, v in value.items():
            keys += 1
            colons += k.count(":")
            if isinstance(v, str):
                colons += v.count(":")
            elif isinstance(v, (dict, list)) or (not isinstance(v, bool) and v is not None):
                path.append(k)
                kk, cc = _walk(v, depth + 1, path)
                path.pop()
                keys += kk
                colons += cc
    elif isinstance(value, list):
        if depth >= MAX_DEPTH:
            raise _Unsafe(f"nesting deeper than {MAX_DEPTH} levels", path)
        for i, v in enumerate(value):
            if isinstance(v, str):
                colons += v.count(":")
            elif isinstance(v, (dict, list)) or (not isinstance(v, bool) and v is not None):
                path.append(i)
                kk, cc = _walk(v, depth + 1, path)
                path.pop()
                keys += kk
                colons += cc
    elif isinstance(value, str):
        colons += value.count(":")
    elif isinstance(value, int) and not isinstance(value, bool):
        if not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            raise _Unsafe("an integer is outside +-(2^53-1)", path)
    elif isinstance(value, float) and abs(value) > MAX_SAFE_INTEGER and value.is_integer():
        # orjson turns integer tokens beyond 64 bits into floats: decide on the text.
        raise _NeedsSlowPath()
    return keys, colons


def _slow_parse(text: str) -> Any:
    """Exact parse with Python's json: refuses duplicate keys, constants and big integers."""
    path: list[str | int] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for k, v in items:
            if k in seen:
                raise _Unsafe(f"duplicate key {k!r}", [*path, k])
            seen[k] = v
        return seen

    def parse_int(token: str) -> int:
        n = int(token)
        if not -MAX_SAFE_INTEGER <= n <= MAX_SAFE_INTEGER:
            raise _Unsafe(f"integer {token} is outside +-(2^53-1)", [])
        return n

    def parse_constant(token: str) -> Any:
        raise _Unsafe(f"{token} is not JSON", [])

    return json.loads(
        text, object_pairs_hook=pairs, parse_int=parse_int, parse_constant=parse_constant
    )


_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")


class _Located(Exception):
    def __init__(self, message: str, path: list[str | int], offset: int) -> None:
        super().__init__(message)
        self.message, self.path, self.offset = message, path, offset


def _scanstring(text: str, end: int) -> tuple[str, int]:
    """The string whose body starts at ``end`` (after its quote) and the offset after it."""
    value, after = json.decoder.scanstring(text, end)  # type: ignore[attr-defined]
    return str(value), int(after)


def _locate(text: str) -> _Located | None:
    """The first refusal of a value in ``text`` (syntactically valid JSON), in text order: a
    repeated key (at the key) or an integer outside +-(2^53-1) (at the token), with its
    path and character offset; None when there is none. Only run once a refusal is known,
    so its cost never touches text that parses."""

    def ws(i: int) -> int:
        m = _WS.match(text, i)
        return m.end() if m else i

    def value(i: int, path: list[str | int]) -> int:
        c = text[i]
        if c == "{":
            seen: set[str] = set()
            i = ws(i + 1)
            while text[i] != "}":
                key, end = _scanstring(text, i + 1)
                if key in seen:
                    raise _Located(f"duplicate key {key!r}", [*path, key], i)
                seen.add(key)
                i = ws(value(ws(ws(end) + 1), [*path, key]))
                i = ws(i + 1) if text[i] == "," else i
            return i + 1
        if c == "[":
            i, n = ws(i + 1), 0
            while text[i] != "]":
                i = ws(value(i, [*path, n]))
                i, n = (ws(i + 1) if text[i] == "," else i), n + 1
            return i + 1
        if c == '"':
            return _scanstring(text, i + 1)[1]
        m = _NUMBER.match(text, i)
        if m is None:  # true, false, null
            return i + (5 if c == "f" else 4)
        whole = m.group(1) is None and m.group(2) is None
        if whole and not -MAX_SAFE_INTEGER <= int(m.group()) <= MAX_SAFE_INTEGER:
            raise _Located(f"integer {m.group()} is outside +-(2^53-1)", path, i)
        return m.end()

    try:
        value(ws(0), [])
    except _Located as found:
        return found
    except (IndexError, ValueError, RecursionError):
        return None
    return None


def _refusal(exc: _Unsafe, data: bytes, code: str, file: str | None, line: int | None) -> CaseError:
    """The CaseError of a value refusal, located by :func:`_locate`: its pointer, and for a
    whole document (no JSON Lines ``line``) the line of the text it is on."""
    text = data.decode("utf-8", errors="replace")
    found = _locate(text)
    if found is None:
        return CaseError(code, exc.message, file=file, line=line, pointer=pointer_join(exc.path))
    at_line = line if line is not None else text.count("\n", 0, found.offset) + 1
    return CaseError(code, found.message, file=file, line=at_line, pointer=pointer_join(found.path))


def _describe_orjson_error(message: str) -> str:
    m = message.lower()
    if "utf-8" in m:
        return "invalid UTF-8"
    if "surrogate" in m:
        return "lone surrogate in a string"
    if "depth" in m or "recursion" in m:
        return f"nesting deeper than {MAX_DEPTH} levels"
    if "bom" in m or "byte order mark" in m:
        return "byte order mark"
    if "infinity" in m:
        return "number out of the range of a double"
    head = _ORJSON_POS.split(message)[0].strip().rstrip(":")
    return f"not valid JSON: {head}"


_CONTAINER_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')


_PATH_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},:]')


def _deep_pointer(data: bytes) -> str | None:
    """The JSON pointer of the first container, in text order, at level ``MAX_DEPTH + 1``
    of a text orjson refused as too deep (found by scanning its tokens, without recursion);
    None when there is none."""
    steps: list[str | int | None] = []  # per open container: its index, or its current key
    in_object: list[bool] = []
    last_string = b'""'
    for m in _PATH_TOKENS.finditer(data):
        tok = m.group()
        if tok in (b"[", b"{"):
            if len(steps) == MAX_DEPTH:
                return pointer_join([s if s is not None else "" for s in steps])
            steps.append(0 if tok == b"[" else None)
            in_object.append(tok == b"{")
        elif tok in (b"]", b"}"):
            if steps:
                steps.pop()
                in_object.pop()
        elif tok == b",":
            if steps and not in_object[-1]:
                steps[-1] = int(steps[-1] or 0) + 1
        elif tok == b":":
            if steps and in_object[-1]:
                steps[-1] = str(orjson.loads(last_string))
        else:
            last_string = tok
    return None


def _line_column(data: bytes, offset: int) -> tuple[int, int]:
    """1-based line and column (in bytes) of ``offset`` in ``data``."""
    offset = max(0, min(offset, len(data)))
    return data.count(b"\n", 0, offset) + 1, offset - (data.rfind(b"\n", 0, offset) + 1) + 1


def _error_position(data: bytes, message: str, described: str) -> tuple[int, int] | None:
    """Where orjson's refusal is in ``data``: ``(line, column)``, or None when unknown.

    orjson reports invalid UTF-8 at the start of the text and no position at all for too
    deep nesting; both are found here from the bytes instead."""
    if described == "invalid UTF-8":
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return _line_column(data, exc.start)
    if "nesting" in described:
        depth = 0
        for m in _CONTAINER_TOKENS.finditer(data):
            tok = m.group()
            if tok in (b"[", b"{"):
                depth += 1
                if depth > MAX_DEPTH:
                    return _line_column(data, m.start())
            elif tok in (b"]", b"}"):
                depth -= 1
        return None
    pos = _ORJSON_POS.search(message)
    if pos:
        return int(pos.group(1)), int(pos.group(2))
    return None


#: orjson's two spellings of a text it writes: compact (JSON Lines), and indented by two
#: spaces with a final newline (every ``.json`` file the tools write: canonical documents)
_COMPACT = orjson.OPT_STRICT_INTEGER
_INDENTED = orjson.OPT_STRICT_INTEGER | orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE


def _writes_back(value: Any, data: bytes) -> bool:
    """Whether orjson writes ``value`` back as ``data`` byte for byte: indented
    (:data:`_INDENTED`) for text ending in a newline (which compact text never does), else
    compact. Either spelling rules out what the walk of :func:`parse` looks for: a
    duplicate key (the dropped one would be missing from the bytes), an integer outside
    +-(2^53-1) (``OPT_STRICT_INTEGER`` refuses it), an integer token beyond 64 bits read as
    a float (written back as a float), nesting deeper than 255 levels (orjson refuses to
    write it) and an escaped colon (written back unescaped)."""
    try:
        return orjson.dumps(value, option=_INDENTED if data[-1:] == b"\n" else _COMPACT) == data
    except (orjson.JSONEncodeError, TypeError):
        return False


def parse(
    data: bytes, *, code: str = "json_invalid", file: str | None = None, line: int | None = None
) -> JsonValue:
    """Parse one strict JSON text.

    ``data`` is UTF-8 bytes. Returns the value (dict, list, str, int, float, bool or None).
    Raises ``CaseError(code)`` with ``file``, ``line`` and a JSON pointer (where one applies)
    for every refusal listed in the module docstring (spec/strict-json.md section 2).
    """
    if data.startswith(_BOM):
        raise CaseError(
            code,
            "byte order mark at the start of the text",
            file=file,
            line=1 if line is None else line,
        )
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        msg = _describe_orjson_error(str(exc))
        where = _error_position(data, str(exc), msg)
        # too deep is a value refusal (strict-json.md 2.7): the pointer of the first container
        # at level 257, at any depth; the other refusals here are located by their column
        pointer = _deep_pointer(data) if "nesting" in msg else None
        if where is not None and "nesting" not in msg:
            msg += f" (column {where[1]})"
        # a whole document (no JSON Lines line given): the line of the text the problem is on
        at_line = line if line is not None else (where[0] if where is not None else None)
        raise CaseError(code, msg, file=file, line=at_line, pointer=pointer) from None
    # Fast path: text that orjson writes back byte for byte, compact or indented (a case's
    # documents), has none of the problems the walk below looks for (:func:`_writes_back`).
    if _writes_back(value, data):
        return value
    try:
        keys, colons = _walk(value, 0, [])
        if data.count(b":") != keys + colons or _ESCAPED_COLON.search(data):
            raise _NeedsSlowPath()
    except _Unsafe as exc:
        raise _refusal(exc, data, code, file, line) from None
    except _NeedsSlowPath:
        try:
            value = _slow_parse(data.decode("utf-8"))
        except _Unsafe as exc:
            raise _refusal(exc, data, code, file, line) from None
    return value


def read_json_file(
    path: str | os.PathLike[str],
    *,
    code: str = "json_invalid",
    limit: int = MAX_CASE_BYTES,
    limit_code: str = "case_too_large",
    special_code: str = "invalid_request",
    follow_symlinks: bool = True,
) -> Any:
    """Read a whole ``.json`` file strictly (see :func:`parse`).

    A file that cannot be read raises ``code``; one over ``limit`` bytes ``limit_code``; one
    that is not a regular file ``special_code`` (see :func:`threads_cases.core.files.read_regular`).
    """
    p = Path(path)
    data = read_regular(
        p,
        code=code,
        limit=limit,
        limit_code=limit_code,
        special_code=special_code,
        follow_symlinks=follow_symlinks,
    )
    if not data.strip():
        raise CaseError(code, "empty file", file=str(p), line=1)
    return parse(data, code=code, file=str(p))


def iter_lines(
    source: str | os.PathLike[str] | IO[bytes], *, code: str = "log_invalid"
) -> Iterator[tuple[int, bytes | CaseError]]:
    """Yield ``(line_number, body)`` for each line of a JSON Lines source, or
    ``(line_number, CaseError)`` for a line that breaks the line rules (a BOM, a blank line, a
    CR line end, a line over 64 MiB) so that a validator can go on past it.

    ``source`` is a path or a binary stream, read in blocks of 1 MiB (memory: a block and the
    longest line). A path that cannot be opened raises ``CaseError(code)``.
    """
    name = source_name(source)
    lineno = 0
    for lines in iter_blocks(source, code=code):
        for body in lines:
            lineno += 1
            if body[:1] == b"{" and body[-1:] != b"\r" and len(body) <= MAX_LINE_BYTES:
                yield lineno, body  # the usual line: "{...}", within the limit
            else:
                yield lineno, line_rules(body, lineno, code, name)


def iter_blocks(
    source: str | os.PathLike[str] | IO[bytes], *, code: str = "log_invalid"
) -> Iterator[list[bytes]]:
    """The lines of a JSON Lines source without their ``\\n``, a list per block read (see
    :func:`iter_lines`), none checked: the caller gives a line whose rules it has not ruled
    out to :func:`line_rules` (the log reader's compiled check rules them out for a line
    that orjson writes back byte for byte, as long as it is within :data:`MAX_LINE_BYTES`:
    a longer line is given as its first ``MAX_LINE_BYTES + 1`` bytes). A path that cannot
    be opened raises ``CaseError(code)``; a path is closed when the iterator is."""
    if isinstance(source, (str, os.PathLike)):
        with open_regular(source, code=code, limit=MAX_LOG_BYTES) as fh:
            yield from _blocks(fh)
    else:
        yield from _blocks(source)


#: How much :func:`iter_lines` reads at a time (its lines are cut from these blocks in C)
_BLOCK = 1 << 20


def _blocks(fh: IO[bytes]) -> Iterator[list[bytes]]:
    """The lines of ``fh`` without their ``\\n`` (the last one may lack it), a list per block
    of :data:`_BLOCK` read; a line longer than :data:`MAX_LINE_BYTES` is given as its first
    ``MAX_LINE_BYTES + 1`` bytes, and the rest of it is skipped unread into memory."""
    pieces: list[bytes] = []  # the start of a line that goes on in the next block
    held = 0
    skipping = False  # inside a line already given as too long
    while True:
        block = fh.read(_BLOCK)
        if not block:
            break
        if skipping:
            nl = block.find(b"\n")
            if nl < 0:
                continue
            block, skipping = block[nl + 1 :], False
        if pieces and block.find(b"\n") < 0:
            pieces.append(block)
            held += len(block)
        else:
            if pieces:
                block = b"".join([*pieces, block])
                pieces, held = [], 0
            lines = block.split(b"\n")
            tail = lines.pop()
            yield lines
            if tail:
                pieces, held = [tail], len(tail)
        if held > MAX_LINE_BYTES:
            yield [b"".join(pieces)[: MAX_LINE_BYTES + 1]]
            pieces, held, skipping = [], 0, True
    if pieces:
        yield [b"".join(pieces)]


def line_rules(body: bytes, lineno: int, code: str, name: str) -> bytes | CaseError:
    """``body`` (line ``lineno`` of ``name``), or the ``CaseError(code)`` of the line rule it
    breaks (spec/strict-json.md 3): over :data:`MAX_LINE_BYTES`, a CR line end, a byte order
    mark on line 1, a blank line."""
    if len(body) > MAX_LINE_BYTES:
        return CaseError(code, "line longer than 64 MiB", file=name, line=lineno)
    if body.endswith(b"\r"):
        return CaseError(code, "CR line end; lines end with \\n only", file=name, line=lineno)
    if lineno == 1 and body.startswith(_BOM):
        return CaseError(code, "byte order mark at the start of the file", file=name, line=1)
    if not body.strip():
        return CaseError(code, "blank line", file=name, line=lineno)
    return body


def source_name(source: str | os.PathLike[str] | IO[bytes]) -> str:
    """The name used in error locations for a path or stream."""
    if isinstance(source, (str, os.PathLike)):
        return str(source)
    return str(getattr(source, "name", None) or "<stream>")


def iter_jsonl(
    source: str | os.PathLike[str] | IO[bytes], *, code: str = "log_invalid"
) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, value)`` for each line of a strict JSON Lines source.

    Memory tracks the longest line, not the file. Raises ``CaseError(code)`` with the file and
    line at the first line-rule break (see :func:`iter_lines`) or :func:`parse` refusal.
    """
    name = source_name(source)
    for lineno, body in iter_lines(source, code=code):
        if isinstance(body, CaseError):
            raise body
        yield lineno, parse(body, code=code, file=name, line=lineno)
