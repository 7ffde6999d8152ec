"""The nesting limit of an event (spec/thread-log.md 5.1a, spec/strict-json.md 2.1).

Every JSON text is at most :data:`MAX_DEPTH` (256) levels deep. An event envelope is at most
:data:`MAX_EVENT_DEPTH` = 256 - 8 = 248 levels deep (the envelope is level 1), so every
message that carries an event or a value made from one fits in 256 levels: a ``write_case``
request wraps an event in 3 levels, a ``replay`` answer in 2, a state holds a tool result's
content 3 levels deeper than its event and a ``reduce`` answer adds 1, ``model.json`` keeps a
request 6 levels deeper than the event. :func:`too_deep` finds the first place past the limit.
"""

from __future__ import annotations

from typing import Any

from .canonical import MAX_DEPTH

#: Levels every protocol message and case file may add around an event.
EVENT_MARGIN = 8
#: The deepest an event envelope may nest (the envelope itself is level 1).
MAX_EVENT_DEPTH = MAX_DEPTH - EVENT_MARGIN


def maybe_too_deep(text: bytes, limit: int = MAX_EVENT_DEPTH) -> bool:
    """A cheap test on a value's JSON text: False means it cannot nest deeper than ``limit``
    (it holds fewer opening brackets than that)."""
    return text.count(b"[") + text.count(b"{") > limit


def too_deep(value: Any, limit: int = MAX_EVENT_DEPTH, level: int = 1) -> list[str | int] | None:
    """The path of the first container nested deeper than ``limit`` levels (``value`` being at
    ``level``), visiting object keys in code point order and array items by index; None when
    the value fits."""
    if isinstance(value, dict):
        if level > limit:
            return []
        for key in sorted(value):
            found = too_deep(value[key], limit, level + 1)
            if found is not None:
                return [key, *found]
    elif isinstance(value, list):
        if level > limit:
            return []
        for index, item in enumerate(value):
            found = too_deep(item, limit, level + 1)
            if found is not None:
                return [index, *found]
    return None


def depth_message(limit: int = MAX_EVENT_DEPTH) -> str:
    return (
        f"an event nests deeper than {limit} levels (the limit that lets every message "
        f"carrying it fit in {MAX_DEPTH})"
    )
