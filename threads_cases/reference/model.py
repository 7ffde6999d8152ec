"""Models: what answers a turn's model requests (spec/replay.md, section 3).

A model is anything with ``respond(request: dict, index: int) -> dict``; ``request`` is
``{model, system, messages, tools}`` and ``index`` counts the turn's model calls from 0. A
reply is::

    {"message": {"role": "assistant", "content": [blocks]},
     "stop_reason": "end_turn" | "tool_use" | ..., "usage": {"input_tokens", "output_tokens"}}

:class:`ScriptedModel` answers from a list of recorded replies, in order; it is how tests and
users produce logs without a provider, and how a replay answers from ``model.json``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ..core.errors import CaseError
from ..core.request import request_sha256
from ..core.shapes import JsonObject


class Model(Protocol):
    def respond(self, request: dict[str, Any], index: int) -> dict[str, Any]: ...


class ModelExhausted(CaseError):
    """More model calls than recorded replies: ``model_exhausted`` with stop_key ``model:<n>``."""

    def __init__(self, index: int) -> None:
        super().__init__(
            "model_exhausted",
            f"the agent asked for model reply {index} (counting from 0), which the recording "
            "does not hold",
            hint="record the missing reply, or answer it with --supply "
            f'\'{{"calls": {{"model:{index}": <reply>}}}}\'',
        )
        self.stop_key = f"model:{index}"


def text_reply(text: str, *, input_tokens: int = 0, output_tokens: int = 0) -> dict[str, Any]:
    """A final reply holding one text block (stop_reason ``end_turn``)."""
    return {
        "message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
        "stop_reason": "end_turn",
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


def tool_reply(
    *calls: tuple[str, str, dict[str, Any]],
    text: str | None = None,
    input_tokens: int = 0,
    output_tokens: int = 0,
) -> dict[str, Any]:
    """A reply calling tools: each call is ``(tool_use_id, name, input)``; stop_reason
    ``tool_use``."""
    content: list[dict[str, Any]] = []
    if text:
        content.append({"type": "text", "text": text})
    for tid, name, inp in calls:
        content.append({"type": "tool_use", "id": tid, "name": name, "input": inp})
    return {
        "message": {"role": "assistant", "content": content},
        "stop_reason": "tool_use",
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


def normalize_reply(reply: Any, *, where: str = "reply") -> dict[str, Any]:
    """Check a reply's shape; return ``{message, stop_reason, usage}``.

    Raises ``CaseError("invalid_request")`` naming ``where`` for a malformed reply.
    """
    if not isinstance(reply, dict):
        raise CaseError(
            "invalid_request",
            f"{where} must be an object",
            hint='a reply is {"message": {"role": "assistant", "content": [{"type": "text", '
            '"text": "..."}]}, "stop_reason": "end_turn", "usage": {"input_tokens": 0, '
            '"output_tokens": 0}}',
        )
    msg = reply.get("message")
    if not (
        isinstance(msg, dict)
        and msg.get("role") == "assistant"
        and isinstance(msg.get("content"), list)
        and all(isinstance(b, dict) and isinstance(b.get("type"), str) for b in msg["content"])
    ):
        raise CaseError(
            "invalid_request",
            f"{where}.message must be {{role: assistant, content: [blocks]}}",
        )
    stop = reply.get("stop_reason")
    if not isinstance(stop, str) or not stop:
        raise CaseError("invalid_request", f"{where}.stop_reason must be a non-empty string")
    usage = reply.get("usage", {"input_tokens": 0, "output_tokens": 0})
    if not (
        isinstance(usage, dict)
        and all(
            isinstance(usage.get(k), int) and not isinstance(usage.get(k), bool) and usage[k] >= 0
            for k in ("input_tokens", "output_tokens")
        )
    ):
        raise CaseError(
            "invalid_request", f"{where}.usage must hold input_tokens and output_tokens"
        )
    for b in msg["content"]:
        if b["type"] == "tool_use" and not (
            isinstance(b.get("id"), str)
            and isinstance(b.get("name"), str)
            and isinstance(b.get("input"), dict)
        ):
            raise CaseError(
                "invalid_request", f"{where} has a tool_use block without id/name/input"
            )
    return {"message": msg, "stop_reason": stop, "usage": usage}


class ScriptedModel:
    """Answers the n-th model call with the n-th reply; raises :class:`ModelExhausted` after.

    ``supply`` maps extra indexes to replies (the ``--supply`` answers ``model:<n>``).
    :attr:`requests` records each request's sha256 in call order.
    """

    def __init__(
        self, replies: Sequence[JsonObject], *, supply: dict[int, JsonObject] | None = None
    ) -> None:
        self.replies = [normalize_reply(r, where=f"replies[{i}]") for i, r in enumerate(replies)]
        self.supply = dict(supply or {})
        self.requests: list[str] = []
        self.used = 0

    def respond(self, request: JsonObject, index: int) -> JsonObject:
        self.requests.append(request_sha256(request))
        if index < len(self.replies):
            self.used = max(self.used, index + 1)
            return self.replies[index]
        if index in self.supply:
            return normalize_reply(self.supply[index], where=f"supply model:{index}")
        raise ModelExhausted(index)
