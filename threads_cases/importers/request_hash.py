"""``request_sha256`` of imported ``model_requested`` events, kept incrementally
(replay.md section 3 builds the request; spec/importers.md section 1)."""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from ..core.canonical import canonical_line

_SORTED = orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER


class RequestHasher:
    """``request_sha256`` of ``{model, system, messages, tools}`` kept incrementally.

    The RFC 8785 bytes of the request are ``{"messages":[m1,...,mk],"model":..,"system":..,
    "tools":[..]}`` (keys in UTF-16 order). Messages before the last one can no longer change
    (the reducer only ever extends the last message), so they are *sealed*: fed once into a
    running sha256 and removed from the reducer's state. A request copies the running hash and
    adds the last message and the tail.
    """

    def __init__(self, model: str, system: str, tools: list[dict[str, Any]]) -> None:
        #: whether every event so far was plain (``canonical_line_plain``): the messages,
        #: built from their parts and ASCII keys, are then written by orjson directly (the
        #: same bytes, without walking them again); the emitter clears it
        self.plain = True
        self._h = hashlib.sha256(b'{"messages":[')
        self._count = 0
        #: the last message of the last request and the running hash with it fed in
        self._last: tuple[dict[str, Any], Any] | None = None
        self._tail = (
            b'],"model":'
            + canonical_line(model)
            + b',"system":'
            + canonical_line(system)
            + b',"tools":'
            + canonical_line(
                [
                    {
                        "name": t["name"],
                        "description": t["description"],
                        "input_schema": t["input_schema"],
                    }
                    for t in tools
                ]
            )
            + b"}"
        )

    def _feed(self, h: Any, message: dict[str, Any], first: bool) -> None:
        if not first:
            h.update(b",")
        if self.plain:
            try:
                h.update(orjson.dumps(message, option=_SORTED))
                return
            except (orjson.JSONEncodeError, TypeError):
                pass  # deeper than orjson writes: canonical_line decides
        h.update(canonical_line(message))

    def request_sha256(self, messages: list[dict[str, Any]]) -> str:
        """Seal every message but the last (removing them from ``messages``), then hash.

        The last message is fed into a copy of the running hash; when the same message (the
        reducer never changes a message in place, it replaces it) is sealed by a later
        request, that copy becomes the running hash, so each message is written and hashed
        once."""
        while len(messages) > 1:
            m = messages.pop(0)
            if self._last is not None and self._last[0] is m:
                self._h = self._last[1]
            else:
                self._feed(self._h, m, self._count == 0)
            self._last = None
            self._count += 1
        h = self._h.copy()
        if messages:
            self._feed(h, messages[0], self._count == 0)
            self._last = (messages[0], h.copy())
        h.update(self._tail)
        return h.hexdigest()
