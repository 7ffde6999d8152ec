"""Small value helpers shared by the two Codex shapes (exec streams and rollout files)."""

from __future__ import annotations

import json
from typing import Any

from ...core.errors import CaseError
from ...core.strictjson import parse


def text_of(v: Any) -> str:
    """A string as is, None as ``""``, anything else as its JSON text."""
    return v if isinstance(v, str) else ("" if v is None else json.dumps(v, ensure_ascii=False))


def json_object(text: Any) -> dict[str, Any] | None:
    """The object a JSON text holds, or None when it is not text holding an object."""
    if not isinstance(text, str):
        return None
    try:
        v = parse(text.encode("utf-8"))
    except CaseError:
        return None
    return v if isinstance(v, dict) else None


def blocks_or_text(value: Any) -> Any:
    """Tool output as content: a string, a list of valid blocks, or the JSON text of it."""
    if isinstance(value, str):
        return value
    if (
        isinstance(value, list)
        and value
        and all(
            isinstance(b, dict)
            and isinstance(b.get("type"), str)
            and b["type"]
            and (b["type"] != "text" or isinstance(b.get("text"), str))
            for b in value
        )
    ):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
