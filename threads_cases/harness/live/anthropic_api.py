"""The Anthropic Messages API for live runs (spec/replay.md 11.3): the case's request and
reply shapes are the Messages API's own, so the conversion keeps blocks as they are and
only drops what the API does not take (an empty system prompt) or adds what it needs
(``max_tokens``). Imports the ``anthropic`` SDK (``threads-cases[live]``)."""

from __future__ import annotations

import warnings
from typing import Any

import anthropic

from .providers import ClientSettings, ProviderAnswer, ProviderError, provider_error

USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


def to_messages_api(request: dict[str, Any], max_tokens: int) -> dict[str, Any]:
    """``messages.create`` keyword arguments for a case request."""
    out: dict[str, Any] = {
        "model": request["model"],
        "max_tokens": max_tokens,
        "messages": request["messages"],
    }
    if request.get("system"):
        out["system"] = request["system"]
    if request.get("tools"):
        out["tools"] = [
            {"name": t["name"], "description": t["description"], "input_schema": t["input_schema"]}
            for t in request["tools"]
        ]
    return out


def _block(b: dict[str, Any]) -> dict[str, Any]:
    kind = b.get("type")
    if kind == "text":
        return {"type": "text", "text": b.get("text", "")}
    if kind == "tool_use":
        return {"type": "tool_use", "id": b["id"], "name": b["name"], "input": b["input"]}
    if kind == "thinking":
        return {
            "type": "thinking",
            "thinking": b.get("thinking", ""),
            "signature": b.get("signature", ""),
        }
    return b


def from_messages_api(body: dict[str, Any]) -> ProviderAnswer:
    """A reply ``{message, stop_reason, usage}`` from a Messages API answer (as JSON).
    Raises :class:`ProviderError` when it is not one."""
    content = body.get("content")
    stop = body.get("stop_reason")
    if not isinstance(content, list) or not all(isinstance(b, dict) for b in content):
        raise ProviderError("the provider's answer has no content list")
    if not isinstance(stop, str) or not stop:
        raise ProviderError("the provider's answer has no stop_reason")
    try:
        blocks = [_block(b) for b in content]
    except KeyError:
        raise ProviderError(
            "the provider's answer has a tool_use block without id/name/input"
        ) from None
    usage = body.get("usage")
    reported = isinstance(usage, dict) and all(
        isinstance(usage.get(k), int) for k in ("input_tokens", "output_tokens")
    )
    out_usage = {"input_tokens": 0, "output_tokens": 0}
    if reported:
        assert isinstance(usage, dict)
        out_usage = {k: usage[k] for k in USAGE_KEYS if isinstance(usage.get(k), int)}
    reply = {
        "message": {"role": "assistant", "content": blocks},
        "stop_reason": stop,
        "usage": out_usage,
    }
    model = body.get("model")
    return ProviderAnswer(reply, reported, model if isinstance(model, str) and model else None)


class AnthropicProvider:
    """Calls ``messages.create`` through the official SDK (its retries and timeout)."""

    name = "anthropic"

    def __init__(self, settings: ClientSettings, key: str, hosts: tuple[str, ...]) -> None:
        self.hosts = hosts
        self.settings = settings
        self._client = anthropic.Anthropic(
            api_key=key,
            base_url=settings.url(),
            timeout=settings.timeout,
            max_retries=settings.max_retries,
        )

    def call(self, request: dict[str, Any]) -> ProviderAnswer:
        kwargs = to_messages_api(request, self.settings.max_tokens)
        try:
            message = self._client.messages.create(**kwargs)
            with warnings.catch_warnings():  # an off-schema body is judged below, not warned
                warnings.simplefilter("ignore")
                body = message.model_dump(mode="json", exclude_none=True)
        except anthropic.APIError as exc:
            raise provider_error(exc) from None
        except ValueError:  # a body that is not JSON
            raise ProviderError("the provider's answer is not JSON") from None
        return from_messages_api(body)
