"""OpenHands V1 events (the software-agent SDK's) as thread items (spec/importers.md 12.2).

A V1 event is an object with a ``kind`` (its class), ``id``, ``timestamp`` and ``source``:

* ``MessageEvent`` (``llm_message {role, content}``): from the user it starts a turn, from
  the agent it is a reply of its text;
* ``ActionEvent`` (``thought``, ``action``, ``tool_name``, ``tool_call_id``, ``tool_call
  {id, name, arguments}``, ``llm_response_id``): a call; the actions of one LLM response (the
  same ``llm_response_id``, one after the other) are one reply: the first's ``thought``, then
  one tool_use per action, its input the ``tool_call.arguments`` decoded exactly once (else
  the ``action`` without its ``kind``); a ``finish`` call is the answer: a reply of its
  thought and ``action.message``, and ``x_openhands.finish {message}``;
* ``ObservationEvent`` (``observation {content, is_error}``, ``action_id``) and
  ``UserRejectObservation`` (``rejection_reason``, ``action_id``) answer the action their
  ``action_id`` names, else the latest unanswered call of their ``tool_call_id``, never by
  position; ``AgentErrorEvent`` (``error``, ``tool_call_id``) answers the latest unanswered
  call of its ``tool_call_id`` as an error result, else is ``x_openhands.error``;
* ``ConversationErrorEvent`` (``code``, ``detail``) fails the turn, ``provider_error`` when
  it names a model API error (or its ``classification.kind`` is ``auth``, ``quota``,
  ``rate_limit`` or ``transient``), else ``agent_error`` (and ``x_openhands.error {content,
  code}``); ``InterruptEvent`` fails it ``interrupted``; ``PauseEvent`` is ``x_openhands.pause``;
* other kinds (``SystemPromptEvent``, ``ConversationStateUpdateEvent``, condensations,
  tokens, logs...) are dropped, counted.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Protocol

from .arguments import decode_arguments, js_numbers
from .callids import scope_and_report
from .common import Extra, Ref, Reply, Result, Stats, Turn, content_text, json_object
from .isotime import event_ms
from .lenient import Note

#: a model API error in an error's text (litellm's and the SDK's exception names)
PROVIDER = re.compile(
    r"litellm|APIError|APIConnectionError|RateLimitError|ServiceUnavailable|InternalServerError"
    r"|Timeout|BadRequestError|AuthenticationError|ContextWindowExceeded|LLM",
)
#: the SDK's error classifications that name the model provider's side
_PROVIDER_KINDS = frozenset({"auth", "quota", "rate_limit", "transient"})
_OBSERVATIONS = frozenset({"ObservationEvent", "UserRejectObservation", "AgentErrorEvent"})


class V1Source(Protocol):
    """What the mapping needs of :class:`.openhands.OpenHandsSource`."""

    file: str
    stats: Stats

    def skip_event(self, k: int, why: str) -> None: ...


def is_v1(events: list[Any]) -> bool:
    """Whether ``events`` are V1 events: one has a string ``kind`` and none a string
    ``action`` or ``observation`` (the older events' shape)."""
    old = any(
        isinstance(e, dict)
        and (isinstance(e.get("action"), str) or isinstance(e.get("observation"), str))
        for e in events
    )
    return not old and any(isinstance(e, dict) and isinstance(e.get("kind"), str) for e in events)


def v1_header(events: list[Any]) -> tuple[str, str, list[str]]:
    """``(system text, model, tool names)``: the first ``SystemPromptEvent``'s prompt, the
    agent LLM's ``model_name`` in the first ``stats`` state update, the tools called."""
    system, model, tools = "", "", dict[str, None]()
    for ev in events:
        kind = ev.get("kind") if isinstance(ev, dict) else None
        if kind == "SystemPromptEvent" and not system:
            system = content_text([ev.get("system_prompt")])
        elif kind == "ConversationStateUpdateEvent" and not model and ev.get("key") == "stats":
            usage = json_object(json_object(ev.get("value")).get("usage_to_metrics"))
            name = json_object(usage.get("default")).get("model_name")
            model = name if isinstance(name, str) else ""
        elif kind == "ActionEvent" and ev.get("tool_name") not in (None, "", "finish"):
            tools.setdefault(str(ev["tool_name"]), None)
    return system, model, list(tools)


class V1Mapper:
    """The turn being built and the calls made so far (by action id, by tool call id)."""

    def __init__(self, src: V1Source) -> None:
        self.src = src
        self.turn: Turn | None = None
        self.reply: Reply | None = None
        self.by_action: dict[str, tuple[Reply, str]] = {}
        self.by_call: dict[str, list[tuple[Reply, str]]] = {}
        self.finishes: set[str] = set()

    def items(self, events: list[Any]) -> Iterator[Turn | Extra]:
        """Map ``events`` in order; the last turn is left open in :attr:`turn`."""
        for k, ev in enumerate(events):
            if not isinstance(ev, dict) or not isinstance(ev.get("kind"), str):
                self.src.skip_event(k, "a V1 event must be an object with a string `kind`")
                continue
            ms = event_ms(ev.get("timestamp"), file=self.src.file, pointer=f"/{k}/timestamp")
            ref = Ref(f"ev{ev.get('id', k)}", ms, k + 1, "event")
            kind = ev["kind"]
            if kind == "MessageEvent":
                yield from self._message(ev, ref)
            elif kind == "ActionEvent":
                self._action(k, ev, ref)
            elif kind in _OBSERVATIONS:
                self._observation(k, ev, ref)
            elif kind in ("ConversationErrorEvent", "InterruptEvent", "PauseEvent"):
                self._control(ev, ref)
            else:
                self.src.stats.skip(f"{kind} event")

    def _add(self, reply: Reply) -> Reply:
        if self.turn is None:
            self.turn = Turn(None, reply.ref)
        self.turn.items.append(reply)
        self.reply = reply
        return reply

    def _message(self, ev: dict[str, Any], ref: Ref) -> Iterator[Turn]:
        text = content_text(json_object(ev.get("llm_message")).get("content"))
        if ev.get("source") == "user":
            if self.turn is not None:
                yield self.turn
            self.turn, self.reply = Turn(text, ref), None
        elif ev.get("source") == "agent":
            self._add(Reply([{"type": "text", "text": text}], ref, stop_reason="end_turn"))
        else:
            self.src.stats.skip(f"{ev.get('source')} message")

    def _action(self, k: int, ev: dict[str, Any], ref: Ref) -> None:
        cid, name, rid = ev.get("tool_call_id"), ev.get("tool_name"), ev.get("llm_response_id")
        if not (isinstance(cid, str) and cid and isinstance(name, str) and name):
            self.src.skip_event(k, "an ActionEvent needs a string `tool_call_id` and `tool_name`")
            return
        thought = content_text(ev.get("thought"))
        action = json_object(ev.get("action"))
        if name == "finish":
            answer = "\n\n".join(t for t in (thought, content_text(action.get("message"))) if t)
            self._add(Reply([{"type": "text", "text": answer}], ref, stop_reason="end_turn"))
            assert self.turn is not None
            self.turn.items.append(Extra("x_openhands.finish", {"message": answer}, ref, "finish"))
            self.finishes.add(str(ev.get("id")))
            return
        reply = self.reply
        if reply is None or rid is None or reply.msg_id != rid or reply is not self._last():
            blocks = [{"type": "text", "text": thought}] if thought else []
            reply = self._add(Reply(blocks, ref, msg_id=rid if isinstance(rid, str) else None))
        notes: list[Note] = []
        call = json_object(ev.get("tool_call"))
        if "arguments" in call:
            inp = decode_arguments(call["arguments"], notes)
        else:
            inp = js_numbers({a: v for a, v in action.items() if a != "kind" and v is not None}, [])
        for n in notes:
            self.src.stats.warn(
                k + 1, n.code, n.reason, f"event {k + 1} (/{k}) call {cid}: {n.message}"
            )
        reply.blocks.append({"type": "tool_use", "id": cid, "name": name, "input": inp})
        # an id the reply already holds
        where = f"event {k + 1} (/{k})"
        scope_and_report(
            reply, len(reply.blocks) - 1, where=where, line=k + 1, stats=self.src.stats
        )
        own = reply.blocks[-1]["id"]  # the id the thread writes this call with
        self.by_action[str(ev.get("id"))] = (reply, own)
        self.by_call.setdefault(cid, []).append((reply, own))

    def _last(self) -> Reply | Extra | None:
        return self.turn.items[-1] if self.turn is not None and self.turn.items else None

    def _owner(self, ev: dict[str, Any]) -> tuple[Reply, str] | None:
        """The call ``ev`` answers: by ``action_id``, else the latest unanswered call of its
        ``tool_call_id``."""
        owner = self.by_action.get(str(ev["action_id"])) if "action_id" in ev else None
        if owner is not None:
            return owner
        cid = ev.get("tool_call_id")
        calls = self.by_call.get(cid, []) if isinstance(cid, str) else []
        for reply, c in reversed(calls):
            if c not in reply.results:
                # calls of that reply sharing the id: the first not answered (by occurrence)
                return next((r, c2) for r, c2 in calls if r is reply and c2 not in r.results)
        return None

    def _observation(self, k: int, ev: dict[str, Any], ref: Ref) -> None:
        kind = ev["kind"]
        if kind == "ObservationEvent":
            obs = json_object(ev.get("observation"))
            content, is_error = content_text(obs.get("content")), obs.get("is_error") is True
        elif kind == "UserRejectObservation":
            reason = ev.get("rejection_reason")
            content = f"Action rejected: {reason if isinstance(reason, str) else ''}"
            is_error = True
        else:
            content, is_error = content_text(ev.get("error")), True
        owner = self._owner(ev)
        if owner is not None and owner[1] not in owner[0].results:
            owner[0].results[owner[1]] = Result(content, is_error, ref)
        elif kind == "AgentErrorEvent" and self.turn is not None:
            self.turn.items.append(Extra("x_openhands.error", {"content": content}, ref, "error"))
        elif str(ev.get("action_id")) in self.finishes:
            self.src.stats.skip("finish observation")
        else:
            self.src.stats.skip(f"{kind} answering no call")

    def _control(self, ev: dict[str, Any], ref: Ref) -> None:
        turn, kind = self.turn, ev["kind"]
        if turn is None or turn.failed is not None:
            self.src.stats.skip(f"{kind} outside a turn")
            return
        if kind == "PauseEvent":
            turn.items.append(Extra("x_openhands.pause", {}, ref, "pause"))
        elif kind == "InterruptEvent":
            turn.failed = ("interrupted", "the user interrupted the agent", ref)
        else:
            code, detail = content_text(ev.get("code")), content_text(ev.get("detail"))
            data = {"content": detail, "code": code}
            turn.items.append(Extra("x_openhands.error", data, ref, "error"))
            kind_of = json_object(ev.get("classification")).get("kind")
            provider = kind_of in _PROVIDER_KINDS or PROVIDER.search(f"{code} {detail}")
            failure = "provider_error" if provider else "agent_error"
            turn.failed = (failure, f"{code}: {detail}" if code else detail, ref)
