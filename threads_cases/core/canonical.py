"""Canonical JSON writing (spec/strict-json.md, RFC 8785 JCS).

:func:`canonical_line` gives the JCS bytes of a value (one JSON Lines line, without the
newline), :func:`canonical_document` the same value indented by two spaces with a final
newline, :func:`compact` a one-line rendering for messages (cut to a length). Values that
would not survive another language raise ``CaseError("unsafe_value")`` with a JSON pointer.
"""

from __future__ import annotations

import io
import json.encoder
from collections.abc import Callable, Iterator
from typing import Any

import orjson

from .errors import CaseError, pointer_join

#: The deepest nesting strict JSON reads or writes (containers).
MAX_DEPTH = 256
#: The largest integer every reader holds exactly (JavaScript's Number.MAX_SAFE_INTEGER).
MAX_SAFE_INTEGER = 2**53 - 1

#: Doubles from 2^53 up to (not including) 1e21 are written as integer digits by JCS, which a
#: strict reader then refuses as an unsafe integer; writing refuses them (spec/strict-json.md).
_INTEGRAL_FORM_LIMIT = 1e21


def _unsafe(message: str, path: list[str | int]) -> CaseError:
    """``unsafe_value`` at ``path`` (the refusal of :func:`_check_writable`)."""
    return CaseError("unsafe_value", message, pointer=pointer_join(path))


def _check_writable(value: Any, path: list[str | int], depth: int = 0) -> bool:
    """Raise ``unsafe_value`` for anything canonical JSON cannot hold; return True when
    orjson's sorted output is already the JCS text (no floats, no key above U+D7FF, where
    UTF-16 and code point order could differ)."""
    if isinstance(value, (dict, list)) and depth >= MAX_DEPTH:
        raise CaseError(
            "unsafe_value",
            f"nesting deeper than {MAX_DEPTH} levels",
            pointer=pointer_join(path[:16]) + ("/..." if len(path) > 16 else ""),
        )
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise _unsafe("string holds a lone surrogate", path) from None
        return True
    if isinstance(value, dict):
        fast = True
        for k, v in value.items():
            if not isinstance(k, str):
                raise _unsafe("an object key is not a string", path)
            path.append(k)
            _check_writable(k, path, depth + 1)
            if k and max(k) > "\ud7ff":
                fast = False
            if not _check_writable(v, path, depth + 1):
                fast = False
            path.pop()
        return fast
    if isinstance(value, list):
        fast = True
        for i, v in enumerate(value):
            path.append(i)
            if not _check_writable(v, path, depth + 1):
                fast = False
            path.pop()
        return fast
    if isinstance(value, bool) or value is None:
        return True
    if isinstance(value, int):
        if not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            raise _unsafe("an integer is outside +-(2^53-1)", path)
        return True
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise _unsafe("a number is not finite", path)
        if MAX_SAFE_INTEGER < abs(value) < _INTEGRAL_FORM_LIMIT:
            raise _unsafe("a number would be written as integer digits outside +-(2^53-1)", path)
        return False
    raise _unsafe(f"a {type(value).__name__} is not a JSON value", path)


class _NotPlain(Exception):
    """The fast scan met something it does not decide: the detailed check takes over."""


_HIGH_KEY = "\ud7ff"


def _fast_scan(value: Any, depth: int) -> bool:
    """:func:`_check_writable` without pointers or string checks (orjson refuses lone
    surrogates itself), on exact JSON types (object keys may be ``str`` subclasses, which
    :func:`_check_writable` takes too); raises :class:`_NotPlain` at anything else."""
    t = type(value)
    if t is dict:
        if depth >= MAX_DEPTH:
            raise _NotPlain
        try:
            keys = "".join(value)  # every key at once: a non-string key raises
        except TypeError:
            raise _NotPlain from None
        fast = keys.isascii() or max(keys) <= _HIGH_KEY
        for v in value.values():
            tv = type(v)
            if tv is str or tv is bool or v is None:
                continue
            if tv is int and -MAX_SAFE_INTEGER <= v <= MAX_SAFE_INTEGER:
                continue
            if not _fast_scan(v, depth + 1):
                fast = False
        return fast
    if t is list:
        if depth >= MAX_DEPTH:
            raise _NotPlain
        fast = True
        for v in value:
            tv = type(v)
            if tv is str or tv is bool or v is None:
                continue
            if not _fast_scan(v, depth + 1):
                fast = False
        return fast
    if t is str or t is bool or value is None:
        return True
    if t is int:
        if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            return True
        raise _NotPlain
    if t is float:
        if (
            value != value
            or MAX_SAFE_INTEGER < abs(value) < _INTEGRAL_FORM_LIMIT
            or (abs(value) == float("inf"))
        ):
            raise _NotPlain  # not finite, or written as unsafe integer digits
        return False  # floats are written by rfc8785
    raise _NotPlain


