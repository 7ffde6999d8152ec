"""OpenHands trajectories (event lists) as threads (spec/importers.md section 12).

The file is a JSON list of events (a saved trajectory, an event-store cache page) or an
object holding one as ``trajectory`` (the trajectory download) or ``history`` (an
evaluation output record). An event is an *action* (``action``, ``args``, ``source``) or an
*observation* (``observation``, ``content``, ``extras``, ``cause``: the id of the action it
answers); function-calling agents add ``tool_call_metadata {function_name, tool_call_id,
model_response, total_calls_in_response}``.

* a user ``message`` action starts a turn (its ``args.content``);
* the ``system`` action's ``args.content`` is the agent's system text (its ``tools`` the
  tools);
* agent actions with ``tool_call_metadata`` are calls; the actions of one model response
  (the same ``model_response.id``) are one reply: the response message's text, then one
  tool_use per action (its id the ``tool_call_id``, its input the response's arguments for
  that id, decoded exactly once, else the action's ``args``); usage from the response;
* an agent action without it (older agents) is a reply of its ``thought`` and one call named
  by the action with the synthesised id ``event-<id>``; an agent ``message`` action is a reply
  of its text; ``finish`` is the answer: a text block of its ``final_thought`` (or message)
  and ``x_openhands.finish``; ``recall``, ``condensation``, ``change_agent_state`` and other
  bookkeeping are dropped (counted);
* an observation answers the action its ``cause`` names, else the latest call of its
  ``tool_call_id``, never by position; an ``error`` observation, or a command whose
  ``extras.metadata.exit_code`` is not 0, is an error result; other observations
  (``agent_state_changed``, ``recall`` with no cause...) are dropped, except an ``error``
  observation answering nothing (``x_openhands.error``);
* ``agent_state_changed`` to ``error`` fails the turn: ``provider_error`` when its reason
  names a model API error (litellm's ``APIError``, ``RateLimitError``...), else
  ``agent_error``; to ``stopped`` fails it ``interrupted``.

A file cut short is closed where it stops (:mod:`.cutjson`, the event it stops inside
dropped) with an ``import_repaired`` warning (reason ``cut_record``) and its open turn fails
``interrupted`` with a note; ``strict`` refuses it. Events with a ``kind`` and none with a
string ``action`` / ``observation`` are V1 software-agent SDK events, mapped by
:mod:`.openhands_v1`; a folder (the event store, one file per event) is read by
:mod:`.openhands_store`. A list none of whose events has ``action``, ``observation`` or
``kind`` is refused. An event that is not an object with ``action`` or ``observation``
(V1: ``kind``) is skipped with ``import_skipped`` (``invalid_line``, its "line" the event's
index from 1), refused with ``strict``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..core.errors import CaseError
from ..core.files import MAX_LOG_BYTES, read_regular
from .arguments import decode_arguments, js_numbers
from .callids import scope_and_report
from .common import (
    Extra,
    Ref,
    Reply,
    Result,
    Stats,
    Turn,
    content_text,
    cut_short,
    imported_agent,
    json_object,
    stats_for,
)
from .cutjson import CUT_HINT, NotJson, read_document
from .isotime import event_ms, iso_ms
from .lenient import Note
from .openhands_store import read_folder
from .openhands_v1 import PROVIDER, V1Mapper, is_v1, v1_header

OPENHANDS_HINT = (
    "pass an OpenHands trajectory: a JSON list of events (actions and observations), or an "
    'object with a "trajectory" list; `threads-cases import auto FILE` names the formats it tries'
)
BOOKKEEPING = frozenset(
    {"recall", "condensation", "condensation_request", "change_agent_state", "null", "system"}
)


def _response(ev: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(tool_call_metadata, its model_response)``, empty objects when absent."""
    tcm = ev.get("tool_call_metadata")
    tcm = tcm if isinstance(tcm, dict) else {}
    resp = tcm.get("model_response")
    return tcm, resp if isinstance(resp, dict) else {}


def _message(resp: dict[str, Any]) -> dict[str, Any]:
    choices = resp.get("choices")
    msg = (
        choices[0].get("message")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict)
        else None
    )
    return msg if isinstance(msg, dict) else {}


def _usage(resp: dict[str, Any]) -> dict[str, Any]:
    u = resp.get("usage")
    if not isinstance(u, dict):
        return {}
    out = {
        "input_tokens": u.get("prompt_tokens", 0),
        "output_tokens": u.get("completion_tokens", 0),
    }
    return {k: v for k, v in out.items() if type(v) is int}


