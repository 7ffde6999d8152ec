"""SWE-agent trajectories (``.traj``, one JSON document per run) as threads
(spec/importers.md section 8).

A trajectory is ``{"history": [...], "trajectory": [...], "info": {...}}``; the import reads
``history``, the messages the model saw and wrote, in order:

* the ``system`` message is the agent's system text; demonstration messages (``is_demo``)
  are skipped (counted);
* the first ``user`` message (the task: the issue to solve) starts the one turn;
* each ``assistant`` message is one reply: its text (``content``), and its calls: with
  function calling, the ``tool_calls`` (OpenAI shape, their own ids, ``arguments`` decoded
  once by section 4's rule); without it (older SWE-agent), the message's ``action`` is one
  call of the tool ``bash`` ``{"command": action}`` with the synthesised id
  ``step-<n>`` (``n`` counting the assistant messages from 1);
* a ``tool`` message answers the calls its ``tool_call_ids`` name (calls of one reply
  sharing an id by occurrence, :mod:`.callids`); a later ``user``
  message answers the synthesised call of the reply before it (the observation); one
  after a reply whose calls are answered is kept as ``x_swe_agent.message``.

The turn ends as ``info.exit_status`` says: ``submitted`` (or ``submitted (...)``)
completes it, the final call (the ``submit`` command) being the answer: it becomes a text
block of its command and ``x_swe_agent.submission {exit_status, submission?}``; any other
exit status fails it with that status as the error code (``exit_cost``, ``exit_context``,
``exit_format``, ``early_exit``...), and a trajectory without one fails ``interrupted``
with a note. Tools are external (the stubs are the recorded observations); the model is
``info.model_stats``-free: ``replay_config`` names it when it is JSON holding
``agent.model.name``; without it (older runs), the run folder does when SWE-agent named it
``<model>__<data>__<config>__t-<temperature>...`` (:func:`_run_model`); else ``""``.

Reason codes: ``import_invalid`` (not a trajectory: no ``history`` list; a malformed
message is skipped with ``import_skipped``, reason ``invalid_line``, or refused with
``strict``), ``io_error``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from ..core.errors import CaseError
from ..core.files import MAX_LOG_BYTES, read_regular
from .arguments import decode_arguments
from .callids import scope_and_report
from .common import (
    Extra,
    Ref,
    Reply,
    Result,
    Stats,
    Turn,
    content_text,
    import_error,
    imported_agent,
    stats_for,
)
from .cutjson import CUT_HINT, NotJson, read_document
from .lenient import Note

#: SWE-agent's name of a run folder: ``<model>__<data>__<config>__t-<temperature>__p-...``
_RUN_FOLDER = re.compile(r"^(?P<model>[^_].*?)__.+__t-\d")


def _run_model(path: Path) -> str:
    """The model the folder holding ``path`` names, when SWE-agent named it as it names a
    run (``gpt4__swe-bench-dev__default__t-0.00__p-0.95__c-3.00__install-1``), else ``""``."""
    m = _RUN_FOLDER.match(path.resolve().parent.name)
    return m.group("model") if m else ""


TRAJ_HINT = (
    "pass a SWE-agent trajectory (.traj: a JSON object with a `history` list); "
    "`threads-cases import auto FILE` names the formats it tries"
)


class SweAgentSource:
    """One trajectory, read and ready to map (:meth:`items`)."""

    format = "swe-agent"

    def __init__(
        self, path: str | os.PathLike[str], *, strict: bool = False, stats: Stats | None = None
    ) -> None:
        self.path = Path(path)
        self.file = str(path)
        self.strict = strict
        self.stats = stats_for(stats, strict=strict, file=str(path))
        #: the file was cut short (closed after its last whole value)
        self.cut = False
        data = read_regular(self.path, code="io_error", limit=MAX_LOG_BYTES)
        doc, self.history = self._read(data)
        info = doc.get("info")
        self.info: dict[str, Any] = info if isinstance(info, dict) else {}
        self.system = next(
            (
                content_text(m.get("content"))
                for m in self.history
                if isinstance(m, dict) and m.get("role") == "system"
            ),
            "",
        )
        self.model = self._model(doc.get("replay_config")) or _run_model(self.path)
        tools: dict[str, None] = {}
        for m in self.history:
            if isinstance(m, dict) and m.get("role") == "assistant":
                for name in self._call_names(m):
                    tools.setdefault(name, None)
        self.tools = list(tools)

    def _read(self, data: bytes) -> tuple[dict[str, Any], list[Any]]:
        """The document and its ``history``; a file cut short is closed after its last whole
        value (:mod:`.cutjson`), the history entry it stops inside dropped, with a
        ``cut_record`` warning (``--strict``: refused)."""
        try:
            read = read_document(data, "the trajectory")
        except NotJson as exc:
            raise import_error(
                exc.message, file=self.file, line=exc.line, kind=None, hint=TRAJ_HINT
            ) from None
        doc = read.value
        if not isinstance(doc, dict) or not isinstance(doc.get("history"), list):
            if read.cut is not None:  # the writer stopped before the history list
                raise import_error(
                    f"{read.message}; it stops before its `history` list, so no step of "
                    "the run can be read",
                    file=self.file,
                    line=read.line,
                    kind=None,
                    hint=CUT_HINT,
                )
            raise CaseError(
                "import_invalid",
                "not a SWE-agent trajectory: no `history` list",
                file=self.file,
                hint=TRAJ_HINT,
            )
        history: list[Any] = doc["history"]
        if read.cut is not None:
            path = read.cut.open_path
            if len(path) > 1 and path[0] == "history" and isinstance(path[1], int):
                history = history[: path[1]]  # the entry the file stops inside is partial
            self.cut = True
            self.stats.warn(
                read.line,
                "import_repaired",
                "cut_record",
                f"{read.message}; the history entry it stops inside is dropped",
                hint=CUT_HINT,
            )
        return doc, history

    @staticmethod
    def _model(config: Any) -> str:
        if isinstance(config, str):
            try:
                config = orjson.loads(config)
            except orjson.JSONDecodeError:
                return ""
        agent = config.get("agent") if isinstance(config, dict) else None
        model = agent.get("model") if isinstance(agent, dict) else None
        name = model.get("name") if isinstance(model, dict) else None
        return name if isinstance(name, str) else ""

    # ------------------------------------------------------------------ header
    @property
    def thread_id(self) -> str:
        return self.path.name.removesuffix(".traj").removesuffix(".json") or "trajectory"

    @property
    def agent(self) -> dict[str, Any]:
        agent = imported_agent("swe-agent", self.model, self.tools)
        agent["system"] = self.system
        return agent

    @property
    def metadata(self) -> dict[str, Any]:
        md: dict[str, Any] = {"source": "swe-agent", "session_id": self.thread_id}
        status = self.info.get("exit_status")
        if isinstance(status, str):
            md["exit_status"] = status
        return md

    @property
    def start_ref(self) -> Ref:
        return Ref("session", None, 1, "session")

    # ------------------------------------------------------------------ mapping
    @staticmethod
    def _call_names(m: dict[str, Any]) -> list[str]:
        """The tool names of :meth:`_calls`' blocks, without decoding any arguments."""
        calls = m.get("tool_calls")
        if isinstance(calls, list) and calls:
            out = []
            for c in calls:
                fn = c.get("function") if isinstance(c, dict) else None
                if isinstance(fn, dict) and isinstance(c.get("id"), str):
                    out.append(fn["name"] if isinstance(fn.get("name"), str) else "tool")
            return out
        action = m.get("action")
        return ["bash"] if isinstance(action, str) and action.strip() else []

    def _calls(self, m: dict[str, Any], step: int, notes: list[Note]) -> list[dict[str, Any]]:
        """The tool_use blocks of an assistant message (module docstring)."""
        calls = m.get("tool_calls")
        if isinstance(calls, list) and calls:
            out = []
            for c in calls:
                fn = c.get("function") if isinstance(c, dict) else None
                if not isinstance(fn, dict) or not isinstance(c.get("id"), str):
                    continue
                name = fn.get("name") if isinstance(fn.get("name"), str) else "tool"
                inp = decode_arguments(fn.get("arguments"), notes)
                out.append({"type": "tool_use", "id": c["id"], "name": name, "input": inp})
            return out
        action = m.get("action")
        if isinstance(action, str) and action.strip():
            block = {"type": "tool_use", "id": f"step-{step}", "name": "bash"}
            return [{**block, "input": {"command": action.strip()}}]
        return []

    def _skip(self, k: int, why: str) -> None:
        if self.strict:
            raise import_error(f"history[{k}]: {why}", file=self.file, line=None, kind=None)
        self.stats.warn(k + 1, "import_skipped", "invalid_line", f"history[{k}]: {why}")

    def items(self) -> Iterator[Turn | Extra]:
        turn: Turn | None = None
        last: Reply | None = None
        step = 0
        for k, m in enumerate(self.history):
            ref = Ref(f"h{k}", None, k + 1, "message")
            if not isinstance(m, dict) or not isinstance(m.get("role"), str):
                self._skip(k, "a history entry must be an object with a role")
                continue
            role = m["role"]
            if m.get("is_demo"):
                self.stats.skip("demonstration message")
            elif role == "system":
                self.stats.skip("system message (the agent's system text)")
            elif role == "user" and turn is None:
                turn = Turn(content_text(m.get("content")), ref)
            elif turn is None:
                self._skip(k, f"a {role} message before the task")
            elif role == "assistant":
                step += 1
                notes: list[Note] = []
                blocks = [
                    {"type": "text", "text": t} for t in [content_text(m.get("content"))] if t
                ]
                last = Reply([*blocks, *self._calls(m, step, notes)], ref)
                for n in notes:
                    self.stats.warn(k + 1, n.code, n.reason, f"history[{k}]: {n.message}")
                # calls sharing an id: answered by occurrence
                scope_and_report(last, where=f"history[{k}]", line=k + 1, stats=self.stats)
                turn.items.append(last)
            elif role == "tool" and last is not None:
                ids = m.get("tool_call_ids")
                content = content_text(m.get("content"))
                for cid in ids if isinstance(ids, list) else []:
                    last.answer(cid, Result(content, False, ref))
            elif role == "user" and last is not None and self._open(last):
                last.results[self._open(last)] = Result(content_text(m.get("content")), False, ref)
            else:
                data = {"role": role, "content": content_text(m.get("content"))}
                turn.items.append(Extra("x_swe_agent.message", data, ref, "message"))
        if turn is not None:
            self._end(turn, last)
            yield turn

    @staticmethod
    def _open(reply: Reply) -> str:
        """The id of the reply's first call without a result, or ``""``."""
        return next((b["id"] for b in reply.tool_uses() if b["id"] not in reply.results), "")

    def _end(self, turn: Turn, last: Reply | None) -> None:
        """The turn's end as ``info.exit_status`` says (module docstring)."""
        status = self.info.get("exit_status")
        if isinstance(status, str) and status.startswith("submitted") and last is not None:
            uses = last.tool_uses()
            final = uses[-1] if uses else None
            if final is not None:
                last.blocks = [b for b in last.blocks if b is not final]
                command = final["input"].get("command", final["name"])
                last.blocks.append({"type": "text", "text": str(command)})
                last.results.pop(final["id"], None)
            data: dict[str, Any] = {"exit_status": status}
            if isinstance(self.info.get("submission"), str):
                data["submission"] = self.info["submission"]
            turn.items.append(Extra("x_swe_agent.submission", data, last.ref, "submission"))
            last.stop_reason = "end_turn"
        elif isinstance(status, str) and status:
            code = status.split(" ")[0].strip("()") or "exit"
            turn.failed = (code, f"the run ended: {status}", last.ref if last else turn.ref)
        else:
            why = (
                "the trajectory is cut short before its exit status: the run stopped "
                "inside the turn"
                if self.cut
                else "the trajectory records no exit status: the run stopped inside the turn"
            )
            turn.failed = ("interrupted", why, last.ref if last else turn.ref)
            self.stats.notes.append(f"{self.file}: the turn is recorded as interrupted: {why}")