def is_plain(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` is *plain* (see :func:`canonical_line_plain`) as the fast scan tells
    it: True only for exact JSON types, no float, no key above U+D7FF, integers within
    +-(2^53-1) and nesting under 256 levels; False when it is not or the scan cannot tell.
    For a plain value that orjson writes, ``orjson.dumps(value, option=OPT_SORT_KEYS)`` is
    its canonical line. ``depth``: the containers around ``value`` in the value it is part
    of (the nesting rule counts them), 0 for a whole value."""
    try:
        return _fast_scan(value, depth)
    except _NotPlain:
        return False


def canonical_line(value: object) -> bytes:
    """The RFC 8785 (JCS) bytes of ``value``, without a newline.

    Raises ``CaseError("unsafe_value")`` with a JSON pointer for non-string keys, non-finite
    floats, integers outside +-(2^53-1), doubles that JCS would write as such integers,
    nesting deeper than 256, lone surrogates and non-JSON types (spec/strict-json.md).
    Values without floats (and without keys whose UTF-16 order could differ) are written by
    orjson with sorted keys, which gives the same bytes; the rest by the rfc8785 package.
    """
    return canonical_line_plain(value)[0]


def canonical_line_plain(value: Any) -> tuple[bytes, bool]:
    """:func:`canonical_line`'s bytes and whether ``value`` is *plain*: no float and no key
    above U+D7FF anywhere, so that ``orjson.dumps(part, option=OPT_SORT_KEYS)`` of any part of
    it (or of a value built from such parts and ASCII keys) is its JCS text, as long as orjson
    writes it (nesting up to 254 levels). Raises as :func:`canonical_line`."""
    try:
        fast = _fast_scan(value, 0)
    except _NotPlain:
        fast = _check_writable(value, [])  # raises with a pointer, or clears the value
    if fast:
        try:
            return orjson.dumps(value, option=orjson.OPT_SORT_KEYS), True
        except (orjson.JSONEncodeError, TypeError):
            # a lone surrogate (raises here with its pointer) or deeper than orjson writes
            _check_writable(value, [])
    import rfc8785  # floats and values orjson cannot prove: loaded when one comes (start-up)

    try:
        return rfc8785.dumps(value), False
    except (
        rfc8785.CanonicalizationError,
        TypeError,
        ValueError,
        UnicodeEncodeError,
        RecursionError,
    ):
        raise CaseError("unsafe_value", "value cannot be written as canonical JSON") from None


def canonical_event_line(event: dict[str, Any], *, data_plain: bool = False) -> tuple[bytes, bool]:
    """:func:`canonical_line_plain` of an event envelope built by a writer of this package:
    every value but ``data`` is an exact ``str``, ``bool`` or ``int`` within +-(2^53-1) under
    an ASCII key, so only ``data`` is scanned (the same answer, the same refusals: anything
    the scan does not decide goes through :func:`canonical_line_plain`). ``data_plain``: the
    caller knows ``data`` is plain and writable (its values are ASCII-keyed strings and parts
    of a value that passed this check as plain), so it is not scanned at all."""
    try:
        fast = data_plain or _fast_scan(event["data"], 1)
    except _NotPlain:
        return canonical_line_plain(event)
    if fast:
        try:
            return orjson.dumps(event, option=orjson.OPT_SORT_KEYS), True
        except (orjson.JSONEncodeError, TypeError):
            pass
    return canonical_line_plain(event)


def _utf16_key(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


_encode_string: Callable[[str], str] = json.encoder.encode_basestring  # JCS escapes
_LITERALS: dict[Any, bytes] = {True: b"true", False: b"false", None: b"null"}


def _sorted_keys(value: dict[str, Any]) -> list[str]:
    """JCS key order: UTF-16 code units, which is code point order below U+D800."""
    keys = list(value)
    if all(k.isascii() or max(k) <= _HIGH_KEY for k in keys):
        keys.sort()
    else:
        keys.sort(key=_utf16_key)
    return keys


def _scalar(value: Any) -> bytes:
    """The JCS bytes of a string, number, boolean or null (checked by the caller)."""
    if isinstance(value, str):
        return _encode_string(value).encode("utf-8")
    if value is True or value is False or value is None:
        return _LITERALS[value]
    if isinstance(value, float):
        import rfc8785

        return rfc8785.dumps(float(value))
    return str(int(value)).encode()


class _Frame:
    """One open container of :func:`write_document`."""

    __slots__ = ("close", "first", "inner", "items", "keyed")

    def __init__(self, items: Iterator[Any], inner: bytes, close: bytes, keyed: bool) -> None:
        self.items = items
        self.inner = inner
        self.close = close
        self.keyed = keyed
        self.first = True


_END = object()


def _open(item: Any, indent: bytes, write: Callable[[bytes], object]) -> _Frame | None:
    """Write ``item`` when it is a scalar or an empty container, else open it as a frame."""
    if isinstance(item, dict):
        if not item:
            write(b"{}")
            return None
        write(b"{")
        pairs = ((k, item[k]) for k in _sorted_keys(item))
        return _Frame(pairs, indent + b"  ", indent + b"}", True)
    if isinstance(item, list):
        if not item:
            write(b"[]")
            return None
        write(b"[")
        return _Frame(iter(item), indent + b"  ", indent + b"]", False)
    write(_scalar(item))
    return None


def write_document(value: Any, write: Callable[[bytes], object]) -> None:
    """Write the canonical document of ``value`` (see :func:`canonical_document`; the value
    is already checked) piece by piece to ``write``, without the final newline. Memory holds
    the open containers from the root (and one key list per open object), never one encoded
    piece per value."""
    stack: list[_Frame] = []
    frame = _open(value, b"\n", write)
    if frame is not None:
        stack.append(frame)
    while stack:
        top = stack[-1]
        nxt: Any = next(top.items, _END)
        if nxt is _END:
            stack.pop()
            write(top.close)
            continue
        head = top.inner if top.first else b"," + top.inner
        top.first = False
        if top.keyed:
            key: str = nxt[0]
            nxt = nxt[1]
            write(head + _encode_string(key).encode("utf-8") + b": ")
        else:
            write(head)
        frame = _open(nxt, top.inner, write)
        if frame is not None:
            stack.append(frame)


def _checked(value: Any) -> bool:
    """Raise ``unsafe_value`` for what canonical JSON cannot hold; True when orjson's sorted
    output is the JCS text (see :func:`_check_writable`)."""
    try:
        return _fast_scan(value, 0)
    except _NotPlain:
        return _check_writable(value, [])


def _orjson_document(value: Any) -> bytes | None:
    """The document with its final newline (appended by orjson: ``whole + b"\n"`` would copy
    a 264 MB recording once more)."""
    try:
        return orjson.dumps(
            value, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE
        )
    except (orjson.JSONEncodeError, TypeError):
        _check_writable(value, [])  # a lone surrogate raises here with its pointer
        return None  # deeper than orjson writes: the streaming writer takes it


def dump_document(value: Any, write: Callable[[bytes], object]) -> None:
    """Write the canonical document of ``value`` (:func:`canonical_document`, final newline
    included) to ``write`` (a binary stream's ``write``), streaming what orjson does not
    write in one piece. Raises ``CaseError("unsafe_value")`` before writing anything."""
    if _checked(value):
        whole = _orjson_document(value)
        if whole is not None:
            write(whole)
            return
    write_document(value, write)
    write(b"\n")


def dump_object_document(value: dict[str, Any], write: Callable[[bytes], object]) -> None:
    """:func:`dump_document` of a JSON object whose list values may hold items as their
    compact JSON text (``bytes``, read back with orjson): the same bytes as the document of
    the object with those items read back, written a member and an item at a time, so that
    memory is the object and one item's document (the reducer's ``freeze`` state). Raises
    ``CaseError("unsafe_value")`` before writing anything for a value canonical JSON cannot
    hold (each item is read back and checked first: twice the reading, none of the
    memory)."""
    for item in value.values():
        for part in item if type(item) is list else (item,):
            _checked(orjson.loads(part) if type(part) is bytes else part)
    if not value:
        write(b"{}\n")
        return
    sep = b"{\n  "
    for key in _sorted_keys(value):
        write(sep + _encode_string(key).encode("utf-8") + b": ")
        sep = b",\n  "
        item = value[key]
        if type(item) is not list or not item:
            write(canonical_document(item)[:-1].replace(b"\n", b"\n  "))
            continue
        head = b"[\n    "
        for part in item:
            doc = canonical_document(orjson.loads(part) if type(part) is bytes else part)
            write(head + doc[:-1].replace(b"\n", b"\n    "))
            head = b",\n    "
        write(b"\n  ]")
    write(b"\n}\n")


def canonical_document(value: object) -> bytes:
    """The canonical bytes of a ``.json`` file: JCS keys order, numbers and strings, indented
    by two spaces, ``": "`` after keys, empty containers as ``{}``/``[]``, final newline.

    Raises ``CaseError("unsafe_value")`` as :func:`canonical_line` does. A value without
    floats (or keys whose UTF-16 order could differ) is written by orjson in one piece,
    which gives the same bytes; the rest by :func:`write_document`. Either way memory is the
    output and the open containers, never one encoded piece per value (issue 20; the
    benchmark `canonical` in benchmarks/memory_bench.py keeps it so).
    """
    if _checked(value):
        whole = _orjson_document(value)
        if whole is not None:
            return whole
    sink = io.BytesIO()
    write_document(value, sink.write)
    sink.write(b"\n")
    return sink.getvalue()


def compact(value: Any, limit: int | None = 80) -> str:
    """``value`` as compact canonical JSON for a message (``"<unwritable value>"`` for what
    JSON cannot hold), cut to ``limit`` characters with ``...`` (``None``: never cut)."""
    try:
        text = canonical_line(value).decode("utf-8")
    except CaseError:
        text = '"<unwritable value>"'
    if limit is not None and len(text) > limit:
        text = text[: limit - 3] + "..."
    return text