class OpenHandsSource:
    """One trajectory, read and ready to map (:meth:`items`)."""

    format = "openhands"

    def __init__(
        self, path: str | os.PathLike[str], *, strict: bool = False, stats: Stats | None = None
    ) -> None:
        self.path = Path(path)
        self.file = str(path)
        self.strict = strict
        self.stats = stats_for(stats, strict=strict, file=str(path))
        self.cut = False
        self.names: list[str] = []
        self.base_model = ""
        self.events = self._read()
        self.v1 = is_v1(self.events)
        self.system, self.model = "", ""
        tools: dict[str, None] = {}
        if self.v1:
            self.system, self.model, self.tools = v1_header(self.events)
            self.model = self.base_model or self.model
            return
        for ev in self.events:
            if not isinstance(ev, dict):
                continue
            args = json_object(ev.get("args"))
            if ev.get("action") == "system" and not self.system:
                self.system = content_text(args.get("content"))
                for t in args.get("tools") or []:
                    fn = t.get("function") if isinstance(t, dict) else None
                    if isinstance(fn, dict) and isinstance(fn.get("name"), str) and fn["name"]:
                        tools.setdefault(fn["name"], None)
            tcm, resp = _response(ev)
            if not self.model and isinstance(resp.get("model"), str):
                self.model = resp["model"]
            name = tcm.get("function_name")
            if "action" in ev and isinstance(name, str) and name and ev["action"] != "finish":
                tools.setdefault(name, None)
            elif ev.get("source") == "agent" and not tcm and "action" in ev and self._is_call(ev):
                tools.setdefault(str(ev["action"]), None)
        self.tools = list(tools)

    def _refuse(self, message: str, pointer: str | None = None) -> CaseError:
        return CaseError(
            "import_invalid", message, file=self.file, pointer=pointer, hint=OPENHANDS_HINT
        )

    def _read(self) -> list[Any]:
        if self.path.is_dir():
            folder = read_folder(
                self.path, strict=self.strict, stats=self.stats, refuse=self._refuse
            )
            self.names, self.base_model, self.cut = folder.names, folder.model, folder.cut
            return self._checked(folder.events)
        data = read_regular(self.path, code="io_error", limit=MAX_LOG_BYTES)
        open_path: list[str | int] | None = None
        try:
            read = read_document(data, "the trajectory")
        except NotJson as exc:
            raise CaseError(
                "import_invalid", exc.message, file=self.file, line=exc.line, hint=OPENHANDS_HINT
            ) from None
        doc = read.value
        if read.cut is not None:
            open_path = read.cut.open_path
            self.cut = True
            self.stats.warn(
                read.line,
                "import_repaired",
                "cut_record",
                f"{read.message}; the event it stops inside is dropped",
                hint=CUT_HINT,
            )
        if isinstance(doc, dict):
            key = "trajectory" if isinstance(doc.get("trajectory"), list) else "history"
            doc = doc.get(key)
            open_path = open_path[1:] if open_path and open_path[0] == key else None
        if not isinstance(doc, list):
            raise self._refuse("not an OpenHands trajectory: no list of events")
        if open_path and len(open_path) > 1 and isinstance(open_path[0], int):
            doc = doc[: open_path[0]]  # the event the file stops inside is partial
        return self._checked(doc)

    def _checked(self, doc: list[Any]) -> list[Any]:
        """``doc`` when some event is an older event (``action`` / ``observation``) or a V1
        one (``kind``); else the refusal."""
        if doc and not any(
            isinstance(e, dict) and ("action" in e or "observation" in e or "kind" in e)
            for e in doc
        ):
            raise self._refuse(
                "not an OpenHands trajectory: no event has `action` or `observation` (older "
                "events) or `kind` (V1 software-agent SDK events)"
            )
        return doc

    @staticmethod
    def _is_call(ev: dict[str, Any]) -> bool:
        return ev.get("action") not in BOOKKEEPING | {"message", "finish"}

    # ------------------------------------------------------------------ header
    @property
    def thread_id(self) -> str:
        path = self.path.resolve() if self.path.is_dir() else self.path
        if path.is_dir() and path.name == "events":
            path = path.parent
        return path.name.removesuffix(".json") or "trajectory"

    @property
    def agent(self) -> dict[str, Any]:
        agent = imported_agent("openhands", self.model, self.tools)
        agent["system"] = self.system
        return agent

    @property
    def metadata(self) -> dict[str, Any]:
        return {"source": "openhands", "session_id": self.thread_id}

    @property
    def start_ref(self) -> Ref:
        first = next((e for e in self.events if isinstance(e, dict)), {})
        return Ref("session", iso_ms(first.get("timestamp")), 1, "session")

    # ------------------------------------------------------------------ mapping
    def skip_event(self, k: int, why: str) -> None:
        """Skip event ``k`` (``import_skipped``, ``invalid_line``), or refuse it (strict);
        the message names its file in the folder form."""
        where = f"{self.names[k]}: " if k < len(self.names) else ""
        message = f"{where}event {k + 1} (/{k}): {why}"
        if self.strict:
            raise self._refuse(message, f"/{k}")
        self.stats.warn(k + 1, "import_skipped", "invalid_line", message)

    def items(self) -> Iterator[Turn | Extra]:
        if self.v1:
            v1 = V1Mapper(self)
            yield from v1.items(self.events)
            self._close(v1.turn)
            if v1.turn is not None:
                yield v1.turn
            return
        m = _Mapper(self)
        for k, ev in enumerate(self.events):
            if not isinstance(ev, dict) or not ("action" in ev or "observation" in ev):
                self.skip_event(k, "an event must be an object with `action` or `observation`")
                continue
            ms = event_ms(ev.get("timestamp"), file=self.file, pointer=f"/{k}/timestamp")
            ref = Ref(f"ev{ev.get('id', k)}", ms, k + 1, "event")
            if "action" in ev:
                yield from m.action(k, ev, ref)
            else:
                m.observation(ev, ref)
        self._close(m.turn)
        if m.turn is not None:
            yield m.turn

    def _close(self, turn: Turn | None) -> None:
        """The last turn of a file cut short is interrupted (section 12)."""
        if turn is not None and self.cut:
            cut_short(turn, "the trajectory stops in the middle of an event", self.stats)


