"""inspect-ai chat messages, contents and tool results as thread content
(spec/importers.md 11.3).

* A message's ``content`` is a string or a list of contents: ``text`` -> a text block,
  ``reasoning`` -> a thinking block (``redacted`` ones -> ``redacted_thinking {data}``),
  ``image`` -> an image block ``{source: {type: "url", url}}``; a ``tool_use`` content (a
  provider-side tool the model ran itself) -> ``server_tool_use`` with its keys; any other
  content (audio, video, document, data) is kept as it is.
* An assistant message's ``tool_calls`` (``{id, function, arguments}``) are tool_use blocks,
  ``arguments`` decoded exactly once (section 4, "Arguments").
* Strings ``attachment://<hash>`` are replaced by the sample's ``attachments[hash]``, and
  (older logs) ``tc://<hash>`` by its ``transcript.content[hash]``.
* A tool result (a tool event's ``result``, a tool message's ``content``) is its text or
  blocks; with an ``error`` ``{type, message}`` it is an error result of that message.
"""

from __future__ import annotations

from typing import Any

import orjson

from ..arguments import decode_arguments
from ..lenient import Note

ATTACHMENT = "attachment://"
TRANSCRIPT_CONTENT = "tc://"


class Contents:
    """Converts the values of one sample (its ``attachments`` resolved)."""

    def __init__(self, attachments: Any, content: Any = None) -> None:
        self.attachments: dict[str, Any] = attachments if isinstance(attachments, dict) else {}
        self.content_refs: dict[str, Any] = content if isinstance(content, dict) else {}

    def text(self, value: Any) -> str:
        if isinstance(value, str):
            if value.startswith(ATTACHMENT):
                got = self.attachments.get(value[len(ATTACHMENT) :])
                return got if isinstance(got, str) else value
            if value.startswith(TRANSCRIPT_CONTENT):
                got = self.content_refs.get(value[len(TRANSCRIPT_CONTENT) :])
                return got if isinstance(got, str) else value
            return value
        return ""

    def resolve(self, value: Any) -> Any:
        """``value`` with every attachment reference replaced."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.resolve(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        return value

    def block(self, c: Any) -> dict[str, Any] | None:
        if not isinstance(c, dict) or not isinstance(c.get("type"), str):
            return None
        t = c["type"]
        if t == "text":
            text = self.text(c.get("text"))
            return {"type": "text", "text": text} if text else None
        if t == "reasoning":
            if c.get("redacted"):
                return {"type": "redacted_thinking", "data": self.text(c.get("reasoning"))}
            b: dict[str, Any] = {"type": "thinking", "thinking": self.text(c.get("reasoning"))}
            if isinstance(c.get("signature"), str):
                b["signature"] = c["signature"]
            return b
        if t == "image":
            return {"type": "image", "source": {"type": "url", "url": self.text(c.get("image"))}}
        if t == "tool_use":
            return {**self.resolve(c), "type": "server_tool_use"}
        return self.resolve(c)  # type: ignore[no-any-return]

    def content(self, value: Any) -> str | list[dict[str, Any]]:
        """A message's content as thread content (a string or blocks)."""
        if isinstance(value, list):
            return [b for b in (self.block(c) for c in value) if b is not None]
        return self.text(value)

    def blocks(self, value: Any) -> list[dict[str, Any]]:
        """A message's content as a list of blocks (a string is one text block)."""
        got = self.content(value)
        if isinstance(got, str):
            return [{"type": "text", "text": got}] if got else []
        return got

    def calls(self, message: dict[str, Any], base: str, notes: list[Note]) -> list[dict[str, Any]]:
        """The tool_use blocks of an assistant message's ``tool_calls``; a call without an id
        gets ``<base>-call<k>``."""
        out = []
        raw = message.get("tool_calls")
        for k, c in enumerate(raw if isinstance(raw, list) else []):
            if not isinstance(c, dict):
                continue
            cid = c.get("id") if isinstance(c.get("id"), str) and c.get("id") else f"{base}-call{k}"
            name = c.get("function") if isinstance(c.get("function"), str) else ""
            inp = decode_arguments(self.resolve(c.get("arguments")), notes)
            out.append({"type": "tool_use", "id": cid, "name": name or "tool", "input": inp})
        return out

    def result(self, value: Any, error: Any) -> tuple[Any, bool]:
        """A tool result's content and whether it is an error."""
        if isinstance(error, dict):
            message = self.text(error.get("message")) or str(error.get("type") or "error")
            return message, True
        if isinstance(value, (str, list)):
            return self.content(value), False
        if isinstance(value, dict):
            block = self.block(value)
            return ([block] if block else ""), False
        if value is None:
            return "", False
        return orjson.dumps(value).decode(), False
