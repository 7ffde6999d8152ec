"""Canonical JSON writing (spec/strict-json.md, RFC 8785 JCS).

:func:`canonical_line` gives the JCS bytes of a value (one JSON Lines line, without the
newline), :func:`canonical_document` the same value indented by two spaces with a final
newline, :func:`compact` a one-line rendering for messages (cut to a length). Values that
would not survive another language raise ``CaseError("unsafe_value")`` with a JSON pointer.
"""

from __future__ import annotations

from typing import Any

import orjson
import rfc8785

from .errors import CaseError, pointer_join

#: The deepest nesting strict JSON reads or writes (containers).
MAX_DEPTH = 256
#: The largest integer every reader holds exactly (JavaScript's Number.MAX_SAFE_INTEGER).
MAX_SAFE_INTEGER = 2**53 - 1

#: Doubles from 2^53 up to (not including) 1e21 are written as integer digits by JCS, which a
#: strict reader then refuses as an unsafe integer; writing refuses them (spec/strict-json.md).
_INTEGRAL_FORM_LIMIT = 1e21


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
            raise CaseError(
                "unsafe_value", "string holds a lone surrogate", pointer=pointer_join(path)
            ) from None
        return True
    if isinstance(value, dict):
        fast = True
        for k, v in value.items():
            if not isinstance(k, str):
                raise CaseError(
                    "unsafe_value", "an object key is not a string", pointer=pointer_join(path)
                )
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
            raise CaseError(
                "unsafe_value",
                "an integer is outside +-(2^53-1)",
                pointer=pointer_join(path),
            )
        return True
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise CaseError("unsafe_value", "a number is not finite", pointer=pointer_join(path))
        if MAX_SAFE_INTEGER < abs(value) < _INTEGRAL_FORM_LIMIT:
            raise CaseError(
                "unsafe_value",
                "a number would be written as integer digits outside +-(2^53-1)",
                pointer=pointer_join(path),
            )
        return False
    raise CaseError(
        "unsafe_value",
        f"a {type(value).__name__} is not a JSON value",
        pointer=pointer_join(path),
    )


class _NotPlain(Exception):
    """The fast scan met something it does not decide: the detailed check takes over."""


_HIGH_KEY = "\ud7ff"


def _fast_scan(value: Any, depth: int) -> bool:
    """:func:`_check_writable` without pointers or string checks (orjson refuses lone
    surrogates itself), on exact JSON types; raises :class:`_NotPlain` at anything else."""
    t = type(value)
    if t is dict:
        if depth >= MAX_DEPTH:
            raise _NotPlain
        fast = True
        for k, v in value.items():
            if type(k) is not str:
                raise _NotPlain
            if not k.isascii() and max(k) > _HIGH_KEY:
                fast = False
            tv = type(v)
            if tv is str or tv is bool or v is None:
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


def canonical_line(value: Any) -> bytes:
    """The RFC 8785 (JCS) bytes of ``value``, without a newline.

    Raises ``CaseError("unsafe_value")`` with a JSON pointer for non-string keys, non-finite
    floats, integers outside +-(2^53-1), doubles that JCS would write as such integers,
    nesting deeper than 256, lone surrogates and non-JSON types (spec/strict-json.md).
    Values without floats (and without keys whose UTF-16 order could differ) are written by
    orjson with sorted keys, which gives the same bytes; the rest by the rfc8785 package.
    """
    try:
        fast = _fast_scan(value, 0)
    except _NotPlain:
        fast = _check_writable(value, [])  # raises with a pointer, or clears the value
    if fast:
        try:
            return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        except (orjson.JSONEncodeError, TypeError):
            # a lone surrogate (raises here with its pointer) or deeper than orjson writes
            _check_writable(value, [])
    try:
        return rfc8785.dumps(value)
    except (
        rfc8785.CanonicalizationError,
        TypeError,
        ValueError,
        UnicodeEncodeError,
        RecursionError,
    ):
        raise CaseError("unsafe_value", "value cannot be written as canonical JSON") from None


def _utf16_key(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


def _pretty(value: Any, indent: str, out: list[bytes]) -> None:
    if isinstance(value, dict) and value:
        inner = indent + "  "
        out.append(b"{\n")
        for n, key in enumerate(sorted(value, key=_utf16_key)):
            if n:
                out.append(b",\n")
            out.append(inner.encode() + orjson.dumps(key) + b": ")
            _pretty(value[key], inner, out)
        out.append(b"\n" + indent.encode() + b"}")
    elif isinstance(value, list) and value:
        inner = indent + "  "
        out.append(b"[\n")
        for n, item in enumerate(value):
            if n:
                out.append(b",\n")
            out.append(inner.encode())
            _pretty(item, inner, out)
        out.append(b"\n" + indent.encode() + b"]")
    elif isinstance(value, float):
        out.append(rfc8785.dumps(value))
    else:
        out.append(orjson.dumps(value))  # strings, integers, booleans, null: the JCS bytes


def canonical_document(value: Any) -> bytes:
    """The canonical bytes of a ``.json`` file: JCS keys order, numbers and strings, indented
    by two spaces, ``": "`` after keys, empty containers as ``{}``/``[]``, final newline.

    Raises ``CaseError("unsafe_value")`` as :func:`canonical_line` does.
    """
    _check_writable(value, [])
    out: list[bytes] = []
    _pretty(value, "", out)
    out.append(b"\n")
    return b"".join(out)


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
