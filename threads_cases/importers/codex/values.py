"""Small value helpers shared by the two Codex shapes (exec streams and rollout files)."""

from __future__ import annotations

import json
from typing import Any

from ...core.errors import CaseError
from ...core.strictjson import parse
from ..lenient import Note, js_loads


def text_of(v: Any) -> str:
    """A string as is, None as ``""``, anything else as its JSON text."""
    return v if isinstance(v, str) else ("" if v is None else json.dumps(v, ensure_ascii=False))


def json_object(text: Any, notes: list[Note] | None = None) -> dict[str, Any] | None:
    """The object a JSON text holds, or None when it is not text holding an object.

    Text the strict reader refuses is read as the Codex CLI reads it (a repeated key keeps
    its last value, an integer beyond 2^53 becomes the JavaScript number, a lone surrogate
    U+FFFD: :func:`~threads_cases.importers.lenient.js_loads`); each repair is appended to
    ``notes``."""
    if not isinstance(text, str):
        return None
    try:
        v = parse(text.encode("utf-8", "surrogatepass"))
    except CaseError:
        try:
            v, more = js_loads(text)
        except (ValueError, RecursionError):
            return None
        if isinstance(v, dict) and notes is not None:
            notes.extend(more)
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
