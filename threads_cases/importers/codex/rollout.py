"""Codex rollout files (``~/.codex/sessions/.../rollout-*.jsonl``) -> turns
(spec/importers.md section 3).

Lines ``{timestamp, type, payload}``: ``session_meta`` (thread_id from ``id``, ``cwd``),
``turn_context`` (the model), ``response_item`` and ``event_msg``. Response items:
``message`` (role ``user``: a real user message starts a turn, but environment context /
instructions are ``x_codex.context {role, content}``; role ``assistant``: text blocks; roles
``developer`` and ``system``: ``x_codex.context``), ``reasoning`` (a ``thinking`` block of
its summary), ``function_call`` / ``custom_tool_call`` / ``local_shell_call`` (``tool_use``;
arguments decoded exactly once, :mod:`..arguments`; a custom tool's text input is
``{"input": text}``), ``function_call_output`` / ``custom_tool_call_output`` (the
``tool_result`` of the call with the same ``call_id``, calls of one reply sharing it
answered by occurrence, :mod:`..callids`; a call repeating one of its reply whole is a copy,
written once; ``is_error`` when it reports a non-zero exit code or ``success: false``),
``web_search_call`` (a ``web_search_call`` block). Event messages: ``token_count`` gives
the usage of the reply before it, ``turn_aborted`` fails the turn (``interrupted``),
``error`` -> ``x_codex.error``; the others repeat response items and are dropped
(``task_complete`` marks the turn ended).

A turn completes only when the recording says so. Writers that record turn ends (a file
holding a ``task_started`` or ``task_complete`` event, or whose ``session_meta.cli_version``
is :data:`TURN_ENDS_FROM` or later) write ``task_complete`` for every finished turn: a turn
of such a file without one (the file stops, or the next turn starts, before it) fails
``interrupted`` with a note. In a file of an older writer, only a damaged last record marks
the open turn as cut short. A turn with an ``error`` event after its last model output
fails with ``provider_error`` and the error's message, whether a ``task_complete`` follows
or not: a provider error is never a completed turn.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from ..arguments import decode_arguments
from ..callids import scope_and_report
from ..common import CUT_AT_END, Extra, Ref, Reply, Result, Stats, Turn, cut_short
from ..lenient import Note
from .values import blocks_or_text, json_object, text_of

ROLLOUT_TYPES = ("session_meta", "turn_context", "response_item", "event_msg", "compacted")
CONTEXT_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md",
    "<user_shell_command>",
    "<INSTRUCTIONS>",
)
#: the first Codex CLI version whose rollout files record ``task_started`` / ``task_complete``
TURN_ENDS_FROM = (0, 100, 0)
#: the turn_failed code of a turn that ended in a provider error
PROVIDER_ERROR = "provider_error"
_CALLS = ("function_call", "custom_tool_call")
_OUTPUTS = ("function_call_output", "custom_tool_call_output")


def records_turn_ends(t: Any, p: dict[str, Any]) -> bool:
    """Whether one rollout line shows a writer that records every turn's end: a
    ``task_started`` / ``task_complete`` event, or a ``session_meta`` whose ``cli_version``
    is :data:`TURN_ENDS_FROM` or later."""
    if t == "event_msg":
        return p.get("type") in ("task_started", "task_complete")
    if t != "session_meta":
        return False
    meta = p["meta"] if isinstance(p.get("meta"), dict) else p
    version = meta.get("cli_version")
    if not isinstance(version, str):
        return False
    parts = version.split("-")[0].split(".")
    if len(parts) != 3 or not all(x.isdigit() for x in parts):
        return False
    return tuple(int(x) for x in parts) >= TURN_ENDS_FROM


def rollout_problem(obj: dict[str, Any]) -> str | None:
    """Why a rollout line cannot be imported, or None."""
    t = obj.get("type")
    if t not in ("response_item", "event_msg", "session_meta", "turn_context"):
        return None
    p = obj.get("payload")
    if not isinstance(p, dict):
        return "payload must be an object"
    if t == "session_meta" and "id" in p and (not isinstance(p["id"], str) or not p["id"]):
        return "payload.id of session_meta must be a non-empty string"
    if t != "response_item":
        return None
    pt = p.get("type")
    if pt in (*_CALLS, *_OUTPUTS) and (not isinstance(p.get("call_id"), str) or not p["call_id"]):
        return f"payload.call_id of a {pt} must be a non-empty string"
    if pt in _CALLS and (not isinstance(p.get("name"), str) or not p["name"]):
        return f"payload.name of a {pt} must be a non-empty string"
    if pt == "message" and not isinstance(p.get("content"), (list, str)):
        return "payload.content of a message must be a list"
    return None


def message_content(content: Any) -> Any:
    """Responses-API content items as Anthropic content: one text -> a string."""
    if isinstance(content, str):
        return content
    blocks: list[dict[str, Any]] = []
    for c in content if isinstance(content, list) else []:
        if not isinstance(c, dict):
            continue
        ct = c.get("type")
        if ct in ("input_text", "output_text", "text"):
            blocks.append({"type": "text", "text": text_of(c.get("text"))})
        elif ct == "input_image":
            blocks.append(
                {"type": "image", "source": {"type": "url", "url": text_of(c.get("image_url"))}}
            )
        elif isinstance(ct, str) and ct:
            blocks.append(dict(c))
    if len(blocks) == 1 and blocks[0]["type"] == "text":
        return blocks[0]["text"]
    return blocks


def reasoning_text(p: dict[str, Any]) -> str:
    """The text of a reasoning item: its ``summary`` parts, else its ``content`` parts."""
    for key in ("summary", "content"):
        parts = p.get(key)
        texts = [
            s["text"]
            for s in (parts if isinstance(parts, list) else [])
            if isinstance(s, dict) and isinstance(s.get("text"), str)
        ]
        if texts:
            return "\n\n".join(texts)
    return ""


def usage_delta(total: dict[str, Any], before: dict[str, Any] | None) -> dict[str, Any]:
    """The usage of one reply from two cumulative totals (counts that are integers)."""
    out: dict[str, Any] = {}
    for k, v in total.items():
        if isinstance(v, int) and not isinstance(v, bool):
            prev = before.get(k, 0) if before else 0
            out[k] = max(0, v - prev) if isinstance(prev, int) else v
    return out


def _reports_error(obj: Any) -> bool:
    """Whether a function call output's JSON object reports a failure: a non-zero integer
    ``metadata.exit_code`` or ``success: false``."""
    if not isinstance(obj, dict):
        return False
    md = obj.get("metadata")
    code = md.get("exit_code") if isinstance(md, dict) else None
    return (isinstance(code, int) and code != 0) or obj.get("success") is False


def rollout_output(output: Any) -> tuple[Any, bool]:
    """``(content, is_error)`` of a function call output."""
    if isinstance(output, dict):
        ok = output.get("success")
        return blocks_or_text(output.get("content", output)), ok is False
    text = text_of(output)
    # The text's value only decides is_error (json_object: the strict reading, else
    # JSON.parse's). Where the strict reader accepts the text, orjson reads the same
    # value; where it refuses text orjson reads (a repeated key, an integer beyond 2^53,
    # deeper than 256 levels), JSON.parse's value is orjson's but for those integers, which
    # orjson keeps as integers: so text orjson reads as reporting no error reports none
    # either way, without the strict round trip. Anything else is read by the rules.
    try:
        if not _reports_error(orjson.loads(text)):
            return text, False
    except orjson.JSONDecodeError:
        pass
    return text, _reports_error(json_object(text))


def call_input(p: dict[str, Any], notes: list[Note]) -> tuple[dict[str, Any], str]:
    """``(input, tool name)`` of a function, custom tool or local shell call; repairs of the
    arguments' JSON text are appended to ``notes``."""
    pt = p.get("type")
    if pt == "function_call":
        return decode_arguments(p.get("arguments"), notes), p["name"]
    if pt == "custom_tool_call":
        return {"input": text_of(p.get("input"))}, p["name"]
    action = p.get("action")
    return (action if isinstance(action, dict) else {}), "local_shell"


