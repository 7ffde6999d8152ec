"""The :class:`Emitter`: importer items (:mod:`.common`) -> checked canonical events.

The :class:`Emitter` numbers events (``seq`` 0..), derives their ``event_id`` from the
source (``<line uuid or L<line>>.<suffix>``), clamps ``ts`` so it never goes backwards,
computes ``request_sha256`` for every ``model_requested`` from the state at that point
(incrementally: the sealed messages are hashed once, so the cost is linear), and checks every
event with :func:`threads_cases.core.log.check_events` and the
:class:`~threads_cases.core.reducer.Reducer`
before handing it on. The reducer keeps only the unsealed tail of the conversation, so memory
follows the largest turn rather than the whole transcript.

A turn becomes, in order::

    user_message {content}            (unless Turn.content is None)
    turn_started {turn_id}
    per reply:  model_requested {turn_id, model, request_sha256}
                model_responded {turn_id, message: {role: "assistant", content}, stop_reason, usage}
                per tool_use block: tool_called {turn_id, tool_use_id, name, input,
                                                 kind: "external", effect}
                                    then tool_result {..., content, is_error}
    turn_completed {turn_id, stop_reason, usage: {input_tokens, output_tokens}}
      or turn_failed {turn_id, error: {code, message}}

A turn completes when its last reply asks for no tool (the runtime's own rule, so a saved turn
replays the same way); it fails with ``interrupted`` when the user or the end of the
transcript cut it short, or with the code the source gave.

Refusals raise ``CaseError("import_invalid")`` (exit status 1) with the source file, line and
``<line type>: message``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ..core.canonical import MAX_SAFE_INTEGER, canonical_event_line, is_plain
from ..core.errors import CaseError
from ..core.eventcheck import LogChecker
from ..core.reducer import Reducer
from ..core.schemas import compiled_event_validators
from ..core.timestamps import format_ts
from ..reference.runtime import ACTOR
from .common import (
    CUT_STOP_REASON,
    Extra,
    Ref,
    Reply,
    Result,
    Stats,
    Turn,
    import_error,
    tool_effect,
    warn_usage,
)
from .request_hash import RequestHasher

MISSING_RESULT = "[no result for this tool call is recorded in the transcript]"

_ID_BAD = re.compile(r"[^A-Za-z0-9._:-]")
#: the envelope's ``ts`` pattern (schemas/event.schema.json, envelope.threads-py), without
#: its anchors (``fullmatch``): what the schema asks of a ts the emitter formatted
TS_FORM = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z")


def usage_of(raw: Any) -> dict[str, Any]:
    """A usage object: ``input_tokens`` and ``output_tokens`` (0 when missing) plus the other
    integer counts of ``raw`` (cache tokens...); everything else is dropped."""
    return usage_kept(raw)[0]


def usage_kept(raw: Any) -> tuple[dict[str, Any], bool]:
    """:func:`usage_of` of ``raw`` and whether it kept every value of ``raw`` (then
    :func:`~.common.usage_problems` finds none: each value is a count)."""
    out: dict[str, Any] = {"input_tokens": 0, "output_tokens": 0}
    if not isinstance(raw, dict):
        return out, False
    every = True
    for k, v in raw.items():
        if type(v) is int:  # the usual count
            if 0 <= v <= MAX_SAFE_INTEGER:
                out[k] = v
                continue
        elif isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_SAFE_INTEGER:
            out[k] = v  # kept (a bool is an int too, never a count); usage_problems decides
        every = False
    return out, every


def blocks_certain(blocks: Any) -> bool:
    """Whether the schema's ``block`` rule (schemas/event.schema.json ``$defs.block``) surely
    accepts every item of ``blocks``: a list of objects with a non-empty string ``type``,
    and for the types the rule names, their fields (``text``, ``thinking`` strings; a
    ``tool_use`` with non-empty string ``id`` and ``name`` and an object ``input``; an
    ``image`` with an object ``source``). False when it cannot tell (a ``tool_result`` block,
    any other shape): the caller then asks the schema's validator, which decides."""
    if type(blocks) is not list:
        return False
    for b in blocks:
        if type(b) is not dict:
            return False
        t = b.get("type")
        if type(t) is not str or not t:
            return False
        if t == "text":
            if type(b.get("text")) is not str:
                return False
        elif t == "tool_use":
            bid, name = b.get("id"), b.get("name")
            if type(bid) is not str or not bid or type(name) is not str or not name:
                return False
            if type(b.get("input")) is not dict:
                return False
        elif t == "thinking":
            if type(b.get("thinking")) is not str:
                return False
        elif t == "tool_result" or (t == "image" and type(b.get("source")) is not dict):
            return False
    return True


