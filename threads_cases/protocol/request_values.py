"""Values inside driver requests that the request schemas cannot check
(spec/driver-protocol.md 3.2b): base64 text, the one source of a ``reduce``, and values that
canonical JSON cannot write back.

Every refusal is ``CaseError("invalid_request")`` whose pointer is a JSON pointer into the
request (RFC 6901), as the schema refusals of 3.2a are; ``""`` names the request itself.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from ..core.canonical import canonical_line
from ..core.errors import CaseError

#: RFC 4648 section 4 (the standard alphabet, ``+`` and ``/``), padded with ``=`` to a
#: multiple of 4 characters, nothing else (no line breaks, no spaces, no URL-safe letters).
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")

#: The sources of a ``reduce`` request, in the order the spec lists them (2.2).
REDUCE_SOURCES = ("path", "log", "log_text", "log_base64")


def decode_base64(text: str, pointer: str) -> bytes:
    """The bytes of ``text``, strict base64 (spec/driver-protocol.md 3.2b): the standard
    alphabet, padded, and the unused bits of the last character zero (so one text per bytes:
    ``text`` is what encoding the bytes gives). Raises ``CaseError("invalid_request")`` at
    ``pointer`` otherwise."""
    if _BASE64.fullmatch(text):
        try:
            data = base64.b64decode(text, validate=True)
        except binascii.Error:  # pragma: no cover - the pattern admits only valid text
            data = None
        if data is not None and base64.b64encode(data).decode("ascii") == text:
            return data
    raise CaseError(
        "invalid_request",
        "not base64: the bytes must be written with the standard alphabet (A-Z a-z 0-9 + /), "
        "padded with = to a multiple of 4 characters, with zero unused bits",
        pointer=pointer,
    )


def one_reduce_source(message: dict[str, Any]) -> str:
    """The one source key of a ``reduce`` request (2.2). Raises ``invalid_request`` at
    ``""`` when it has none or more than one."""
    given = [k for k in REDUCE_SOURCES if k in message]
    if len(given) != 1:
        raise CaseError(
            "invalid_request",
            "reduce needs exactly one of path, log, log_text or log_base64"
            + (f"; it has {', '.join(given)}" if given else ""),
            pointer="",
        )
    return given[0]


def writable(value: Any, pointer: str) -> Any:
    """``value`` when canonical JSON can write it (strict-json.md 4.1), else
    ``CaseError("invalid_request")`` at ``pointer`` followed by the place inside it (the
    double ``1e16``, for example, which canonical JSON would write as unsafe integer
    digits)."""
    try:
        canonical_line(value)
    except CaseError as exc:
        if exc.code != "unsafe_value":
            raise
        raise CaseError(
            "invalid_request", exc.message, pointer=pointer + (exc.location.pointer or "")
        ) from None
    return value


def under(pointer: str, exc: CaseError) -> CaseError:
    """``exc`` (an ``invalid_request`` whose pointer is into a part of the request) with its
    pointer made a pointer into the request: ``pointer`` followed by its own."""
    return CaseError(exc.code, exc.message, pointer=pointer + (exc.location.pointer or ""))