class RolloutMapper:
    """Maps the kept lines of a rollout file to turns and extension events."""

    def __init__(self, stats: Stats, *, cut_at_end: bool = False, turn_ends: bool = False) -> None:
        self.stats = stats
        #: the file ends in a damaged record (TranscriptSource.cut_at_end)
        self.cut_at_end = cut_at_end
        #: the writer records task_complete for every finished turn (:func:`records_turn_ends`)
        self.turn_ends = turn_ends
        self.ended = False  # the open turn's task_complete was seen
        #: the open turn's last ``error`` event after its model output: (message, ref)
        self.error: tuple[str, Ref] | None = None
        self.turn: Turn | None = None
        self.reply: Reply | None = None
        self.owners: dict[str, Reply] = {}
        self.total: dict[str, Any] | None = None  # the last cumulative token usage

    def items(self, lines: Iterable[tuple[int, Any, int | None]]) -> Iterator[Turn | Extra]:
        """Map ``(line number, record, its time in ms as pass 1 read it)`` in order."""
        for lineno, obj, ms in lines:
            t = obj.get("type")
            p = obj.get("payload")
            ref = Ref(f"L{lineno}", ms, lineno, str(t))
            if t == "response_item" and type(p) is dict:  # the usual line, first
                yield from self._response_item(p, ref)
            elif t in ("session_meta", "turn_context"):
                self.stats.skip(f"{t} line (its fields go to thread_started)")
            elif not isinstance(p, dict):
                self.stats.skip(f"unknown line type {t!r}")
            elif t == "event_msg":
                yield from self._event(p, ref)
            elif t != "response_item":
                self.stats.skip(f"{t} line" if isinstance(t, str) else "line without a type")
            else:
                yield from self._response_item(p, ref)
        if self.turn is not None:
            yield self._close(self.turn, at_end=True)

    def _close(self, turn: Turn, *, at_end: bool) -> Turn:
        """The open turn, ended as the recording says (module docstring); ``at_end``: the
        file ends inside it (else the next turn starts)."""
        if self.error is not None and turn.failed is None:
            # the model gave nothing after the error: a task_complete after it (the writer
            # ends every task with one) does not make the turn a completed one
            turn.failed = (PROVIDER_ERROR, self.error[0], self.error[1])
        elif self.ended:
            return turn
        elif self.turn_ends:
            why = (
                "the rollout stops before its task_complete event"
                if at_end
                else "the next turn starts before its task_complete event"
            )
            self._stopped_inside(turn, at_end)
            cut_short(turn, why, self.stats)
        elif at_end and self.cut_at_end:
            self._stopped_inside(turn, at_end)
            cut_short(turn, f"{CUT_AT_END}, before its task_complete event", self.stats)
        return turn

    @staticmethod
    def _stopped_inside(turn: Turn, at_end: bool) -> None:
        """The file stops inside ``turn``: its last reply, which no record gave a stop
        reason (a rollout writes none), may have gone on, so it is a reply cut short
        (spec/importers.md section 1). A turn the next one ends was not cut."""
        replies = turn.replies
        if at_end and replies and replies[-1].stop_reason is None:
            replies[-1].cut = True

    def _new_turn(self, turn: Turn | None) -> None:
        self.turn, self.reply, self.owners, self.ended = turn, None, {}, False
        self.error = None

    def _place(self, extra: Extra) -> Iterator[Extra]:
        if self.turn is None:
            yield extra
        else:
            self.turn.items.append(extra)

    def _model_block(self, block: dict[str, Any], ref: Ref) -> Reply:
        if self.turn is None:
            self.stats.notes.append(
                f"line {ref.line}: model output with no user message before "
                "it starts a turn without user input"
            )
            self.turn = Turn(None, ref)
        self.error = None  # the model went on after an error
        if self.reply is None:
            self.reply = Reply([], ref)
            self.turn.items.append(self.reply)
        self.reply.blocks.append(block)
        return self.reply

    def _event(self, p: dict[str, Any], ref: Ref) -> Iterator[Turn | Extra]:
        pt = p.get("type")
        turn = self.turn
        if pt == "token_count":
            self._token_count(p.get("info"))
        elif pt == "turn_aborted":
            if turn is None:
                self.stats.skip("turn_aborted outside a turn")
                return
            reason = p.get("reason")
            why = f"aborted: {reason}" if isinstance(reason, str) else "aborted"
            turn.failed = ("interrupted", why, ref)
            yield turn
            self._new_turn(None)
        elif pt == "task_complete" and turn is not None:
            self.ended = True  # the turn's own end: a damaged record after it is not in it
            self.stats.skip(f"event_msg {pt!r}")
        elif pt in ("error", "stream_error"):
            data = {"message": text_of(p.get("message"))}
            if pt == "error" and turn is not None:
                self.error = (data["message"], ref)
            yield from self._place(Extra("x_codex.error", data, ref, "error"))
        else:
            self.stats.skip(f"event_msg {pt!r}")

    def _token_count(self, info: Any) -> None:
        """Usage of the reply before: ``last_token_usage``, else the growth of
        ``total_token_usage`` since the previous count (a repeated count changes nothing)."""
        info = info if isinstance(info, dict) else {}
        last, total = info.get("last_token_usage"), info.get("total_token_usage")
        if not isinstance(last, dict) and isinstance(total, dict):
            last = usage_delta(total, self.total)
            if not any(last.values()):
                last = None
        if isinstance(total, dict):
            self.total = total
        turn = self.turn
        if turn is not None and turn.replies and isinstance(last, dict):
            turn.replies[-1].usage = last
        self.reply = None

    def _response_item(self, p: dict[str, Any], ref: Ref) -> Iterable[Turn | Extra]:
        """The items one response item ends (a message's; the others add to the open turn
        and end none: an empty tuple, no generator made a line)."""
        pt = p.get("type")
        if pt == "message":
            return self._message(p, ref)
        if pt == "reasoning":
            self._model_block({"type": "thinking", "thinking": reasoning_text(p)}, ref)
        elif pt in (*_CALLS, "local_shell_call"):
            self._call(p, ref)
        elif pt in _OUTPUTS:
            owner = self.owners.get(p["call_id"])
            self.reply = None
            if owner is None:
                self.stats.skip("tool output without its call in the turn")
                self.stats.warn(
                    ref.line or 0,
                    "import_repaired",
                    "unmatched_result",
                    f"{pt} with call id {p['call_id']!r} answers no call of the turn; dropped",
                )
                return ()
            content, is_error = rollout_output(p.get("output"))
            owner.answer(p["call_id"], Result(content, is_error, ref))  # repeated ids: in order
        elif pt == "web_search_call":
            block = {"type": "web_search_call"}
            if isinstance(p.get("action"), dict):
                block["action"] = p["action"]
            self._model_block(block, ref)
        else:
            self.stats.skip(f"response_item {pt!r}")
        return ()

    def _message(self, p: dict[str, Any], ref: Ref) -> Iterator[Turn | Extra]:
        role = p.get("role")
        content = message_content(p.get("content"))
        if role == "assistant":
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
            for b in blocks:
                self._model_block(b, ref)
            return
        text = (
            content
            if isinstance(content, str)
            else "".join(b.get("text", "") for b in content if b.get("type") == "text")
        )
        if role != "user" or text.lstrip().startswith(CONTEXT_PREFIXES):
            data = {"role": text_of(role), "content": content}
            yield from self._place(Extra("x_codex.context", data, ref, "context"))
            return
        if self.turn is not None:
            yield self._close(self.turn, at_end=False)
        self._new_turn(Turn(content, ref))

    def _call(self, p: dict[str, Any], ref: Ref) -> None:
        pt = p.get("type")
        call_id = p.get("call_id") or p.get("id")
        if not isinstance(call_id, str) or not call_id:
            self.stats.skip(f"{pt} without a call_id")
            return
        notes: list[Note] = []
        inp, name = call_input(p, notes)
        for n in notes:
            assert ref.line is not None
            self.stats.warn(ref.line, n.code, n.reason, f"arguments of {call_id}: {n.message}")
        block = {"type": "tool_use", "id": call_id, "name": name, "input": inp}
        if self.reply is not None and block in self.reply.blocks:
            self.stats.skip(f"{pt} repeating a call of its reply")  # a copy: written once
            return
        r = self._model_block(block, ref)
        # another call with an id of the reply
        scope_and_report(r, len(r.blocks) - 1, where=str(pt), line=ref.line, stats=self.stats)
        self.owners[call_id] = r
