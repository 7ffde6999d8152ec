"""``codex exec --json`` event streams -> turns (spec/importers.md section 3).

Lines ``{"type": ...}``: ``thread.started {thread_id}``, ``turn.started``, ``item.started`` /
``item.updated`` / ``item.completed {item: {id, type, ...}}``, ``turn.completed {usage}``,
``turn.failed {error: {message}}``, ``error {message}``. Items (the final state, from
``item.completed``; an older ``item.details.item_type`` layout is read too):

=====================  ===================================================================
``agent_message``      a ``text`` block of the model's reply
``reasoning``          a ``thinking`` block
``command_execution``  ``tool_use`` ``shell {command}``; result ``aggregated_output``,
                       ``is_error`` when ``exit_code`` is not 0 or ``status`` is ``failed``
``file_change``        ``tool_use`` ``apply_patch {changes}``; result its ``status``
``mcp_tool_call``      ``tool_use`` ``mcp__<server>__<tool> {arguments}``; result its
                       ``result`` (or ``error``)
``web_search``         a ``web_search`` block (server side: no tool call, no result)
``todo_list``          ``x_codex.todo_list {items}``
``error``              ``x_codex.error {message}``
=====================  ===================================================================

A reply is a run of items; a text or reasoning item after a tool call starts the next reply.
``turn.completed``'s usage goes on the turn's last reply; a turn the stream ends inside
(no ``turn.completed`` or ``turn.failed``) fails ``interrupted``. The stream carries no user prompt:
each turn's ``user_message`` is ``prompt`` when given, else a visible placeholder
(:data:`~threads_cases.importers.common.PLACEHOLDER_PROMPT`), and a note says so. An item
started but never completed is a tool call without a result (the turn then fails
``interrupted``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..arguments import decode_arguments
from ..callids import scope_and_report
from ..common import (
    PLACEHOLDER_PROMPT,
    Extra,
    Ref,
    Reply,
    Result,
    Stats,
    Turn,
    cut_short,
    parse_ts_ms,
)
from ..lenient import Note
from .values import blocks_or_text, text_of

EXEC_TYPES = (
    "thread.started",
    "turn.started",
    "turn.completed",
    "turn.failed",
    "item.started",
    "item.updated",
    "item.completed",
    "error",
)
TOOL_ITEMS = ("command_execution", "file_change", "mcp_tool_call")
#: why a turn the stream never ended is cut short
NO_TURN_END = "the stream ends inside this turn, before its turn.completed event"


def exec_item(obj: dict[str, Any]) -> dict[str, Any]:
    """The ``item`` of an item event, with the older ``details`` layout flattened."""
    item: dict[str, Any] = obj["item"]
    det = item.get("details")
    if isinstance(det, dict) and "type" not in item:
        item = {
            **det,
            **{k: v for k, v in item.items() if k != "details"},
            "type": det.get("item_type") or det.get("type"),
        }
    return item


def exec_problem(obj: dict[str, Any]) -> str | None:
    """Why an exec stream line cannot be imported, or None."""
    t = obj.get("type")
    if (
        t == "thread.started"
        and "thread_id" in obj
        and (not isinstance(obj["thread_id"], str) or not obj["thread_id"])
    ):
        return "thread_id must be a non-empty string"
    if t in ("item.started", "item.updated", "item.completed"):
        item = obj.get("item")
        if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not item["id"]:
            return "item must be an object with a non-empty string id"
        if not isinstance(exec_item(obj).get("type"), str):
            return "item.type must be a string"
    return None


def exec_tool_name(item: dict[str, Any]) -> str | None:
    """The tool name of a tool item, or None for an item that is not a tool call."""
    it = item.get("type")
    if it == "command_execution":
        return "shell"
    if it == "file_change":
        return "apply_patch"
    if it == "mcp_tool_call":
        server = text_of(item.get("server")) or "server"
        return f"mcp__{server}__{text_of(item.get('tool')) or 'tool'}"
    return None


def exec_input(item: dict[str, Any], notes: list[Note] | None = None) -> dict[str, Any]:
    """The tool input of a tool item (repairs of JSON text arguments go to ``notes``)."""
    it = item.get("type")
    if it == "command_execution":
        return {"command": text_of(item.get("command"))}
    if it == "file_change":
        ch = item.get("changes")
        return {"changes": ch if isinstance(ch, list) else []}
    return decode_arguments(item.get("arguments"), notes if notes is not None else [])


def exec_result(item: dict[str, Any]) -> tuple[Any, bool]:
    """``(content, is_error)`` of a completed tool item."""
    it = item.get("type")
    status = item.get("status")
    if it == "command_execution":
        code = item.get("exit_code")
        failed = status == "failed" or (isinstance(code, int) and code != 0)
        return text_of(item.get("aggregated_output")), failed
    if it == "file_change":
        return text_of(status) or "completed", status == "failed"
    err = item.get("error")
    if err:
        msg = err.get("message") if isinstance(err, dict) else err
        return text_of(msg), True
    res = item.get("result")
    if isinstance(res, dict) and "content" in res:
        return blocks_or_text(res["content"]), status == "failed"
    return blocks_or_text(res), status == "failed"


class ExecMapper:
    """Maps the kept lines of an exec stream to turns and extension events."""

    def __init__(self, prompt: str | None, stats: Stats) -> None:
        self.prompt = prompt
        self.stats = stats
        self.turn: Turn | None = None
        self.reply: Reply | None = None
        self.started: dict[str, tuple[dict[str, Any], Ref]] = {}
        self.told = False

    def items(self, lines: Iterable[tuple[int, Any]]) -> Iterator[Turn | Extra]:
        last_ts: int | None = None
        for lineno, obj in lines:
            t = obj.get("type")
            ts = parse_ts_ms(obj.get("timestamp"))
            last_ts = ts if ts is not None else last_ts
            ref = Ref(f"L{lineno}", last_ts, lineno, str(t))
            if t == "turn.started":
                yield from self._start(ref)
            elif t == "thread.started":
                continue
            elif t in ("turn.completed", "turn.failed"):
                yield from self._end(obj, ref)
            elif t == "error":
                yield from self._error(obj, ref)
            elif t in ("item.started", "item.updated"):
                item = exec_item(obj)
                if item.get("type") in TOOL_ITEMS:
                    self.started[item["id"]] = (item, ref)
                self.stats.skip(f"{t} event (the item.completed event is used)")
            elif t != "item.completed":
                self.stats.skip(f"unknown event type {t!r}")
            else:
                self._completed(exec_item(obj), ref)
        if self.turn is not None:
            # every turn of a stream written to its end has turn.completed or turn.failed
            turn = self._close(self.turn)
            replies = turn.replies
            if replies and replies[-1].stop_reason is None:
                replies[-1].cut = True  # it may have gone on: a reply cut short (section 1)
            cut_short(turn, NO_TURN_END, self.stats)
            yield turn

    def _add_block(self, block: dict[str, Any], ref: Ref, tool: bool) -> Reply:
        assert self.turn is not None
        if self.reply is None or (not tool and self.reply.tool_uses()):
            self.reply = Reply([], ref)
            self.turn.items.append(self.reply)
        self.reply.blocks.append(block)
        return self.reply

    def _close(self, t: Turn) -> Turn:
        for item, ref in self.started.values():  # started, never completed
            name = exec_tool_name(item)
            if name:
                block = {"type": "tool_use", "id": item["id"], "name": name}
                self._add_block({**block, "input": exec_input(item)}, ref, True)
                self.stats.skip("tool call started but never completed")
        self.started.clear()
        return t

    def _start(self, ref: Ref) -> Iterator[Turn]:
        if self.turn is not None:
            yield self._close(self.turn)
        if self.prompt is None and not self.told:
            self.stats.notes.append(
                "the codex exec stream holds no user prompt: each turn's "
                f"user message is the placeholder {PLACEHOLDER_PROMPT!r} "
                "(pass --prompt TEXT to record it)"
            )
            self.told = True
        self.turn = Turn(self.prompt if self.prompt is not None else PLACEHOLDER_PROMPT, ref)
        self.reply = None

    def _end(self, obj: dict[str, Any], ref: Ref) -> Iterator[Turn]:
        t, turn = obj.get("type"), self.turn
        if turn is None:
            self.stats.skip(f"{t} outside a turn")
            return
        if t == "turn.completed":
            if turn.replies:
                turn.replies[-1].usage = obj.get("usage") or {}
        else:
            err = obj.get("error")
            msg = err.get("message") if isinstance(err, dict) else None
            turn.failed = ("turn_failed", msg if isinstance(msg, str) else "", ref)
        yield self._close(turn)
        self.turn, self.reply = None, None

    def _error(self, obj: dict[str, Any], ref: Ref) -> Iterator[Extra]:
        msg = obj.get("message")
        extra = Extra(
            "x_codex.error", {"message": msg if isinstance(msg, str) else ""}, ref, "error"
        )
        if self.turn is None:
            yield extra
        else:
            self.turn.items.append(extra)

    def _completed(self, item: dict[str, Any], ref: Ref) -> None:
        self.started.pop(item["id"], None)
        it = item.get("type")
        turn = self.turn
        if turn is None:
            self.stats.skip("item outside a turn")
        elif it == "agent_message":
            self._add_block({"type": "text", "text": text_of(item.get("text"))}, ref, False)
        elif it == "reasoning":
            self._add_block({"type": "thinking", "thinking": text_of(item.get("text"))}, ref, False)
        elif it == "web_search":
            self._add_block({"type": "web_search", "query": text_of(item.get("query"))}, ref, False)
        elif it in TOOL_ITEMS:
            name = exec_tool_name(item)
            assert name is not None
            block = {"type": "tool_use", "id": item["id"], "name": name}
            notes: list[Note] = []
            r = self._add_block({**block, "input": exec_input(item, notes)}, ref, True)
            for n in notes:
                where = f"arguments of {item['id']}: {n.message}"
                self.stats.warn(ref.line or 0, n.code, n.reason, where)
            # an item id the reply already holds
            scope_and_report(r, len(r.blocks) - 1, where=str(it), line=ref.line, stats=self.stats)
            content, is_error = exec_result(item)
            r.answer(item["id"], Result(content, is_error, ref))  # the call just added
        elif it == "todo_list":
            items = item.get("items")
            data: dict[str, Any] = {"items": items if isinstance(items, list) else []}
            turn.items.append(Extra("x_codex.todo_list", data, ref, "todo"))
        elif it == "error":
            msg = {"message": text_of(item.get("message"))}
            turn.items.append(Extra("x_codex.error", msg, ref, "error"))
        else:
            self.stats.skip(f"unknown item type {it!r}")
