"""Streamed response bodies (server-sent events) reassembled into one :class:`Answer` per
response (spec/importers.md 6.3).

* Anthropic: ``message_start`` (id, model, input usage), ``content_block_start`` /
  ``content_block_delta`` (``text_delta``, ``input_json_delta``, ``thinking_delta``) /
  ``content_block_stop`` per block by ``index``, ``message_delta`` (stop reason, output
  usage), ``message_stop`` (the end); an ``error`` event is a provider error.
* Chat Completions: ``data:`` chunks whose ``choices[0].delta`` carry content and
  ``tool_calls`` by ``index`` (id and name once, ``arguments`` in pieces), a
  ``finish_reason``, usage in a last chunk, then ``data: [DONE]``.
* Responses: ``response.completed`` / ``response.incomplete`` hold the whole response
  (read as a non-streamed body); ``response.failed`` and ``error`` are provider errors;
  without them the stream was cut and the items already done (``response.output_item.done``)
  and the text deltas are what was received.

A stream that stops before its end (no ``message_stop``, no ``finish_reason``, no
``response.completed``) is an :class:`Answer` with ``cut``: its tool calls whose arguments
were still streaming are dropped (listed in ``dropped``: a Chat stream says no call is
whole before its ``finish_reason``, so all of its calls), its text kept. Tool arguments are
decoded once, when the block is whole.
"""

from __future__ import annotations

from typing import Any

import orjson

from ..arguments import decode_arguments
from ..lenient import Note, loads_exact, long_integer_in
from .apis import _FINISH, ANTHROPIC, CHAT, Answer, _dict, answer_of, chat_usage, error_message


def events(text: str, notes: list[Note] | None = None) -> list[tuple[str, Any]]:
    """The ``(event name, data)`` pairs of an SSE body; data that is not JSON is kept as
    text (``[DONE]``). With ``notes``, each event whose data is whole (a blank line ends it)
    but neither JSON nor ``[DONE]`` is damaged, not cut: dropped with an ``import_skipped``
    note (reason ``invalid_line``) naming the event (from 1); the body's last event, when
    no blank line ends it, is where the stream was cut and is kept as its text."""
    out: list[tuple[str, Any]] = []
    name, data, seen = "", list[str](), 0
    loads = loads_exact if long_integer_in(text) else orjson.loads  # one scan of the body
    line: str | None
    for line in [*text.splitlines(), None]:  # None: the body ends (no blank line there)
        if not line:
            if data:
                seen += 1
                raw = "\n".join(data)
                try:
                    value: Any = loads(raw)
                except orjson.JSONDecodeError:
                    value = raw
                    if notes is not None and line is not None and raw != "[DONE]":
                        _damaged(seen, name or "message", raw, notes)
                        name, data = "", list[str]()
                        continue
                out.append((name or "message", value))
            name, data = "", list[str]()
        elif line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip(" "))
    return out


def _damaged(k: int, name: str, raw: str, notes: list[Note]) -> None:
    shown = raw if len(raw) <= 40 else f"{raw[:40]}..."
    notes.append(
        Note(
            "import_skipped",
            "invalid_line",
            f"streamed event {k} ({name}) is whole but its data is not JSON ({shown!r}): "
            "skipped, the events after it read",
        )
    )


def is_stream(text: str, content_type: str) -> bool:
    """Whether a response body is an SSE stream."""
    if "text/event-stream" in content_type:
        return True
    head = text.lstrip()[:16]
    return head.startswith(("event:", "data:"))


def _anthropic(evs: list[tuple[str, Any]], notes: list[Note]) -> Answer:
    ans = Answer(cut=True)
    blocks: dict[int, dict[str, Any]] = {}
    args: dict[int, list[str]] = {}
    done: set[int] = set()
    for _, d in evs:
        t = d.get("type") if isinstance(d, dict) else None
        if t == "message_start" and isinstance(d.get("message"), dict):
            m = d["message"]
            ans.response_id, ans.model = m.get("id"), m.get("model") or ""
            ans.usage = dict(m["usage"]) if isinstance(m.get("usage"), dict) else {}
        elif t == "content_block_start" and isinstance(d.get("content_block"), dict):
            i = d.get("index", len(blocks))
            blocks[i] = dict(d["content_block"])
            args[i] = []
        elif t == "content_block_delta" and isinstance(d.get("delta"), dict):
            b, delta = blocks.get(d.get("index", -1)), d["delta"]
            if b is None:
                continue
            dt = delta.get("type")
            if dt == "text_delta":
                b["text"] = b.get("text", "") + str(delta.get("text", ""))
            elif dt == "thinking_delta":
                b["thinking"] = b.get("thinking", "") + str(delta.get("thinking", ""))
            elif dt == "input_json_delta":
                args[d["index"]].append(str(delta.get("partial_json", "")))
        elif t == "content_block_stop":
            done.add(d.get("index", -1))
        elif t == "message_delta":
            delta = d.get("delta") if isinstance(d.get("delta"), dict) else {}
            ans.stop_reason = delta.get("stop_reason") or ans.stop_reason
            if isinstance(d.get("usage"), dict):
                ans.usage.update(d["usage"])
        elif t == "message_stop":
            ans.cut = False
        elif t == "error":
            ans.error = error_message(0, d)
    for i in sorted(blocks):
        b = blocks[i]
        if b.get("type") == "tool_use":
            if i not in done:  # its arguments were still streaming
                ans.dropped.append({"id": b.get("id"), "name": b.get("name")})
                continue
            b["input"] = (
                decode_arguments("".join(args[i]), notes) if args[i] else b.get("input", {})
            )
            if not isinstance(b["input"], dict):
                b["input"] = {}
        elif b.get("type") == "thinking":
            b = {"type": "thinking", "thinking": b.get("thinking", "")}
        ans.blocks.append(b)
    return ans


