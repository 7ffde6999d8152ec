"""A cassette's model calls -> turns (spec/importers.md 6.4): the conversation the requests
carry and the replies the responses hold.

* **Prefix.** The first request's messages before its last user message are the thread's
  history: turns of their own (each real user message starts one, the replies the history
  holds are its replies, its tool results their stubs). The last user message starts the
  first recorded turn.
* **Replies.** Each model-call response is one reply of the open turn (its usage, its stop
  reason); a streamed one is reassembled first (:mod:`.sse`). Consecutive assistant items
  of a request's history (no user message or tool result between them) are one reply
  (:func:`_joined`).
* **Tool results come from the next request.** A cassette records no tool execution: the
  results a later request sends (its items after its last assistant item; all of them with
  ``previous_response_id``) answer the calls and become the stubs. A call id is scoped to
  its response: a result pairs with the call of that id in the latest response that made
  it, a prefixed id ``<response id>:<call id>`` with that response's call, a result with
  only a tool name (Chat's ``function`` role) with the first call of that name not yet
  answered, never by position. Calls of one response sharing an id are answered by
  occurrence and written with ids of their own (:mod:`..callids`, ``duplicate_call_id``).
* **A new user message** in a later request ends the open turn and starts the next.
* **Structured output.** A reply to a request that forces a tool (``tool_choice`` naming
  it, or requiring a call of any tool: such a conversation can only end on a call) whose
  call no later request answers is the answer, not an external call: the call becomes a
  text block of its input's JSON and ``x_vcr.structured_output {name, input}``.
* **Errors.** A provider error (a status of 400 or more, an error event in a stream) ends
  the turn with ``provider_error`` and ``x_vcr.error {status, message}``, unless the next
  request is the same request again (an SDK retry): then it is the extension event only.
* **Cut short.** A stream that stops before its end ends its turn with ``interrupted`` and
  a note naming the calls dropped while still streaming; unless the first later request
  sending any of them back sends all with their results (:func:`proven_calls`): then the
  reply was rebuilt from them (spec/importers.md 6.3) and the turn goes on.
* A later request that holds no assistant item, no ``previous_response_id`` and no
  ``conversation`` an earlier request named (the server holds that history: its whole
  ``input`` is new) does not continue the conversation: its last user message starts a
  turn, with a warning.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

from ..callids import scope_and_report
from ..common import Extra, Ref, Reply, Result, Stats, Turn
from .apis import ANY_TOOL, Answer, Item, Request

PROVIDER_ERROR = "provider_error"
#: the reasons of a result that answers no call and of a call given no id (importers.md 6.4)
UNMATCHED_RESULT, EMPTY_CALL_ID = "unmatched_result", "empty_call_id"


def _index(ref: Ref) -> int:
    """The interaction (counted from 1) of a reference ``i<index>[m<message>]``."""
    return int(ref.base[1:].partition("m")[0]) + 1


def _joined(items: list[Item]) -> list[tuple[int, Item]]:
    """``(index, item)`` of a request's items, consecutive assistant items (no user message
    or tool result between them) joined into one, their blocks in order: one reply. The
    Responses API gives each output item of a response (a message, its reasoning, each
    ``function_call``) as an input item of its own, and the Messages API reads consecutive
    messages of one role as one turn; a thread's turn cannot hold a reply calling no tool
    followed by another reply (the runtime ends the turn at the first)."""
    out: list[tuple[int, Item]] = []
    for k, it in enumerate(items):
        if it.kind == "assistant" and out and out[-1][1].kind == "assistant":
            first, prev = out[-1]
            out[-1] = (first, Item("assistant", blocks=[*prev.blocks, *it.blocks]))
        else:
            out.append((k, it))
    return out


def calls_text(calls: list[dict[str, Any]]) -> str:
    """``call get_time (call_1)``, ``calls a (c1), b (c2)``: calls named in a message."""
    named = ", ".join(f"{c.get('name') or 'tool'} ({c.get('id')})" for c in calls)
    return f"call{'s' if len(calls) > 1 else ''} {named}"


def proven_calls(
    dropped: list[dict[str, Any]], later: list[Request]
) -> tuple[int, list[dict[str, Any]]] | None:
    """The calls of a stream cut short that were still streaming (``dropped``, by id), as
    the first of the ``later`` requests that sends any of them back gives them (name and
    arguments as the client sent them), when it sends back every one of them, each followed
    by its result: ``(index in later, tool_use blocks in dropped's order)``, else None. The
    client could only send back a call it received whole, with the result of running it."""
    ids = [c.get("id") for c in dropped]
    if not ids or not all(isinstance(i, str) and i for i in ids):
        return None
    wanted = {str(i) for i in ids}
    for j, req in enumerate(later):
        sent: dict[str, dict[str, Any]] = {}
        answered: set[str] = set()
        for item in req.items:
            for b in item.blocks if item.kind == "assistant" else []:
                if b.get("type") == "tool_use" and b.get("id") in wanted:
                    sent.setdefault(b["id"], b)
            answered.update(r[0] for r in item.results if r[0] in sent)
        if sent:
            if answered >= wanted:
                return j, [copy.deepcopy(sent[str(i)]) for i in ids]
            return None
    return None


class Conversation:
    """Builds turns from the requests and answers of a cassette, in order."""

    def __init__(self, stats: Stats) -> None:
        self.stats = stats
        self.turn: Turn | None = None
        self.owners: dict[str, Reply] = {}  # call id -> the latest reply that made it
        self.by_response: dict[str, Reply] = {}
        self.started = False
        #: replies to a request forcing a tool by name: (reply, tool name)
        self.forced: list[tuple[Reply, str]] = []
        #: the Responses ``conversation`` ids the requests so far named
        self.conversations: set[str] = set()

    # ------------------------------------------------------------------ requests
    def request(self, req: Request, ref: Ref, *, retry: bool) -> Iterator[Turn | Extra]:
        """The new items of one request (module docstring); ``retry``: the same request as
        the one before, whose response was an error."""
        if retry:
            return
        items = req.items
        if self.started:
            last = max((k for k, it in enumerate(items) if it.kind == "assistant"), default=-1)
            continued = req.previous is not None or req.conversation in self.conversations
            if last < 0 and not continued:
                users = [k for k, it in enumerate(items) if it.kind == "user"]
                self.stats.warn(
                    ref.line or 0,
                    "import_repaired",
                    "not_continued",
                    f"interaction {int(ref.base[1:]) + 1}: the request does not continue the "
                    "conversation (no assistant message, no previous_response_id); "
                    "its last user message starts a turn",
                )
                items = items[users[-1] :] if users else []
            else:
                items = items[last + 1 :]
        self.started = True
        if req.conversation is not None:
            self.conversations.add(req.conversation)
        for k, it in _joined(items):
            sub = Ref(f"{ref.base}m{k}", ref.ts, ref.line, ref.kind)
            yield from self._item(it, sub)

    def _item(self, it: Item, ref: Ref) -> Iterator[Turn | Extra]:
        if it.kind == "user":
            if self.turn is not None:
                yield self._close(self.turn)
            self.turn = Turn(it.content, ref)
        elif it.kind == "assistant":
            if it.blocks:
                self._reply(Reply(list(it.blocks), ref))
        else:
            for call_id, name, content, is_error in it.results:
                self._result(call_id, name, content, is_error, ref)

    def _result(
        self, call_id: str | None, name: str | None, content: Any, is_error: bool, ref: Ref
    ) -> None:
        owner, key = None, call_id
        if call_id or (call_id == "" and "" in self.owners):  # "": a call given no id
            owner = self.owners.get(call_id)
            if owner is None and ":" in call_id:
                rid, _, cid = call_id.partition(":")
                r = self.by_response.get(rid)
                if r is not None and any(b["id"] == cid for b in r.tool_uses()):
                    owner, key = r, cid
        elif name and self.turn is not None:
            for r in reversed(self.turn.replies):
                free = [b for b in r.tool_uses() if b["name"] == name and b["id"] not in r.results]
                if free:
                    owner, key = r, free[0]["id"]
                    break
        if owner is None or key is None:
            self.stats.skip("tool result without its call in the recording")
            what = f"id {call_id!r}" if call_id is not None else f"tool name {name!r}"
            self.stats.warn(
                ref.line or 0,
                "import_repaired",
                UNMATCHED_RESULT,
                f"interaction {_index(ref)} request: a tool result with {what} answers no "
                "call of an earlier reply; dropped",
            )
            return
        owner.answer(key, Result(content, is_error, ref))  # repeated ids: by occurrence

    # ------------------------------------------------------------------ responses
    def _reply(self, reply: Reply, response_id: str | None = None) -> None:
        if self.turn is None:
            self.stats.notes.append(
                f"line {reply.ref.line}: a reply with no user message before it starts a "
                "turn without user input"
            )
            self.turn = Turn(None, reply.ref)
        self.turn.items.append(reply)
        index, _, message = reply.ref.base[1:].partition("m")  # counted from 1 in words
        where = f"interaction {int(index) + 1} " + (
            f"request, message {int(message) + 1}" if message else "response"
        )
        self._name_empty_ids(reply, where)
        scope_and_report(reply, where=where, line=reply.ref.line, stats=self.stats)
        for b in reply.tool_uses():
            self.owners[b["id"]] = reply
        if reply.aliases is not None and "" in reply.aliases:
            self.owners[""] = reply
        if response_id:
            self.by_response[response_id] = reply

    def _name_empty_ids(self, reply: Reply, where: str) -> None:
        """Give each call of ``reply`` whose id is empty (``""``, which no thread event can
        hold) the id ``<where as a word>-call<k>`` (``k``: its place among the reply's calls,
        from 1), deterministic as SWE-agent's synthesised ids are, with an
        ``import_repaired`` warning (``empty_call_id``). Results with the empty id answer
        those calls by occurrence (:attr:`.common.Reply.aliases`)."""
        uses = [k for k, b in enumerate(reply.blocks) if b.get("type") == "tool_use"]
        held = {reply.blocks[k].get("id") for k in uses}
        if "" not in held:
            return
        stem = where.replace(", message ", "-m").replace(" ", "-")
        ids: list[str] = []
        for n, k in enumerate(uses, 1):
            if reply.blocks[k].get("id") != "":
                continue
            new = f"{stem}-call{n}"
            while new in held:
                new += "x"
            held.add(new)
            ids.append(new)
            reply.blocks[k] = {**reply.blocks[k], "id": new}  # the source's value stays
            self.stats.warn(
                reply.ref.line or 0,
                "import_repaired",
                EMPTY_CALL_ID,
                f"{where}: tool call {n} ({reply.blocks[k].get('name')!r}) has an empty id; "
                f"written as {new!r} (results with an empty id answer it by occurrence)",
            )
        aliases = reply.aliases if reply.aliases is not None else {}
        aliases[""] = ids
        reply.aliases = aliases

    def answer(self, req: Request, ans: Answer, ref: Ref) -> Iterator[Turn | Extra]:
        """The reply (or error) of one response."""
        if ans.error is not None:
            return  # see :meth:`error`
        blocks = ans.blocks
        if ans.cut:
            blocks = [
                b for b in blocks if b.get("type") != "tool_use" or b.get("input") is not None
            ]
            if not blocks:  # nothing of the reply was received: the turn stops before it
                yield from self._cut(ref, ans.dropped)
                return
        reply = Reply(
            blocks,
            ref,
            stop_reason=ans.stop_reason,
            usage=ans.usage,
            msg_id=ans.response_id,
            cut=ans.cut,  # its stop reason: interrupted, never a claim that it ended
        )
        self._reply(reply, ans.response_id)
        if req.forced:
            self.forced.append((reply, req.forced))
        if ans.cut:
            yield from self._cut(ref, ans.dropped)

    def _cut(self, ref: Ref, dropped: list[dict[str, Any]]) -> Iterator[Turn]:
        """The open turn ends ``interrupted`` at a response cut short, with a note naming
        the ``dropped`` calls (still streaming)."""
        turn = self.turn
        if turn is None:
            return
        why = f"the response of interaction {int(ref.base[1:]) + 1} stops before its end"
        if dropped:
            why += f", its {calls_text(dropped)} still streaming (dropped)"
        turn.failed = ("interrupted", why, ref)
        self.stats.notes.append(
            f"line {ref.line}: the turn is recorded as interrupted (turn_failed), "
            f"not completed: {why}"
        )
        yield self._close(turn)
        self.turn = None

    def error(
        self, status: int, message: str, ref: Ref, *, retried: bool
    ) -> Iterator[Turn | Extra]:
        """A provider error: kept as ``x_vcr.error``; unless ``retried``, the open turn ends
        failed with ``provider_error``."""
        data: dict[str, Any] = {"message": message}
        if status:
            data["status"] = status
        extra = Extra("x_vcr.error", data, ref, "error")
        turn = self.turn
        if turn is None:
            yield extra
            return
        turn.items.append(extra)
        if retried:
            return
        turn.failed = (PROVIDER_ERROR, message, ref)
        yield self._close(turn)
        self.turn = None

    # ------------------------------------------------------------------ turn end
    def _close(self, turn: Turn) -> Turn:
        """The turn with its unanswered forced calls made its answer (module docstring)."""
        mine = {id(i) for i in turn.items}
        for reply, name in self.forced:
            if id(reply) not in mine:
                continue
            out: list[dict[str, Any]] = []
            for b in reply.blocks:
                if (
                    b.get("type") == "tool_use"
                    and name in (b["name"], ANY_TOOL)
                    and b["id"] not in reply.results
                ):
                    text = json.dumps(b["input"], ensure_ascii=False, separators=(",", ":"))
                    out.append({"type": "text", "text": text})
                    at = next(k for k, i in enumerate(turn.items) if i is reply) + 1
                    data = {"name": b["name"], "input": b["input"]}
                    turn.items.insert(
                        at, Extra("x_vcr.structured_output", data, reply.ref, "answer")
                    )
                    reply.stop_reason = "end_turn"
                else:
                    out.append(b)
            reply.blocks = out
        self.forced = [(r, n) for r, n in self.forced if id(r) not in mine]
        return turn

    def finish(self, *, cut: bool = False) -> Iterator[Turn]:
        """The turn still open at the end of the cassette. ``cut``: the cassette stops
        after it (cut short), so a forced call no request answers may have been answered
        in what is lost: it stays a call, never taken for the answer."""
        if self.turn is not None:
            if cut:
                self.forced = []
            yield self._close(self.turn)
            self.turn = None
