"""Claude Code records -> turns: the second pass of the Claude Code importer
(spec/importers.md section 2; the rules are listed in :mod:`.claude_code`).

Replies: one model reply is often written as several ``assistant`` records, one content
block each, sometimes repeated with differing streaming copies. Records continue the current
reply when they share its ``message.id``, or, when neither has an id (Agent SDK
transcripts), when the record's ``parentUuid`` is the reply's last record. Repeated blocks
are written once (a tool_use by its id, a text or thinking block that repeats or extends the
last one by its text). The reply's usage is the copy with the largest token total (a zero
placeholder never wins), read from ``message.usage`` or, for older CLIs, the record's own
``usage``.

Provider errors: when a model call fails for good, Claude Code writes a synthetic
``assistant`` record (``isApiErrorMessage: true``; older CLIs only ``"model": "<synthetic>"``
with text starting ``API Error``) carrying the error text. It is never a model reply: it
becomes ``x_claude_code.api_error {text, status?, error_type?, error?}`` and ends its turn
failed with ``provider_error`` and the text (:func:`api_error`).

Compaction: a ``compact_boundary`` system record and the summary record after it
(``isCompactSummary``, or a user record starting with the continuation preamble) are
extension events (``x_claude_code.system`` and ``x_claude_code.compact_summary``) inside the
turn they fall in; they never start or end a turn.

Repeated call ids: a later record's ``tool_use`` whose id the reply already holds is a
streaming copy (written once, above); two ``tool_use`` blocks of one record with the same
id are two calls, answered by occurrence and written with ids of their own
(:mod:`.callids`, an ``import_repaired`` warning ``duplicate_call_id``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from .callids import scope_and_report
from .common import CUT_AT_END, Extra, Ref, Reply, Result, Stats, Turn, cut_short

DROPPED_TYPES = ("progress", "queue-operation", "file-history-snapshot")
META_PREFIXES = (
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<bash-input>",
    "Caveat: The messages below were generated",
)
COMMAND_PREFIXES = ("<command-name>", "<command-message>", "<command-args>")
COMPACT_PREFIX = "This session is being continued from a previous conversation"
INTERRUPT = "[Request interrupted by user"
_USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)
#: stop reasons that do not end a reply's turn (the model goes on)
NOT_FINAL = ("tool_use", "pause_turn")
#: the turn_failed code of a turn whose model call failed at the provider
PROVIDER_ERROR = "provider_error"
_STATUS = re.compile(r"API Error:?\s*\(?(\d{3})\b")
_ERROR_TYPE = re.compile(r'"type"\s*:\s*"([a-z_]+_error)"')


def text_of(content: Any) -> str:
    """The text of message content: a string, or its text blocks joined."""
    if isinstance(content, str):
        return content
    return "".join(
        b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
    )


def classify_user(obj: dict[str, Any]) -> str:
    """``real``, ``results`` (tool_result blocks), ``meta``, ``compact`` (a compaction
    summary), ``interrupt`` or ``command`` (a slash command: real unless the model never
    answered it)."""
    if obj.get("isCompactSummary"):
        return "compact"
    if obj.get("isMeta"):
        return "meta"
    content = obj["message"]["content"]
    if isinstance(content, list):
        for b in content:
            if b.get("type") == "tool_result":
                return "results"
    text = text_of(content).lstrip()
    if text.startswith(INTERRUPT):
        return "interrupt"
    if text.startswith(META_PREFIXES):
        return "meta"
    if text.startswith(COMMAND_PREFIXES):
        return "command"
    if text.startswith(COMPACT_PREFIX):
        return "compact"
    return "real"


def api_error(obj: dict[str, Any]) -> dict[str, Any] | None:
    """The ``x_claude_code.api_error`` data of a synthetic error record, or None for any other
    assistant record: ``{"text"}`` plus ``status`` (the HTTP status the text names, an
    integer), ``error_type`` (the provider's error type in the text) and ``error`` (the
    record's own ``error`` label) where given."""
    msg = obj["message"]
    flagged = obj.get("isApiErrorMessage") is True
    if not flagged and msg.get("model") != "<synthetic>":
        return None  # neither flagged nor synthetic: the usual reply, its text not joined
    text = text_of(msg["content"])
    synthetic = msg.get("model") == "<synthetic>" and text.lstrip().startswith("API Error")
    if not flagged and not synthetic:
        return None
    data: dict[str, Any] = {"text": text}
    m = _STATUS.search(text)
    if m:
        data["status"] = int(m.group(1))
    m = _ERROR_TYPE.search(text)
    if m:
        data["error_type"] = m.group(1)
    if isinstance(obj.get("error"), str) and obj["error"]:
        data["error"] = obj["error"]
    return data


def usage_total(usage: Any) -> int:
    """The token total of a usage object (input, output and cache counts)."""
    if not isinstance(usage, dict):
        return 0
    total = 0
    for k in _USAGE_KEYS:
        v = usage.get(k)
        if isinstance(v, int) and v is not True and v is not False:
            total += v
    return total


def _same_block(a: dict[str, Any], b: dict[str, Any]) -> str | None:
    """How block ``b`` relates to an earlier block ``a`` of the same reply: ``"repeat"``,
    ``"grows"`` (a later streaming copy), ``"shrinks"`` (an earlier one), or None."""
    if a == b:
        return "repeat"
    key = {"text": "text", "thinking": "thinking"}.get(b.get("type", ""))
    if key is None or a.get("type") != b["type"]:
        return None
    old, new = a.get(key), b.get(key)
    if not isinstance(old, str) or not isinstance(new, str):
        return None
    if new.startswith(old):
        return "grows"
    if old.startswith(new):
        return "shrinks"
    return None


class ClaudeMapper:
    """Maps the kept records of a Claude Code transcript to turns and extension events."""

    def __init__(self, stats: Stats, *, cut_at_end: bool = False) -> None:
        self.stats = stats
        #: the transcript ends in a damaged record (TranscriptSource.cut_at_end)
        self.cut_at_end = cut_at_end
        self.turn: Turn | None = None
        self.reply: Reply | None = None
        self.owners: dict[str, Reply] = {}

    def items(self, records: Iterable[tuple[int, Any, int | None]]) -> Iterator[Turn | Extra]:
        """Turns and extension events from ``(line number, record, time in ms or None)``."""
        st = self.stats
        for lineno, obj, ms in records:
            t = obj.get("type")
            uid = obj.get("uuid")
            base = uid if isinstance(uid, str) and uid else f"L{lineno}"
            ref = Ref(base, ms, lineno, str(t))
            if t == "assistant":
                err = api_error(obj)
                if err is None:
                    self._assistant(obj, ref)
                else:
                    yield from self._api_error(err, ref)
            elif t == "user":
                yield from self._user(obj, ref)
            elif t == "system":
                data = {
                    k: obj[k]
                    for k in ("subtype", "content", "level")
                    if isinstance(obj.get(k), str)
                }
                if isinstance(obj.get("compactMetadata"), dict):
                    data["compactMetadata"] = obj["compactMetadata"]
                yield from self._place(Extra("x_claude_code.system", data, ref, "system"))
            elif t == "summary":
                data = {k: obj[k] for k in ("summary", "leafUuid") if isinstance(obj.get(k), str)}
                yield from self._place(Extra("x_claude_code.summary", data, ref, "summary"))
            elif t in DROPPED_TYPES:
                st.skip(f"{t} line")
            elif isinstance(t, str):
                st.skip(f"unknown line type {t!r}")
            else:
                st.skip("line without a type")
        if self.turn is not None:
            last = self.turn.replies[-1] if self.turn.replies else None
            if self.cut_at_end and (last is None or last.stop_reason in (None, *NOT_FINAL)):
                # the writer stopped inside this turn: a reply with no final stop reason
                # may have gone on in the record that was cut
                why = CUT_AT_END + (
                    ", before the model replied"
                    if last is None
                    else ", and its last reply has no final stop reason"
                )
                if last is not None and last.stop_reason is None:
                    last.cut = True  # it never said how it ended: not end_turn
                cut_short(self.turn, why, self.stats)
            yield from self._finish(self.turn)

    def _new_turn(self, turn: Turn | None) -> None:
        self.turn, self.reply, self.owners = turn, None, {}

    def _place(self, extra: Extra) -> Iterator[Extra]:
        if self.turn is None:
            yield extra
        else:
            self.turn.items.append(extra)

    def _finish(self, t: Turn) -> Iterator[Turn | Extra]:
        if (
            not t.replies
            and t.failed is None
            and isinstance(t.content, (str, list))
            and text_of(t.content).lstrip().startswith(COMMAND_PREFIXES)
        ):
            yield Extra("x_claude_code.command", {"content": t.content}, t.ref, "command")
            yield from (i for i in t.items if isinstance(i, Extra))
            return
        yield t

    # ------------------------------------------------------------------ replies
    def _continues(self, mid: str | None, obj: dict[str, Any]) -> bool:
        reply = self.reply
        if reply is None:
            return False
        if mid is not None:
            return reply.msg_id == mid
        return reply.msg_id is None and obj.get("parentUuid") == reply.last_uuid is not None

    def _assistant(self, obj: dict[str, Any], ref: Ref) -> None:
        msg = obj["message"]
        content = msg["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        mid = msg.get("id") if isinstance(msg.get("id"), str) else None
        if self.turn is None:
            self.stats.notes.append(
                f"line {ref.line}: a reply with no user message before it "
                "starts a turn without user input"
            )
            self._new_turn(Turn(None, ref))
        assert self.turn is not None
        if self.reply is not None and self._continues(mid, obj):
            reply = self.reply
            for b in blocks:
                self._merge_block(reply, b)
        else:  # a new reply keeps its line's blocks as they are
            reply = self.reply = Reply(list(blocks), ref, msg_id=mid)
            self.turn.items.append(reply)
            if len(blocks) > 1:  # a repeated id among the line's calls (module docstring)
                where = f"assistant record of message {mid}" if mid else "assistant record"
                scope_and_report(reply, where=where, line=ref.line, stats=self.stats)
            for b in reply.blocks:
                if b["type"] == "tool_use":
                    self.owners[b["id"]] = reply
        usage = msg.get("usage") if isinstance(msg.get("usage"), dict) else obj.get("usage")
        if isinstance(usage, dict):
            total = usage_total(usage)
            if not reply.usage or total > reply.usage_total:
                reply.usage, reply.usage_total = usage, total
        if isinstance(msg.get("stop_reason"), str) and msg["stop_reason"]:
            reply.stop_reason = msg["stop_reason"]
        uid = obj.get("uuid")
        reply.last_uuid = uid if isinstance(uid, str) else None

    def _api_error(self, data: dict[str, Any], ref: Ref) -> Iterator[Turn | Extra]:
        """A provider error record: kept as ``x_claude_code.api_error``; the turn it falls in
        ends failed with ``provider_error`` (its text the message)."""
        extra = Extra("x_claude_code.api_error", data, ref, "api_error")
        if self.turn is None:
            yield extra
            return
        self.turn.items.append(extra)
        self.turn.failed = (PROVIDER_ERROR, data["text"], ref)
        yield from self._finish(self.turn)
        self._new_turn(None)

    def _merge_block(self, reply: Reply, b: dict[str, Any]) -> None:
        if b["type"] == "tool_use":
            if b["id"] in self.owners:
                return
            self.owners[b["id"]] = reply
        elif reply.blocks:
            how = _same_block(reply.blocks[-1], b)
            if how == "grows":
                reply.blocks[-1] = b
                return
            if how is not None or b in reply.blocks:
                return
        reply.blocks.append(b)

    # ------------------------------------------------------------------ user records
    def _user(self, obj: dict[str, Any], ref: Ref) -> Iterator[Turn | Extra]:
        kind = classify_user(obj)
        content = obj["message"]["content"]
        if kind == "results":
            yield from self._results(content, ref)
        elif kind == "meta":
            yield from self._place(Extra("x_claude_code.meta", {"content": content}, ref, "meta"))
        elif kind == "compact":
            extra = Extra("x_claude_code.compact_summary", {"content": content}, ref, "compact")
            yield from self._place(extra)
        elif kind == "interrupt":
            if self.turn is None:
                yield Extra("x_claude_code.meta", {"content": content}, ref, "meta")
                return
            self.turn.failed = ("interrupted", text_of(content).strip(), ref)
            yield from self._finish(self.turn)
            self._new_turn(None)
        else:
            if self.turn is not None:
                yield from self._finish(self.turn)
            self._new_turn(Turn(content, ref))

    def _results(self, content: list[dict[str, Any]], ref: Ref) -> Iterator[Extra]:
        rest = []
        for b in content:
            if b.get("type") != "tool_result":
                rest.append(b)
                continue
            owner = self.owners.get(b["tool_use_id"])
            if owner is None or self.turn is None:
                self.stats.skip("tool result without its tool call in the turn")
                self.stats.warn(
                    ref.line or 0,
                    "import_repaired",
                    "unmatched_result",
                    f"a tool_result with tool_use_id {b['tool_use_id']!r} answers no tool call "
                    "of the turn; dropped",
                )
                continue
            c = b.get("content")
            # calls of one reply sharing the id are answered by occurrence (Reply.answer)
            owner.answer(
                b["tool_use_id"], Result("" if c is None else c, bool(b.get("is_error")), ref)
            )
        if rest:
            yield from self._place(Extra("x_claude_code.meta", {"content": rest}, ref, "meta"))