def _chat(evs: list[tuple[str, Any]], notes: list[Note]) -> Answer:
    ans = Answer(cut=True)
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    for _, d in evs:
        if not isinstance(d, dict):
            continue  # [DONE]
        if isinstance(d.get("error"), dict):
            ans.error = error_message(0, d)
        ans.response_id = ans.response_id or d.get("id")
        ans.model = ans.model or d.get("model") or ""
        if isinstance(d.get("usage"), dict):
            ans.usage = chat_usage(d["usage"])
        for ch in d.get("choices") or []:
            if not isinstance(ch, dict) or ch.get("index", 0) != 0:
                continue
            delta = _dict(ch.get("delta"))
            if isinstance(delta.get("content"), str):
                text.append(delta["content"])
            for c in delta.get("tool_calls") or []:
                if not isinstance(c, dict):
                    continue
                slot = calls.setdefault(c.get("index", len(calls)), {"args": []})
                fn = _dict(c.get("function"))
                slot.setdefault("id", c.get("id"))
                slot["id"] = slot["id"] or c.get("id")
                slot["name"] = slot.get("name") or fn.get("name")
                if isinstance(fn.get("arguments"), str):
                    slot["args"].append(fn["arguments"])
            if ch.get("finish_reason"):
                ans.stop_reason = _FINISH.get(ch["finish_reason"], ch["finish_reason"])
                ans.cut = False
    if "".join(text):
        ans.blocks.append({"type": "text", "text": "".join(text)})
    for i in sorted(calls):
        c = calls[i]
        block = {
            "type": "tool_use",
            "id": c.get("id") or f"call_{i}",
            "name": c.get("name") or "tool",
        }
        if ans.cut:  # no chunk says a call's arguments are whole: each may still stream
            ans.dropped.append({"id": block["id"], "name": block["name"]})
            continue
        block["input"] = decode_arguments("".join(c["args"]), notes)
        ans.blocks.append(block)
    return ans


def _responses(evs: list[tuple[str, Any]], notes: list[Note]) -> Answer:
    items: list[Any] = []
    text: list[str] = []
    rid, model = None, ""
    streaming: dict[Any, dict[str, Any]] = {}  # function_call items added, not yet done
    for _, d in evs:
        t = d.get("type") if isinstance(d, dict) else None
        resp = d.get("response") if isinstance(d, dict) else None
        if isinstance(resp, dict):
            rid, model = resp.get("id") or rid, resp.get("model") or model
        if t in ("response.completed", "response.incomplete") and isinstance(resp, dict):
            return answer_of("openai-responses", resp, notes)
        if t == "response.failed":
            return Answer(response_id=rid, model=model, error=error_message(0, resp or {}))
        if t == "error":
            return Answer(response_id=rid, model=model, error=error_message(0, d))
        if t == "response.output_item.added" and isinstance(d.get("item"), dict):
            if d["item"].get("type") == "function_call":
                streaming[d["item"].get("id")] = d["item"]
        elif t == "response.output_item.done" and isinstance(d.get("item"), dict):
            items.append(d["item"])
            streaming.pop(d["item"].get("id"), None)
            text = []
        elif t == "response.output_text.delta" and isinstance(d.get("delta"), str):
            text.append(d["delta"])
    ans = answer_of("openai-responses", {"id": rid, "model": model, "output": items}, notes)
    ans.cut = True
    if "".join(text):
        ans.blocks.append({"type": "text", "text": "".join(text)})
    ans.dropped = [{"id": c.get("call_id"), "name": c.get("name")} for c in streaming.values()]
    return ans


def stream_answer(api: str, text: str, notes: list[Note]) -> Answer:
    """The :class:`Answer` of a streamed body of ``api`` (module docstring)."""
    evs = events(text, notes)
    if api == ANTHROPIC:
        return _anthropic(evs, notes)
    if api == CHAT:
        return _chat(evs, notes)
    return _responses(evs, notes)