class _Mapper:
    """The turn being built and the calls made so far (by action id and by call id)."""

    def __init__(self, src: OpenHandsSource) -> None:
        self.src = src
        self.turn: Turn | None = None
        self.reply: Reply | None = None
        self.by_event: dict[Any, tuple[Reply, str]] = {}
        self.by_call: dict[str, Reply] = {}

    def _add(self, reply: Reply) -> Reply:
        if self.turn is None:
            self.turn = Turn(None, reply.ref)
        self.turn.items.append(reply)
        self.reply = reply
        return reply

    def action(self, k: int, ev: dict[str, Any], ref: Ref) -> Iterator[Turn]:
        action, source = ev.get("action"), ev.get("source")
        args = json_object(ev.get("args"))
        if source == "user" and action == "message":
            if self.turn is not None:
                yield self.turn
            self.turn, self.reply = (
                Turn(content_text(args.get("content")) or content_text(ev.get("message")), ref),
                None,
            )
            return
        if source != "agent" or action in BOOKKEEPING:
            self.src.stats.skip(f"{action} action")
            return
        tcm, resp = _response(ev)
        if action in ("message", "finish") or not tcm:
            yield from self._plain(ev, args, ref)
            return
        rid = resp.get("id")
        reply = self.reply
        if reply is None or rid is None or reply.msg_id != rid:
            msg = _message(resp)
            text = [{"type": "text", "text": t} for t in [content_text(msg.get("content"))] if t]
            reply = self._add(Reply(text, ref, usage=_usage(resp), msg_id=rid))
        cid = tcm.get("tool_call_id")
        cid = cid if isinstance(cid, str) and cid else f"event-{ev.get('id', k)}"
        name = (
            tcm.get("function_name") if isinstance(tcm.get("function_name"), str) else str(action)
        )
        notes: list[Note] = []
        # the n-th action of a reply naming an id takes the n-th tool call of that id
        held = reply.aliases.get(cid) if reply.aliases else None
        nth = len(held) if held else sum(b["id"] == cid for b in reply.tool_uses())
        inp = self._arguments(resp, cid, notes, nth)
        if inp is None:
            inp = js_numbers({key: v for key, v in args.items() if v is not None}, notes)
        for n in notes:
            self.src.stats.warn(
                k + 1, n.code, n.reason, f"event {k + 1} (/{k}) call {cid}: {n.message}"
            )
        reply.blocks.append({"type": "tool_use", "id": cid, "name": name or "tool", "input": inp})
        # an id the reply already holds
        where = f"event {k + 1} (/{k})"
        scope_and_report(
            reply, len(reply.blocks) - 1, where=where, line=k + 1, stats=self.src.stats
        )
        self.by_event[ev.get("id")] = (reply, reply.blocks[-1]["id"])  # the id it is written with
        self.by_call[cid] = reply

    @staticmethod
    def _arguments(
        resp: dict[str, Any], cid: str, notes: list[Note], nth: int = 0
    ) -> dict[str, Any] | None:
        """The decoded arguments of the ``nth`` (from 0) tool call ``cid`` of the response."""
        for c in _message(resp).get("tool_calls") or []:
            if isinstance(c, dict) and c.get("id") == cid and isinstance(c.get("function"), dict):
                if nth == 0:
                    return decode_arguments(c["function"].get("arguments"), notes)
                nth -= 1
        return None

    def _plain(self, ev: dict[str, Any], args: dict[str, Any], ref: Ref) -> Iterator[Turn]:
        """An agent action that is no function call: a message, the finish, an old action."""
        action = str(ev.get("action"))
        if action == "finish":
            text = content_text(args.get("final_thought")) or content_text(ev.get("message"))
            self._add(Reply([{"type": "text", "text": text}], ref, stop_reason="end_turn"))
            data = {"message": text}
            if isinstance(args.get("task_completed"), str):
                data["task_completed"] = args["task_completed"]
            assert self.turn is not None
            self.turn.items.append(Extra("x_openhands.finish", data, ref, "finish"))
        elif action == "message":
            text = content_text(args.get("content")) or content_text(ev.get("message"))
            self._add(Reply([{"type": "text", "text": text}], ref))
        else:
            thought = content_text(args.get("thought"))
            cid = f"event-{ev.get('id')}"
            inp = {key: v for key, v in args.items() if v is not None and key != "thought"}
            inp = js_numbers(inp, [])
            blocks = [{"type": "text", "text": thought}] if thought else []
            reply = self._add(
                Reply([*blocks, {"type": "tool_use", "id": cid, "name": action, "input": inp}], ref)
            )
            self.by_event[ev.get("id")] = (reply, cid)
            self.by_call[cid] = reply
        return iter(())

    def observation(self, ev: dict[str, Any], ref: Ref) -> None:
        obs = ev.get("observation")
        extras = json_object(ev.get("extras"))
        tcm, _ = _response(ev)
        cause = ev.get("cause")
        owner = self.by_event.get(cause) if isinstance(cause, (int, str)) else None
        exact = owner is not None  # the action's own call, by its event id
        if owner is None and isinstance(tcm.get("tool_call_id"), str):
            r = self.by_call.get(tcm["tool_call_id"])
            owner = (r, tcm["tool_call_id"]) if r is not None else None
        if owner is not None and (not exact or owner[1] not in owner[0].results):
            meta = json_object(extras.get("metadata"))
            code = meta.get("exit_code")
            is_error = obs == "error" or (type(code) is int and code not in (0, -1))
            res = Result(content_text(ev.get("content")), is_error, ref)
            if exact:
                owner[0].results[owner[1]] = res
                return
            if owner[0].answer(owner[1], res, replace=False):  # repeated ids: by occurrence
                return
        if obs == "agent_state_changed":
            self._state(extras, ref)
        elif obs == "error" and self.turn is not None:
            self.turn.items.append(
                Extra(
                    "x_openhands.error", {"content": content_text(ev.get("content"))}, ref, "error"
                )
            )
        else:
            self.src.stats.skip(f"{obs} observation")

    def _state(self, extras: dict[str, Any], ref: Ref) -> None:
        state, reason = extras.get("agent_state"), content_text(extras.get("reason"))
        turn = self.turn
        if turn is None or turn.failed is not None:
            return
        if state == "error":
            code = "provider_error" if PROVIDER.search(reason) else "agent_error"
            turn.items.append(Extra("x_openhands.error", {"content": reason}, ref, "error"))
            turn.failed = (code, reason or "the agent stopped with an error", ref)
        elif state == "stopped":
            turn.failed = ("interrupted", "the agent was stopped", ref)
