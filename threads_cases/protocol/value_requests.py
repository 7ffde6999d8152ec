"""The driver requests about values alone (spec/driver-protocol.md 2.3, 2.4): ``match`` (a
matcher against an event) and ``canonicalize`` (a JSON text or value written canonically).
Each returns the body of its ``ok`` answer and raises ``CaseError`` for a refusal, its
pointer into the request (3.2b)."""

from __future__ import annotations

from typing import Any

from ..core.canonical import canonical_line
from ..core.errors import CaseError
from .request_values import decode_base64, under, writable


def match_request(message: dict[str, Any]) -> dict[str, Any]:
    """``match``: whether the matcher matches the event, and the differences."""
    from ..core.matchers import differences

    # pointers into the request (driver-protocol.md 3.2b): a matcher's refusal under /matcher
    matcher = writable(message["matcher"], "/matcher")
    event = writable(message["event"], "/event")
    try:
        found = differences(matcher, event)
    except CaseError as exc:
        raise under("/matcher", exc) from None
    # the differences decide and explain (spec/matchers.md 7): none exactly when it matches
    diffs = [d.to_json() for d in found]
    return {"matched": not diffs, "differences": diffs}


def canonicalize_request(message: dict[str, Any]) -> dict[str, Any]:
    """``canonicalize``: a value (or JSON text) as a canonical line and document."""
    from ..core.canonical import canonical_document
    from ..core.strictjson import parse

    if "text" in message:
        value = parse(message["text"].encode("utf-8"), code="json_invalid")
    elif "text_base64" in message:
        data = decode_base64(message["text_base64"], "/text_base64")
        value = parse(data, code="json_invalid")
    elif "value" in message:
        value = message["value"]
    else:
        raise CaseError(
            "invalid_request", "canonicalize needs value, text or text_base64", pointer=""
        )
    return {
        "text": canonical_line(value).decode("utf-8"),
        "document": canonical_document(value).decode("utf-8"),
    }
