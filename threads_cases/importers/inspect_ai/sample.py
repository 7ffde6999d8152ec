"""One inspect-ai sample's events -> turns (spec/importers.md 11.2 to 11.4).

* **Model events** (``event: "model"``; older logs keep the events under
  ``transcript.events``) are the replies, in order; a sample with no events is read from
  its ``messages``. Each one's input is its
  ``input`` list or, in newer logs, its ``input_refs`` (``[start, end)`` ranges) into the
  sample's message pool ``events_data.messages``. The first model event's input is the
  conversation so far: its system messages are the agent's system text, each user message
  starts a turn, an assistant message there is a reply of the history (its tool messages
  its results). A later input adds what comes after its last assistant message: a user
  message starts the next turn; a tool message answers a call no tool event answered.
* **Tool events** answer the call of their ``id`` in the latest reply that made it (never by
  position; calls of one reply sharing the id by occurrence, :mod:`..callids`); one whose
  id no reply made is kept as ``x_inspect.tool``.
* **Sandbox events** (exec, read_file, write_file) are the work of the tool call they run in,
  whose recorded result is the stub: kept as ``x_inspect.sandbox {action, cmd?, file?,
  result?, output?}`` in the turn.
* Events inside a scoring span (``span_begin`` of type ``scorer`` / ``scorers``) are the
  scorer's, not the agent's: dropped (counted); so are the other event types. A model event
  inside a tool call's span (type ``tool``: an agent run as a tool, whose answer is the
  tool's result) is the sub-agent's, dropped (counted) too.
* **Errors.** A model event with an ``error`` is no reply: ``x_inspect.model_error
  {model, message}``, and the turn fails ``provider_error`` (a cancel, ``Cancelled by ...``,
  fails it ``interrupted``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..callids import DUPLICATE_CALL_ID, duplicate_message, scope_call_ids
from ..common import Extra, Ref, Reply, Result, Stats, Turn, json_object
from ..isotime import event_ms
from ..lenient import Note
from .messages import Contents

STOP_REASONS = {"stop": "end_turn", "max_tokens": "max_tokens", "model_length": "max_tokens"}
SCORING_SPANS = frozenset({"scorer", "scorers"})
PROVIDER_ERROR = "provider_error"


def _joined(a: Any, b: Any) -> Any:
    """Two user messages with no reply between them, as one input: strings joined by a blank
    line, else their blocks in order."""
    if isinstance(a, str) and isinstance(b, str):
        return f"{a}\n\n{b}"

    def blocks(c: Any) -> list[Any]:
        return [{"type": "text", "text": c}] if isinstance(c, str) else list(c)

    return blocks(a) + blocks(b)


def _expand(refs: Any, pool: list[Any]) -> list[Any] | None:
    """The pool messages ``refs`` name, or None when a range is malformed or out of the pool."""
    out: list[Any] = []
    if not isinstance(refs, list):
        return None
    for r in refs:
        if not (isinstance(r, list) and len(r) == 2 and all(type(x) is int for x in r)):
            return None
        start, end = r
        if not 0 <= start <= end <= len(pool):
            return None
        out.extend(pool[start:end])
    return out


class SampleMapper:
    """Builds the turns of one sample (module docstring); ``warn(k, reason, message)``
    reports a damaged event ``k``."""

    def __init__(
        self, sample: dict[str, Any], where: str, stats: Stats, warn: Any, file: str = ""
    ) -> None:
        self.file = file
        self.sample = sample
        self.where = where
        self.stats = stats
        self.warn = warn
        transcript = json_object(sample.get("transcript"))  # older logs: events and content here
        self.c = Contents(sample.get("attachments"), transcript.get("content"))
        data = sample.get("events_data")
        pool = data.get("messages") if isinstance(data, dict) else sample.get("message_pool")
        self.pool: list[Any] = pool if isinstance(pool, list) else []
        self.turn: Turn | None = None
        self.owners: dict[str, Reply] = {}
        self.started = False
        self.scoring: set[str] = set()
        self.in_tool: set[str] = set()

    # ------------------------------------------------------------------ inputs
    def input_of(self, k: int, ev: dict[str, Any]) -> list[Any]:
        if "input_refs" in ev and ev["input_refs"] is not None and not ev.get("input"):
            got = _expand(ev["input_refs"], self.pool)
            if got is None:
                self.warn(k, "invalid_line", "input_refs name messages the pool does not hold")
                return []
            return got
        inp = ev.get("input")
        return inp if isinstance(inp, list) else []

    def _message(self, m: Any, ref: Ref, notes: list[Note]) -> Iterator[Turn]:
        if not isinstance(m, dict):
            return
        role = m.get("role")
        if role == "user":
            content = self.c.content(m.get("content"))
            if self.turn is not None and not self.turn.items and self.turn.content is not None:
                self.turn.content = _joined(self.turn.content, content)  # one input, two parts
                return
            if self.turn is not None:
                yield self.turn
            self.turn = Turn(content, ref)
        elif role == "assistant":
            blocks = self.c.blocks(m.get("content")) + self.c.calls(m, ref.base, notes)
            if blocks:
                self._reply(Reply(blocks, ref))
        elif role == "tool":
            cid = m.get("tool_call_id")
            owner = self.owners.get(cid) if isinstance(cid, str) else None
            if owner is not None:  # unless a tool event answered it: the first result wins
                content, is_error = self.c.result(m.get("content"), m.get("error"))
                owner.answer(str(cid), Result(content, is_error, ref), replace=False)

    def _reply(self, reply: Reply) -> None:
        if self.turn is None:
            self.turn = Turn(None, reply.ref)
        self.turn.items.append(reply)
        for cid, ids in scope_call_ids(reply):  # calls sharing an id: answered in order
            k = (reply.ref.line or 1) - 1
            self.warn(k, DUPLICATE_CALL_ID, duplicate_message(cid, ids), code="import_repaired")
        for b in reply.tool_uses():
            self.owners[b["id"]] = reply

    # ------------------------------------------------------------------ events
    def model(self, k: int, ev: dict[str, Any], ref: Ref) -> Iterator[Turn]:
        inp = self.input_of(k, ev)
        if not inp and not self.started:  # not rebuilt: the sample's own input is the task
            task = self.sample.get("input")
            inp = task if isinstance(task, list) else [{"role": "user", "content": task}]
        if self.started:
            last = next(
                (
                    i
                    for i in range(len(inp) - 1, -1, -1)
                    if isinstance(inp[i], dict) and inp[i].get("role") == "assistant"
                ),
                -1,
            )
            inp = inp[last + 1 :]
        self.started = True
        notes: list[Note] = []
        for j, m in enumerate(inp):
            yield from self._message(m, Ref(f"{ref.base}m{j}", ref.ts, ref.line, ref.kind), notes)
        output = json_object(ev.get("output"))
        error = ev.get("error") or output.get("error")
        if isinstance(error, str) and error:
            yield from self._error(ev, error, ref)
            return
        choices = output.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices else None
        msg = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(msg, dict):
            if ev.get("pending"):
                return  # the call had not answered when the log was written
            self.warn(k, "invalid_line", "a model event without output.choices[0].message")
            return
        blocks = self.c.blocks(msg.get("content")) + self.c.calls(msg, ref.base, notes)
        for n in notes:
            self.warn(k, n.reason, n.message, code=n.code)
        sr = choice.get("stop_reason") if isinstance(choice, dict) else None
        usage = json_object(output.get("usage"))
        reply = Reply(blocks, ref, stop_reason=STOP_REASONS.get(str(sr)), usage=usage)
        if not blocks:
            reply.blocks = [{"type": "text", "text": ""}]
        self._reply(reply)

    def _error(self, ev: dict[str, Any], error: str, ref: Ref) -> Iterator[Turn]:
        data = {"model": str(ev.get("model") or ""), "message": error}
        extra = Extra("x_inspect.model_error", data, ref, "error")
        if self.turn is None:
            self.turn = Turn(None, ref)
        self.turn.items.append(extra)
        code = "interrupted" if error.startswith("Cancelled by") else PROVIDER_ERROR
        self.turn.failed = (code, error, ref)
        yield self.turn
        self.turn = None

    def tool(self, ev: dict[str, Any], ref: Ref) -> None:
        cid = ev.get("id")
        owner = self.owners.get(cid) if isinstance(cid, str) else None
        if ev.get("pending"):
            return  # no result yet
        content, is_error = self.c.result(ev.get("result"), ev.get("error"))
        res = Result(content, is_error or ev.get("failed") is True, ref)
        if owner is not None and owner.answer(str(cid), res, replace=False):  # by occurrence
            return
        data = {"id": str(cid), "function": str(ev.get("function") or ""), "result": content}
        self._extra(Extra("x_inspect.tool", data, ref, "tool"))

    def sandbox(self, ev: dict[str, Any], ref: Ref) -> None:
        data: dict[str, Any] = {"action": str(ev.get("action") or "")}
        for key in ("cmd", "file", "output"):
            if isinstance(ev.get(key), str):
                data[key] = self.c.text(ev[key])
        if type(ev.get("result")) is int:
            data["result"] = ev["result"]
        self._extra(Extra("x_inspect.sandbox", data, ref, "sandbox"))

    def _extra(self, extra: Extra) -> None:
        if self.turn is None:
            self.turn = Turn(None, extra.ref)
        self.turn.items.append(extra)

    def in_scoring(self, ev: dict[str, Any]) -> bool:
        """Whether ``ev`` is the scorer's (spans are registered as they begin), or a model
        event of a sub-agent inside a tool call."""
        if ev.get("event") == "span_begin":
            parent = ev.get("parent_id")
            if ev.get("type") in SCORING_SPANS or parent in self.scoring:
                self.scoring.add(str(ev.get("id")))
            if ev.get("type") == "tool" or parent in self.in_tool:
                self.in_tool.add(str(ev.get("id")))
        span = ev.get("span_id")
        return span in self.scoring or (ev.get("event") == "model" and span in self.in_tool)

    def from_messages(self, messages: Any) -> Iterator[Turn]:
        """A sample that records no events: its ``messages`` are the conversation (as a first
        model input with its replies, 11.2)."""
        notes: list[Note] = []
        for j, m in enumerate(messages if isinstance(messages, list) else []):
            yield from self._message(m, Ref(f"m{j}", None, j + 1, "message"), notes)
        for n in notes:
            self.warn(0, n.reason, n.message, code=n.code)

    def items(self, events: list[Any]) -> Iterator[Turn]:
        for k, ev in enumerate(events):
            if not isinstance(ev, dict) or not isinstance(ev.get("event"), str):
                self.warn(k, "invalid_line", "an event must be an object with an `event` type")
                continue
            t = ev["event"]
            ms = event_ms(ev.get("timestamp"), file=self.file, pointer=f"/events/{k}/timestamp")
            ref = Ref(f"e{k}", ms, k + 1, t)
            if self.in_scoring(ev):
                self.stats.skip("scoring or sub-agent event")
            elif t == "model":
                yield from self.model(k, ev, ref)
            elif t == "tool":
                self.tool(ev, ref)
            elif t == "sandbox":
                self.sandbox(ev, ref)
            else:
                self.stats.skip(f"{t} event")
