"""``threads export`` files of the threads runtime as thread logs (spec/importers.md section 9).

No public description of the file exists; this is the project's reading of it, stated in
full in the spec section. An export is JSON Lines, every line a canonical (JCS) JSON object:

* line 1, the header: ``{"threads_export": 1, "thread_id": str, "dialect"?: "threads-py" |
  "threads-ts", ...}`` (other keys are kept in the thread's metadata as ``export``);
* then one line per event: the event's envelope in the header's dialect (threads-py when it
  names none) plus ``prev_hash``, the lower-case hex sha256 of the previous line's bytes
  (the header's for the first event): a hash chain;
* last, the head checkpoint: ``{"head": {"events": int, "seq": int, "sha256": str}}``: the
  number of events, the last event's ``seq`` and the sha256 of its line.

Verified, in order, each a refusal (``import_invalid``) naming the line, with or without
``strict``: the header; each line a canonical JSON object; each ``prev_hash`` the hash of the
line before (a broken chain names the line whose link fails); ``seq`` counting from 0; the
head matching the chain; nothing after the head. An export that stops before its head (cut
by a crash: its last line damaged, or simply no head line) is read up to its last whole line
with an ``import_skipped`` warning, reason ``cut_record``, and its open turn is interrupted
with a note; ``strict`` refuses it.

Mapped, the event types the imported log shares: ``thread_started`` (its agent, every tool
made external: a case replays from the recorded results), ``user_message`` (starts a turn),
``model_responded`` (a reply), ``tool_result`` (the result of its call), ``turn_completed`` and
``turn_failed`` (the turn's end); ``turn_started``, ``model_requested`` and ``tool_called`` are
recomputed from those (dropped, counted). Every other type (``sandbox_read``,
``sandbox_wrote``, ``artifact_added``, ``snapshot_taken``, ``restored``, ``forked`` and
types of the runtime's own) is kept as ``x_threads.<type>`` with its ``data``; an ``x_``
type keeps its name.

Reason codes: ``import_invalid``, ``io_error`` (unreadable file).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from ..core.canonical import canonical_line, is_plain
from ..core.dialects import CANONICAL, get_dialect
from ..core.errors import CaseError
from ..core.files import MAX_LOG_BYTES, open_regular
from ..core.strictjson import parse
from .common import (
    Extra,
    Ref,
    Reply,
    Result,
    Stats,
    Turn,
    cut_short,
    import_error,
    imported_agent,
    parse_ts_ms,
    stats_for,
    tool_effect,
)

EXPORT_HINT = (
    "import the file the threads runtime's `threads export` wrote, unchanged; a file "
    "changed after the export fails its chain: export the thread again"
)
#: the key of the header line (line 1) that marks a ``threads export`` file
HEADER_KEY = "threads_export"
#: the types the import recomputes from the others (counted, not kept)
RECOMPUTED = ("turn_started", "model_requested", "tool_called")
_HEX = re.compile(r"[0-9a-f]{64}")
_XBAD = re.compile(r"[^A-Za-z0-9_.:-]")
_SORTED = orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER


def is_export_line(raw: Any) -> bool:
    """Whether a decoded line is the header or an event line of a ``threads export`` file."""
    return isinstance(raw, dict) and (HEADER_KEY in raw or "prev_hash" in raw)


def _sha(line: bytes) -> str:
    return hashlib.sha256(line).hexdigest()


class ThreadsExportSource:
    """One export, verified and read (:meth:`items`); the first pass is done in ``__init__``:
    the chain and the head are checked before anything is mapped."""

    format = "threads"

    def __init__(
        self, path: str | os.PathLike[str], *, strict: bool = False, stats: Stats | None = None
    ) -> None:
        self.path = Path(path)
        self.file = str(path)
        self.strict = strict
        self.stats = stats_for(stats, strict=strict, file=str(path))
        self.header: dict[str, Any] = {}
        #: ``(line number, canonical envelope)`` of each event, in order
        self.events: list[tuple[int, dict[str, Any]]] = []
        self.cut = False
        #: the line numbers whose value is not plain (``core.canonical.is_plain``): the
        #: events mapped from the other lines are written without scanning them again
        self.not_plain: set[int] = set()
        self._read()
        self.started = next(
            (e["data"] for _, e in self.events[:1] if e.get("type") == "thread_started"), None
        )

    # ------------------------------------------------------------------ verification
    def _refuse(self, line: int | None, message: str) -> CaseError:
        return import_error(message, file=self.file, line=line, kind=None, hint=EXPORT_HINT)

    def _lines(self) -> list[bytes]:
        """The lines without their newlines; the last is ``b""`` when a newline ended the
        file (the file is read whole: it is held whole anyway, as values, until mapped)."""
        with open_regular(self.path, code="io_error", limit=MAX_LOG_BYTES) as fh:
            return fh.read().split(b"\n")

    def _value(self, n: int, body: bytes, last: bool) -> dict[str, Any] | None:
        """The line's object, checked canonical; ``None`` for a damaged last line (cut). A
        line that is not plain (``core.canonical.is_plain``) is noted in ``not_plain``."""
        try:
            # a value whose canonical line is the line read is strict JSON (a duplicate key,
            # an unsafe integer or nesting past 256 give other bytes or no canonical line)
            value = orjson.loads(body)
        except orjson.JSONDecodeError:
            if last:
                return None
            try:
                parse(body, code="import_invalid", file=self.file, line=n)
            except CaseError as err:  # the strict reader's words for what is wrong
                raise self._refuse(n, f"not strict JSON: {err.message}") from None
            raise self._refuse(n, "not strict JSON") from None
        if not isinstance(value, dict):
            raise self._refuse(n, "a line of an export is a JSON object")
        try:  # orjson's sorted text is the JCS line of a value with no float and no key
            # whose UTF-16 order could differ (core.canonical.is_plain); any other line is
            # written by the JCS writer
            same = orjson.dumps(value, option=_SORTED) == body and is_plain(value)
            if not same:
                self.not_plain.add(n)
                same = canonical_line(value) == body
        except (CaseError, orjson.JSONEncodeError, TypeError):
            same = False
        if not same:
            raise self._refuse(
                n, "the line is not in canonical form (JCS): the file was rewritten after export"
            )
        return value

    def _read(self) -> None:
        prev = ""
        head: tuple[int, dict[str, Any]] | None = None
        lines = self._lines()
        if lines[-1] == b"":
            lines.pop()  # a newline ended the last line (or the file is empty)
            cut = 0
        else:
            cut = len(lines)  # the number of the last line, which no newline ended
        if not lines:
            raise self._refuse(None, "the file is empty: no `threads export` header")
        for n, body in enumerate(lines, 1):
            value = self._value(n, body, last=n == cut)
            if value is None:
                self._cut_at(n, "its last line is cut short")
                return
            if head is not None:
                raise self._refuse(n, f"a line after the head checkpoint (line {head[0]})")
            if n == 1:
                self._header(value)
            elif set(value) == {"head"}:
                head = (n, value["head"])
                self._check_head(n, value["head"], prev)
            else:
                self._event(n, value, prev)
            prev = _sha(body)
        if head is None:
            self._cut_at(len(lines) + 1, "it ends before its head checkpoint")

    def _header(self, value: dict[str, Any]) -> None:
        if value.get(HEADER_KEY) != 1 or not isinstance(value.get("thread_id"), str):
            raise self._refuse(
                1,
                'not a `threads export` header: expected {"threads_export": 1, "thread_id": ...}',
            )
        dialect = value.get("dialect", CANONICAL)
        if dialect not in ("threads-py", "threads-ts"):
            raise self._refuse(1, f"unknown dialect {dialect!r} in the header")
        self.header = value
        self.dialect = get_dialect(dialect)

    def _event(self, n: int, value: dict[str, Any], prev: str) -> None:
        link = value.pop("prev_hash", None)
        if link == prev:
            pass  # the hex digest of the line before: the form is right too
        elif not isinstance(link, str) or not _HEX.fullmatch(link):
            raise self._refuse(n, "an event line without a prev_hash (64 lower-case hex digits)")
        else:
            raise self._refuse(
                n,
                f"the chain is broken: prev_hash is not the sha256 of line {n - 1} (a line at "
                "or before it was changed, removed or inserted)",
            )
        try:
            ev = self.dialect.decode_event(value)
        except CaseError as err:
            raise self._refuse(n, err.message) from None
        if ev.get("seq") != len(self.events) or not isinstance(ev.get("type"), str):
            raise self._refuse(
                n, f"an event needs a string type and seq {len(self.events)} (counting from 0)"
            )
        if not isinstance(ev.get("data"), dict) or ev.get("thread_id") != self.header["thread_id"]:
            raise self._refuse(n, "an event needs an object data and the header's thread_id")
        self.events.append((n, ev))

    def _check_head(self, n: int, head: Any, prev: str) -> None:
        want = {"events": len(self.events), "seq": len(self.events) - 1, "sha256": prev}
        if not isinstance(head, dict) or set(head) != set(want):
            raise self._refuse(n, "a head checkpoint is {events, seq, sha256}")
        for key, value in want.items():
            if head[key] != value:
                raise self._refuse(
                    n,
                    f"the head checkpoint does not match the chain: its {key} is "
                    f"{head[key]!r}, the chain's {value!r}",
                )

    def _cut_at(self, n: int, why: str) -> None:
        message = f"the export stops before its head checkpoint: {why}"
        if self.strict:
            raise self._refuse(n, message)
        self.stats.warn(n, "import_skipped", "cut_record", message)
        self.cut = True

    # ------------------------------------------------------------------ header
    @property
    def thread_id(self) -> str:
        return str(self.header.get("thread_id") or "thread")

    def _tools(self) -> list[dict[str, Any]]:
        agent = self.started.get("agent") if isinstance(self.started, dict) else None
        tools = agent.get("tools") if isinstance(agent, dict) else None
        out = []
        for t in tools if isinstance(tools, list) else []:
            if isinstance(t, dict) and isinstance(t.get("name"), str) and t["name"]:
                effect = t.get("effect")
                out.append(
                    {
                        "name": t["name"],
                        "description": t.get("description", "")
                        if isinstance(t.get("description"), str)
                        else "",
                        "input_schema": t["input_schema"]
                        if isinstance(t.get("input_schema"), dict)
                        else {"type": "object"},
                        "kind": "external",
                        "effect": effect
                        if effect in ("read", "write", "pure")
                        else tool_effect(t["name"]),
                    }
                )
        return out

    @property
    def agent(self) -> dict[str, Any]:
        started = self.started.get("agent") if isinstance(self.started, dict) else None
        src = started if isinstance(started, dict) else {}
        called = [
            e["data"]["name"]
            for _, e in self.events
            if e["type"] == "tool_called" and isinstance(e["data"].get("name"), str)
        ]
        tools = self._tools()
        known = {t["name"] for t in tools}
        model = src.get("model")
        agent = imported_agent(
            src["name"] if isinstance(src.get("name"), str) and src["name"] else "threads",
            model if isinstance(model, str) else "",
            [n for n in dict.fromkeys(called) if n not in known],
        )
        agent["tools"] = tools + agent["tools"]
        agent["system"] = src["system"] if isinstance(src.get("system"), str) else ""
        return agent

    @property
    def metadata(self) -> dict[str, Any]:
        md: dict[str, Any] = {"source": "threads", "session_id": self.thread_id}
        export = {k: v for k, v in self.header.items() if k not in (HEADER_KEY, "thread_id")}
        if export:
            md["export"] = export
        if isinstance(self.started, dict) and isinstance(self.started.get("metadata"), dict):
            md["thread"] = self.started["metadata"]
        return md

    @property
    def start_ref(self) -> Ref:
        n, ev = self.events[0] if self.events else (1, {})
        return Ref(str(ev.get("event_id", "start")), parse_ts_ms(ev.get("ts")), n, "header")

    # ------------------------------------------------------------------ mapping
    def items(self) -> Iterator[Turn | Extra]:
        turn: Turn | None = None
        replies: list[Reply] = []
        last_ts: Any = None
        ms: int | None = None
        for n, ev in self.events:
            etype, data, ts = ev["type"], ev["data"], ev.get("ts")
            if type(ts) is not str or ts != last_ts:  # the events of one step share their ts
                last_ts, ms = ts, parse_ts_ms(ts)
            ref = Ref(str(ev.get("event_id", f"L{n}")), ms, n, etype)
            if etype == "thread_started" and n == self.events[0][0]:
                continue
            if etype == "user_message":
                if turn is not None:
                    cut_short(turn, "the next turn starts before this one ended", self.stats)
                    yield turn
                turn, replies = (
                    Turn(data.get("content", ""), ref, plain=n not in self.not_plain),
                    [],
                )
            elif etype in RECOMPUTED:
                self.stats.skip(f"{etype} (recomputed by the import)")
            elif turn is not None and etype == "model_responded":
                reply = self._reply(data, ref, n not in self.not_plain)
                replies.append(reply)
                turn.items.append(reply)
            elif turn is not None and etype == "tool_result":
                self._result(data, ref, replies)
            elif turn is not None and etype in ("turn_completed", "turn_failed"):
                if etype == "turn_failed":
                    err = data.get("error") if isinstance(data.get("error"), dict) else {}
                    code = err.get("code") if isinstance(err.get("code"), str) else "failed"
                    turn.failed = (code or "failed", str(err.get("message", "")), ref)
                yield turn
                turn = None
            else:
                extra = self._extra(etype, data, ref, n not in self.not_plain)
                if turn is not None:
                    turn.items.append(extra)
                else:
                    yield extra
        if turn is not None:
            why = (
                "the export stops before its head checkpoint"
                if self.cut
                else "the export ends before this turn's end"
            )
            cut_short(turn, why, self.stats)
            yield turn

    @staticmethod
    def _reply(data: dict[str, Any], ref: Ref, plain: bool) -> Reply:
        """The reply of a model_responded (``plain``: its line was, see ``not_plain``)."""
        message = data.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        sr = data.get("stop_reason")
        usage = data.get("usage")
        return Reply(
            blocks,
            ref,
            stop_reason=sr if isinstance(sr, str) else None,
            usage=usage if isinstance(usage, dict) else {},
            plain=plain,
        )

    def _result(self, data: dict[str, Any], ref: Ref, replies: list[Reply]) -> None:
        cid = data.get("tool_use_id")
        for reply in reversed(replies):
            if any(b.get("id") == cid for b in reply.tool_uses()):
                is_error = data.get("is_error") is True
                reply.results[str(cid)] = Result(data.get("content", ""), is_error, ref)
                return
        self.stats.skip("tool_result whose call is not in the turn")
        self.stats.warn(
            ref.line or 0,
            "import_repaired",
            "unmatched_result",
            f"a tool_result with tool_use_id {cid!r} answers no tool call of the turn; dropped",
        )

    @staticmethod
    def _extra(etype: str, data: dict[str, Any], ref: Ref, plain: bool) -> Extra:
        """``x_threads.<type>`` (an ``x_`` type as it is), spelled as thread-log.md 4.1
        allows: other characters become ``-``, at most 120 after ``x_``."""
        name = etype[2:] if etype.startswith("x_") else f"threads.{etype}"
        return Extra("x_" + (_XBAD.sub("-", name)[:120] or "threads"), data, ref, "x", plain)
