"""The OpenAI Chat Completions API for live runs (spec/replay.md 11.3). Imports the
``openai`` SDK (``threads-cases[live]``).

Request: the system prompt becomes a ``system`` message; a user message's ``text`` blocks
become text parts and each ``tool_result`` block a ``tool`` message (its content as text);
an assistant message's text blocks become its content and its ``tool_use`` blocks its
``tool_calls`` (arguments as JSON text); other blocks (thinking) are left out. Tools become
``function`` tools. Reply: the content becomes a text block, each tool call a ``tool_use``
block (arguments parsed); ``finish_reason`` ``stop`` -> ``end_turn``, ``tool_calls`` ->
``tool_use``, ``length`` -> ``max_tokens``; usage ``prompt_tokens`` (less the cached ones) ->
``input_tokens``, cached -> ``cache_read_input_tokens``, ``completion_tokens`` ->
``output_tokens``.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import openai

from .providers import ClientSettings, ProviderAnswer, ProviderError, provider_error

FINISH = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def _user(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"role": "user", "content": content}]
    out: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for b in content:
        if b.get("type") == "tool_result":
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": b.get("tool_use_id", ""),
                    "content": _text_of(b.get("content")),
                }
            )
        elif b.get("type") == "text":
            parts.append({"type": "text", "text": b.get("text", "")})
    if parts:
        out.append({"role": "user", "content": parts})
    return out


def _assistant(content: Any) -> dict[str, Any]:
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
    text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
    msg: dict[str, Any] = {"role": "assistant", "content": text or None}
    calls = [
        {
            "id": b["id"],
            "type": "function",
            "function": {"name": b["name"], "arguments": json.dumps(b["input"])},
        }
        for b in blocks
        if b.get("type") == "tool_use"
    ]
    if calls:
        msg["tool_calls"] = calls
    return msg


def to_chat_completions(request: dict[str, Any], max_tokens: int) -> dict[str, Any]:
    """``chat.completions.create`` keyword arguments for a case request."""
    messages: list[dict[str, Any]] = []
    if request.get("system"):
        messages.append({"role": "system", "content": request["system"]})
    for m in request["messages"]:
        if m["role"] == "assistant":
            messages.append(_assistant(m["content"]))
        else:
            messages.extend(_user(m["content"]))
    out: dict[str, Any] = {
        "model": request["model"],
        "messages": messages,
        "max_completion_tokens": max_tokens,
    }
    if request.get("tools"):
        out["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t["name"],
                    "description": t["description"],
                    "parameters": t["input_schema"],
                },
            }
            for t in request["tools"]
        ]
    return out


def _usage(usage: Any) -> tuple[dict[str, int], bool]:
    if not (
        isinstance(usage, dict)
        and isinstance(usage.get("prompt_tokens"), int)
        and isinstance(usage.get("completion_tokens"), int)
    ):
        return {"input_tokens": 0, "output_tokens": 0}, False
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    cached = cached if isinstance(cached, int) else 0
    out = {
        # not clamped: a negative count makes the cost unknown (spend.usage_problem)
        "input_tokens": usage["prompt_tokens"] - cached,
        "output_tokens": usage["completion_tokens"],
    }
    if cached:
        out["cache_read_input_tokens"] = cached
    return out, True


def from_chat_completions(body: dict[str, Any]) -> ProviderAnswer:
    """A reply ``{message, stop_reason, usage}`` from a Chat Completions answer (as JSON).
    Raises :class:`ProviderError` when it is not one."""
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ProviderError("the provider's answer has no choices")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise ProviderError("the provider's answer has no message")
    blocks: list[dict[str, Any]] = []
    if isinstance(message.get("content"), str) and message["content"]:
        blocks.append({"type": "text", "text": message["content"]})
    for call in message.get("tool_calls") or []:
        fn = call.get("function") if isinstance(call, dict) else None
        try:
            assert isinstance(fn, dict)
            args = json.loads(fn.get("arguments") or "{}")
            assert isinstance(args, dict)
            blocks.append({"type": "tool_use", "id": call["id"], "name": fn["name"], "input": args})
        except (AssertionError, KeyError, ValueError):
            raise ProviderError("the provider's answer has a malformed tool call") from None
    finish = choices[0].get("finish_reason")
    stop = FINISH.get(finish, finish) if isinstance(finish, str) and finish else None
    if stop is None:
        raise ProviderError("the provider's answer has no finish_reason")
    usage, reported = _usage(body.get("usage"))
    reply = {
        "message": {"role": "assistant", "content": blocks},
        "stop_reason": stop,
        "usage": usage,
    }
    model = body.get("model")
    return ProviderAnswer(reply, reported, model if isinstance(model, str) and model else None)


class OpenAIProvider:
    """Calls ``chat.completions.create`` through the official SDK (its retries and timeout)."""

    name = "openai"

    def __init__(self, settings: ClientSettings, key: str, hosts: tuple[str, ...]) -> None:
        self.hosts = hosts
        self.settings = settings
        self._client = openai.OpenAI(
            api_key=key,
            base_url=settings.url(),
            timeout=settings.timeout,
            max_retries=settings.max_retries,
        )

    def call(self, request: dict[str, Any]) -> ProviderAnswer:
        kwargs = to_chat_completions(request, self.settings.max_tokens)
        try:
            completion = self._client.chat.completions.create(**kwargs)
            with warnings.catch_warnings():  # an off-schema body is judged below, not warned
                warnings.simplefilter("ignore")
                body = completion.model_dump(mode="json", exclude_none=True)
        except openai.APIError as exc:
            raise provider_error(exc) from None
        except ValueError:
            raise ProviderError("the provider's answer is not JSON") from None
        return from_chat_completions(body)