def stop_reason_of(reply: Reply, uses: list[dict[str, Any]] | None = None) -> str:
    """:data:`CUT_STOP_REASON` for a reply the recording stops inside (:attr:`Reply.cut`);
    ``tool_use`` when the reply calls a tool (``uses``: its tool_use blocks, when known);
    else the source's reason or ``end_turn``."""
    if reply.cut:
        return CUT_STOP_REASON
    if reply.tool_uses() if uses is None else uses:
        return "tool_use"
    sr = reply.stop_reason
    return sr if isinstance(sr, str) and sr and sr != "tool_use" else "end_turn"


class Emitter:
    """Turns :class:`Turn` / :class:`Extra` items into checked canonical envelopes.

    ``agent`` is the thread_started agent, ``metadata`` its metadata. :meth:`start` yields the
    thread_started event; :meth:`turn` and :meth:`extra` yield the events of one item. Every
    event has passed ``check_events`` and the reducer; a refusal raises ``import_invalid`` at
    the source line of the item.
    """

    def __init__(
        self,
        *,
        file: str,
        thread_id: str,
        agent: dict[str, Any],
        metadata: dict[str, Any],
        start_ref: Ref,
        stats: Stats | None = None,
    ) -> None:
        self.file = file
        #: where a usage that is no count is warned of (``invalid_usage``); None: not warned
        self.stats = stats
        self.thread_id = thread_id
        self.agent = agent
        self.metadata = metadata
        self.start_ref = start_ref
        self.seq = 0
        self.last_ms = 0
        self.reducer = Reducer(copy_data=False)
        self.hasher = RequestHasher(agent["model"], agent["system"], agent["tools"])
        self._checker = LogChecker(unique_ids=False)  # _event_id makes the ids unique
        #: {type: one validator of the whole event}, compiled on first use (core.schemas),
        #: and the one of an ``x_`` type (the envelope: no section of the event schema applies)
        self._by_type, self._extension = compiled_event_validators()
        #: whether the current ts text (``_ts_text``) keeps the schema's ts pattern
        self._ts_checked = False
        #: the canonical bytes (JCS, no newline) of the last event emitted
        self.last_line = b""
        #: whether the last event emitted was plain (``canonical_event_line``)
        self.last_plain = True
        self._ts_text: tuple[int, str] = (-1, "")
        self._ids: set[str] = set()
        self._id_base = ("", "e")
        self.missing_results = 0
        self._turn_ids: set[str] = set()

    # ------------------------------------------------------------------ ids and clock
    def _event_id(self, base: str, suffix: str) -> str:
        if base != self._id_base[0]:  # the events of one source line share their base
            # the usual base (a uuid, L<line>) has no character to replace: no regex
            ok = base.isascii() and base.replace("-", "a").isalnum()
            self._id_base = (base, (base if ok else _ID_BAD.sub("-", base))[:96] or "e")
        base = self._id_base[1]
        eid = f"{base}.{suffix}"
        n = 1
        while eid in self._ids:
            n += 1
            eid = f"{base}.{suffix}{n}"
        self._ids.add(eid)
        return eid

    def _ts(self, ref: Ref) -> str:
        if ref.ts is not None and ref.ts > self.last_ms:
            self.last_ms = ref.ts
        if self._ts_text[0] != self.last_ms:  # events of one source line share their time
            # format_ts writes a real date of years 0001-9999 in TS_FORM's layout, or raises
            # (tests/test_import_fast_paths.py): the schema's whole rule for this ts, so an
            # event that carries it is checked only when its data needs it
            self._ts_text = (self.last_ms, format_ts(self.last_ms))
            self._ts_checked = True
        return self._ts_text[1]

    def _emit(
        self,
        etype: str,
        data: dict[str, Any],
        ref: Ref,
        suffix: str,
        *,
        critical: bool = False,
        actor: str | None = None,
        data_plain: bool = False,
        fixed: bool = False,
    ) -> dict[str, Any]:
        """Build, check and hand on one event. ``fixed``: the caller made ``data`` so that the
        schema cannot refuse it (its own strings, or values of an event the schema accepted,
        see each caller); the envelope is the emitter's own too (the thread_id of the checked
        thread_started, ids of ``[A-Za-z0-9._:-]``), so such an event is not checked again
        unless its ``ts`` breaks the schema's pattern (``_ts_checked``)."""
        # the usual event: a new id on its line's base, a time already formatted (the
        # events of one source line share both); else _event_id and _ts decide
        base, ms = self._id_base, ref.ts
        eid = f"{base[1]}.{suffix}"
        if ref.base != base[0] or eid in self._ids:
            eid = self._event_id(ref.base, suffix)
        else:
            self._ids.add(eid)
        if ms is None or ms <= self.last_ms:
            ts = self._ts_text[1] if self._ts_text[0] == self.last_ms else self._ts(ref)
        else:
            ts = self._ts(ref)
        ev = {
            "event_id": eid,
            "thread_id": self.thread_id,
            "seq": self.seq,
            "type": etype,
            "actor_kind": actor or ACTOR.get(etype, "system"),
            "epoch": 0,
            "branch_id": "main",
            "critical": critical,
            "ts": ts,
            "data": data,
        }
        try:
            # as core.log.check_events checks it: the strict JSON rules by way of the
            # canonical bytes (kept for the writer), then the envelope; ids are unique here.
            # The envelope around data is built here from strings, seq, 0 and a bool, so only
            # data is scanned (canonical_event_line gives canonical_line_plain's answer)
            line, plain = canonical_event_line(ev, data_plain=data_plain)
            # the ts, thread_id, seq and event_id are made valid here: the schema is checked,
            # by the one validator of the type (stricter: it holds ts's calendar rule) and,
            # when that refuses, the event schema itself (the refusal, as before)
            if not fixed or not self._ts_checked:
                check = self._by_type.get(etype) or self._compiled(etype)
                if check is None or not check.is_valid(ev):
                    self._checker.check_schema(ev)
                self._ts_checked = True
            # seq and thread_id are the emitter's own: 0, 1, 2, ... from the reducer's start,
            # the thread_started's id (the rules apply() adds to apply_read's)
            self.reducer.apply_read(ev)
        except CaseError as err:
            where = err.location.pointer
            msg = f"{etype} {where}: {err.message}" if where else f"{etype}: {err.message}"
            raise import_error(
                f"cannot be imported as a valid event: {msg}",
                file=self.file,
                line=ref.line,
                kind=ref.kind or None,
            ) from None
        if not plain:
            self.hasher.plain = False
        self.last_plain = plain
        self.last_line = line
        self.seq += 1
        return ev

    def _compiled(self, etype: str) -> Any:
        """The validator of ``etype``, compiled now; for a type of no section (``x_``), the
        envelope's (the event schema holds nothing more for it: the same answer, without
        compiling the whole event schema; a type that is not ``x_`` fails it, and
        ``check_schema`` words the refusal)."""
        try:
            return self._by_type[etype]
        except KeyError:
            return self._extension

    # ------------------------------------------------------------------ items
    def start(self) -> Iterator[dict[str, Any]]:
        yield self._emit(
            "thread_started",
            {"agent": self.agent, "metadata": self.metadata},
            self.start_ref,
            "start",
        )

    def extra(self, item: Extra) -> Iterator[dict[str, Any]]:
        yield self._emit(
            item.type, item.data, item.ref, item.suffix, actor="system", data_plain=item.plain
        )

    def _turn_id(self, ref: Ref) -> str:
        base = _ID_BAD.sub("-", ref.base)[:100] or "turn"
        tid, n = f"turn-{base}", 1
        while tid in self._turn_ids:
            n += 1
            tid = f"turn-{base}-{n}"
        self._turn_ids.add(tid)
        return tid

    def turn(self, turn: Turn) -> Iterator[dict[str, Any]]:
        """The events of one turn (module docstring)."""
        if turn.content is not None:
            content = turn.content
            yield self._emit(
                "user_message",
                {"content": content},
                turn.ref,
                "user",
                # text, or blocks the block rule accepts: the one key the schema allows
                fixed=type(content) is str or blocks_certain(content),
                # {"content": text} is plain (canonical_event_line): not scanned; nor is
                # content the source proved plain (Turn.plain)
                data_plain=turn.plain or type(content) is str,
            )
        tid = self._turn_id(turn.ref)
        # data of strings under ASCII keys is plain (canonical_event_line): not scanned
        yield self._emit(
            "turn_started", {"turn_id": tid}, turn.ref, "turn", data_plain=True, fixed=True
        )
        usage = {"input_tokens": 0, "output_tokens": 0}
        pending: list[str] = []
        last: Reply | None = None
        last_uses: list[dict[str, Any]] = []
        replies = turn.replies
        final = replies[-1] if replies else None
        for item in turn.items:
            if isinstance(item, Extra):
                yield from self.extra(item)
                continue
            last, last_uses = item, item.tool_uses()
            yield from self._reply(item, tid, usage, last_uses)
            yield from self._tool_events(item, last_uses, tid, item is final, pending)
        yield self._end(turn, tid, last, last_uses, usage, pending)

    def _reply(
        self, item: Reply, tid: str, usage: dict[str, int], uses: list[dict[str, Any]]
    ) -> Iterator[dict[str, Any]]:
        """model_requested and model_responded of one reply (``uses``: its tool_use blocks);
        adds its usage to ``usage``."""
        messages = self.reducer.state["messages"]
        sha = self.hasher.request_sha256(messages)
        yield self._emit(
            "model_requested",
            {"turn_id": tid, "model": self.agent["model"], "request_sha256": sha},
            item.ref,
            "req",
            data_plain=True,  # strings under ASCII keys
            fixed=True,  # the model of the checked thread_started, a hex digest
        )
        u, every = usage_kept(item.usage)
        if self.stats is not None and not every:  # every value a count: nothing to warn of
            warn_usage(item.usage, item.ref.line, self.stats)
        stop = stop_reason_of(item, uses)
        blocks = item.blocks
        yield self._emit(
            "model_responded",
            {
                "turn_id": tid,
                "message": {"role": "assistant", "content": blocks},
                "stop_reason": stop,
                "usage": u,
            },
            item.ref,
            "resp",
            # the rest is ASCII keys and strings: the data is plain when its usage and blocks
            # are, at their depth in the event (data, message, content), or when the source
            # proved them plain (Reply.plain: usage_of keeps integers in range under the
            # source's keys); when a scan cannot tell, canonical_event_line scans it all
            data_plain=item.plain
            or (
                type(stop) is str
                and is_plain(u, 2)
                and type(blocks) is list
                and is_plain(blocks, 3)
            ),
            # the emitter's own keys, role, stop reason (never empty) and counts (usage_of):
            # only the blocks could break the schema
            fixed=blocks_certain(blocks),
        )
        usage["input_tokens"] += u["input_tokens"]
        usage["output_tokens"] += u["output_tokens"]

    def _tool_events(
        self,
        item: Reply,
        uses: list[dict[str, Any]],
        tid: str,
        final: bool,
        pending: list[str],
    ) -> Iterator[dict[str, Any]]:
        """tool_called and tool_result per tool_use block (``uses``); a call of the final reply
        without a result is added to ``pending`` and ends the reply's calls (the turn is
        interrupted right after it), one of an earlier reply gets an error result.

        Called right after the reply's model_responded: when that event was plain, each
        tool_called's data (strings and an ``input`` that is part of the reply's content) is
        plain and writable too, and is not scanned again."""
        reply_plain = self.last_plain
        for k, block in enumerate(uses):
            name = block["name"]
            effect = tool_effect(name)
            call = {"turn_id": tid, "tool_use_id": block["id"], "name": name}
            yield self._emit(
                "tool_called",
                {**call, "input": block["input"], "kind": "external", "effect": effect},
                item.ref,
                f"call{k}",
                critical=effect == "write",
                data_plain=reply_plain,
                fixed=True,  # a tool_use block of the checked model_responded, two enums
            )
            res = item.results.get(block["id"])
            if res is None and not final:
                # the model went on without it: record that no result was kept
                res = Result(MISSING_RESULT, True, item.ref)
                self.missing_results += 1
            if res is None:
                # the recording stops at this call: a replay is interrupted right after its
                # tool_called (replay.md 3.9), so the reply's later calls are never made
                pending.append(block["id"])
                break
            yield self._emit(
                "tool_result",
                {**call, "content": res.content, "is_error": res.is_error},
                res.ref,
                f"result{k}",
                critical=True,
                # the call's strings, a bool and text: plain when the reply was
                data_plain=reply_plain and type(res.content) is str and type(res.is_error) is bool,
                # the call's checked strings: text (or blocks the block rule accepts) and
                # a bool cannot be refused
                fixed=type(res.is_error) is bool
                and (type(res.content) is str or blocks_certain(res.content)),
            )

    def _end(
        self,
        turn: Turn,
        tid: str,
        last: Reply | None,
        last_uses: list[dict[str, Any]],
        usage: dict[str, int],
        pending: list[str],
    ) -> dict[str, Any]:
        """turn_completed, or turn_failed (the source's failure, or ``interrupted``);
        ``last_uses``: the tool_use blocks of ``last``."""
        end_ref = turn.failed[2] if turn.failed else (last.ref if last else turn.ref)
        stop = stop_reason_of(last, last_uses) if last is not None else ""
        if (
            turn.failed is None
            and last is not None
            and not last_uses
            and not pending
            and (stop != "pause_turn")
        ):
            return self._emit(
                "turn_completed",
                {"turn_id": tid, "stop_reason": stop, "usage": usage},
                end_ref,
                "end",
                # a stop reason that is never empty, counts the canonical bytes kept in range
                fixed=True,
                # strings and the turn's two counts: sums of its replies', within the thread's
                # total, which the reducer keeps within 2^53-1
                data_plain=type(stop) is str
                and type(usage["input_tokens"]) is int
                and type(usage["output_tokens"]) is int,
            )
        if turn.failed is not None:
            code, message = turn.failed[0], turn.failed[1]
        elif last is None:
            code, message = "interrupted", "the turn ended before the model replied"
        elif stop == "pause_turn" and not last_uses and not pending:
            # a paused reply goes on with the next model call (replay.md 3.2): none recorded
            code, message = "interrupted", "the turn ended while the model's reply was paused"
        else:
            code, message = (
                "interrupted",
                "the turn ended before the model answered its tool results",
            )
        return self._emit(
            "turn_failed",
            {"turn_id": tid, "error": {"code": code, "message": message}},
            end_ref,
            "end",
            fixed=type(code) is str and code != "" and type(message) is str,
        )
