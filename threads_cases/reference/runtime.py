"""The Python reference runtime: recording events and running one turn (spec/replay.md).

:class:`Recorder` appends canonical events to a log and keeps the reduced state current.
:func:`run_turn` is the turn loop shared by a live thread (:meth:`Thread.run_turn`) and a
replay: append ``user_message`` and ``turn_started``; then ask the model, record its reply,
run each tool call, until a reply's stop_reason is not ``tool_use`` (``turn_completed``) or
the step limit is reached. A call the recording cannot answer stops the turn with a reason
code and a ``stop_key`` and records ``turn_failed`` with that code.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..case.artifacts import ArtifactStore
from ..case.sandbox import SandboxProvider, check_path
from ..core.canonical import canonical_line
from ..core.depth import MAX_EVENT_DEPTH, depth_message, maybe_too_deep, too_deep
from ..core.errors import CaseError, pointer_join
from ..core.reducer import Reducer
from ..core.request import RequestHasher
from ..core.texts import quote
from ..core.timestamps import format_ts, parse_ts
from .agent import AgentSpec
from .branching import SharedLog
from .egress import EgressBlocked, block_egress
from .model import Model
from .sandbox import NoSuchFile
from .tool_calls import ExternalCaller, HandlerFailed, HandlerMissing, call_tool

STEP_LIMIT = 64
# the stop reasons after which a turn goes on with the next model call (spec/replay.md 3.2, 8)
_GOES_ON = frozenset(("tool_use", "pause_turn"))

# re-exported: the guard lives in egress.py, the clock format in core/timestamps.py
__all__ = ["EgressBlocked", "block_egress", "format_ts", "parse_ts"]

ACTOR = {
    "thread_started": "system",
    "user_message": "user",
    "turn_started": "system",
    "model_requested": "system",
    "model_responded": "model",
    "tool_called": "model",
    "tool_result": "tool",
    "sandbox_read": "sandbox",
    "sandbox_wrote": "sandbox",
    "artifact_added": "sandbox",
    "snapshot_taken": "system",
    "restored": "system",
    "forked": "system",
    "turn_completed": "system",
    "turn_failed": "system",
}


class Clock:
    """The recorded clock. ``Clock()`` reads the wall clock (never going backwards);
    ``Clock(start_ms, step_ms=1)`` is deterministic: each reading advances by ``step_ms``."""

    def __init__(self, start_ms: int | None = None, step_ms: int = 1) -> None:
        self._next = start_ms
        self._step = step_ms
        self._last = 0

    def now_ms(self) -> int:
        if self._next is None:
            now = max(int(time.time() * 1000), self._last + 1)
            self._last = now
            return now
        now = self._next
        self._next += self._step
        return now


class Recorder:
    """Appends canonical events to ``events`` and folds them into :attr:`state`.

    ``id_for(seq) -> event_id`` and ``clock`` decide ids and timestamps; a replay passes
    deterministic ones so that its log is byte-stable.
    """

    def __init__(
        self,
        events: list[dict[str, Any]] | SharedLog,
        reducer: Reducer,
        *,
        thread_id: str,
        id_for: Callable[[int], str],
        clock: Clock,
    ) -> None:
        self.events = events
        self.reducer = reducer
        self.thread_id = thread_id
        self.id_for = id_for
        self.clock = clock
        #: ``request_sha256`` of the state's request, kept incrementally across turns
        self.hasher = RequestHasher()
        #: called with each event just recorded (a replay's :class:`Interruption` check)
        self.after_append: Callable[[dict[str, Any]], None] | None = None

    @property
    def state(self) -> dict[str, Any]:
        return self.reducer.state

    def append(
        self, etype: str, data: dict[str, Any], *, critical: bool = False, actor: str | None = None
    ) -> dict[str, Any]:
        """Record one event. Raises ``CaseError("unsafe_value")`` (recording nothing) when
        ``data`` holds a value a log cannot hold (spec/strict-json.md 4.1), or nests so deep
        that its event would pass 248 levels (thread-log.md 5.1a)."""
        text = canonical_line(data)
        if maybe_too_deep(text, MAX_EVENT_DEPTH - 1):
            path = too_deep(data, MAX_EVENT_DEPTH, level=2)  # data is level 2 of its event
            if path is not None:
                where = pointer_join(["data", *path])
                raise CaseError("unsafe_value", depth_message(), pointer=where)
        st = self.reducer.state
        seq = 0 if st["last_seq"] is None else st["last_seq"] + 1
        epoch = st["epoch"] + 1 if etype == "restored" else st["epoch"]
        branch = data["branch_id"] if etype == "forked" else st["branch_id"]
        ev = {
            "event_id": self.id_for(seq),
            "thread_id": self.thread_id,
            "seq": seq,
            "type": etype,
            "actor_kind": actor or ACTOR.get(etype, "system"),
            "epoch": epoch,
            "branch_id": branch,
            "critical": critical,
            "ts": format_ts(self.clock.now_ms()),
            "data": data,
        }
        self.reducer.apply(ev)
        self.events.append(ev)
        if self.after_append is not None:
            self.after_append(ev)
        return ev


class Interrupted(Exception):
    """Raised by :meth:`Interruption.check` at the recorded interruption point."""


@dataclass
class Interruption:
    """The recorded end of an interrupted turn (model.json ``interruption``, spec/replay.md
    3.8): the turn ends with ``turn_failed`` ``{turn_id, error}`` right after the
    ``index``-th (from 0) event of type ``after`` of the turn."""

    after: str
    index: int
    error: dict[str, str]
    seen: int = 0

    @classmethod
    def from_json(cls, doc: dict[str, Any] | None) -> Interruption | None:
        if not doc:
            return None
        return cls(doc["after"], doc["index"], dict(doc["error"]))

    def check(self, ev: dict[str, Any]) -> None:
        if ev["type"] == self.after:
            self.seen += 1
            if self.seen == self.index + 1:
                raise Interrupted


@dataclass
class TurnOutcome:
    """How a turn ended: ``status`` is ``completed``, ``failed`` or ``stopped`` (a call the
    recording could not answer); ``stop`` is ``{code, stop_key, message}`` when stopped."""

    turn_id: str
    status: str
    events: list[dict[str, Any]] = field(default_factory=list)
    stop: dict[str, str] | None = None


class SandboxContext:
    """The :class:`~threads_cases.reference.agent.ToolContext` of a turn: sandbox operations that
    record
    ``artifact_added``, ``sandbox_read`` and ``sandbox_wrote`` events."""

    def __init__(self, rec: Recorder, sandbox: SandboxProvider, store: ArtifactStore) -> None:
        self.rec = rec
        self.sandbox = sandbox
        self.store = store

    def _artifact(self, data: bytes, media_type: str = "application/octet-stream") -> str:
        h = self.store.put(data)
        aid = "sha256:" + h
        if aid not in self.rec.state["artifacts"]:
            self.rec.append(
                "artifact_added", {"artifact_id": aid, "media_type": media_type, "size": len(data)}
            )
        return h

    def _media(self, path: str) -> str:
        return (
            "text/plain"
            if path.endswith((".txt", ".md", ".py", ".json", ".csv"))
            else "application/octet-stream"
        )

    def read(self, path: str) -> bytes:
        check_path(path)
        try:
            data = self.sandbox.read(path)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise NoSuchFile(path) from None
        h = self._artifact(data, self._media(path))
        self.rec.append(
            "sandbox_read",
            {"path": path, "sha256": h, "size": len(data), "artifact": "sha256:" + h},
        )
        return data

    def write(self, path: str, data: bytes) -> None:
        check_path(path)
        self.sandbox.write(path, data)
        h = self._artifact(data, self._media(path))
        self.rec.append(
            "sandbox_wrote",
            {"path": path, "sha256": h, "size": len(data), "artifact": "sha256:" + h},
            critical=True,
        )

    def delete(self, path: str) -> None:
        check_path(path)
        if path not in self.rec.state["sandbox"]["files"]:
            self.read(path)  # the log must have seen a file before it is deleted
        try:
            self.sandbox.delete(path)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise NoSuchFile(path) from None
        self.rec.append(
            "sandbox_wrote",
            {"path": path, "sha256": None, "size": 0, "artifact": None},
            critical=True,
        )

    def list(self, prefix: str = "") -> list[str]:
        paths = self.sandbox.list(prefix)
        known = self.rec.state["sandbox"]["files"]
        for p in paths:
            if p not in known:
                self.read(p)  # a listing observes the file: record it so a replay has it
        return paths


def _unwritable(err: CaseError, what: str, stop_key: str) -> CaseError:
    """A value that cannot enter the log stops the turn: ``unsafe_value`` at ``stop_key``."""
    if err.code != "unsafe_value":
        raise err
    where = err.location.pointer or "/"
    out = CaseError("unsafe_value", f"{what} cannot be recorded: {where}: {err.message}")
    out.stop_key = stop_key  # type: ignore[attr-defined]
    return out


class _Stopped(Exception):
    """Raised inside a turn when a call stops it; ``args[0]`` is the reason (a CaseError)."""


class _Turn:
    """One running turn (spec/replay.md 3): what its steps share, one job per method."""

    def __init__(
        self,
        rec: Recorder,
        agent: AgentSpec,
        ctx: SandboxContext,
        model: Model,
        external: ExternalCaller,
        egress: list[EgressBlocked] | None,
        refuse_missing: bool = False,
    ) -> None:
        self.rec = rec
        self.refuse_missing = refuse_missing
        self.agent = agent
        self.ctx = ctx
        self.model = model
        self.external = external
        self.egress = egress
        self.start = len(rec.events)
        self.turn_id = ""
        self.usage = {"input_tokens": 0, "output_tokens": 0}

    def begin(self, content: str | list[dict[str, Any]]) -> None:
        """Record ``user_message`` and ``turn_started``; the turn id follows the log length."""
        self.rec.append("user_message", {"content": content})
        self.turn_id = f"turn-{len(self.rec.events)}"
        self.rec.append("turn_started", {"turn_id": self.turn_id})

    def stop(self, err: CaseError) -> TurnOutcome:
        """Record ``turn_failed`` with ``err``'s code: the turn is stopped."""
        self.rec.append(
            "turn_failed",
            {"turn_id": self.turn_id, "error": {"code": err.code, "message": err.message}},
        )
        key = getattr(err, "stop_key", err.code)
        return TurnOutcome(
            self.turn_id,
            "stopped",
            self.rec.events[self.start :],
            {"code": err.code, "stop_key": key, "message": err.message},
        )

    def steps(self, step_limit: int) -> TurnOutcome:
        """Ask the model and run its tool calls until a reply ends the turn."""
        try:
            for index in range(step_limit):
                reply = self.ask_model(index)
                for block in reply["message"]["content"]:
                    if block.get("type") == "tool_use":
                        self.run_tool(block)
                if reply["stop_reason"] not in _GOES_ON:
                    return self.complete(reply["stop_reason"])
        except _Stopped as stopped:
            return self.stop(stopped.args[0])
        limit = CaseError("step_limit", f"the turn made {step_limit} model calls without finishing")
        return self.stop(limit)

    def ask_model(self, index: int) -> dict[str, Any]:
        """Record ``model_requested``, ask the model, record ``model_responded``."""
        rec = self.rec
        request = rec.hasher.request(rec.state)
        rec.append(
            "model_requested",
            {"turn_id": self.turn_id, "model": request["model"], "request_sha256": request.sha256},
        )
        try:
            reply = self.model.respond(request, index)
        except CaseError as err:
            raise _Stopped(err) from None
        try:
            rec.append(
                "model_responded",
                {
                    "turn_id": self.turn_id,
                    "message": reply["message"],
                    "stop_reason": reply["stop_reason"],
                    "usage": reply["usage"],
                },
            )
        except CaseError as err:
            raise _Stopped(_unwritable(err, f"model reply {index}", f"model:{index}")) from None
        self.usage["input_tokens"] += reply["usage"]["input_tokens"]
        self.usage["output_tokens"] += reply["usage"]["output_tokens"]
        return reply

    def run_tool(self, block: dict[str, Any]) -> None:
        """Record ``tool_called``, run the tool, record ``tool_result`` (spec/replay.md 3.3)."""
        tool = self.agent.tool(block["name"])
        kind = tool.kind if tool else "external"
        effect = tool.effect if tool else "pure"
        self.rec.append(
            "tool_called",
            {
                "turn_id": self.turn_id,
                "tool_use_id": block["id"],
                "name": block["name"],
                "input": block["input"],
                "kind": kind,
                "effect": effect,
            },
            critical=effect == "write",
        )
        try:
            result = call_tool(tool, block, self.ctx, self.external, self.refuse_missing)
        except (HandlerMissing, HandlerFailed):
            raise  # not a stop: the replay cannot run here, or the agent's code broke (8.1, 8.4)
        except CaseError as err:
            raise _Stopped(err) from None
        if self.egress:  # a tool tried the network, even if it swallowed the error
            raise _Stopped(self.egress[0])
        try:
            self.rec.append(
                "tool_result",
                {
                    "turn_id": self.turn_id,
                    "tool_use_id": block["id"],
                    "name": block["name"],
                    "content": result.content,
                    "is_error": result.is_error,
                },
                critical=kind == "external",
            )
        except CaseError as err:
            what = f"the result of tool {quote(block['name'])}"
            raise _Stopped(_unwritable(err, what, f"tool:{block['name']}")) from None

    def complete(self, stop_reason: str) -> TurnOutcome:
        """Record ``turn_completed`` with the turn's summed usage."""
        self.rec.append(
            "turn_completed",
            {"turn_id": self.turn_id, "stop_reason": stop_reason, "usage": self.usage},
        )
        return TurnOutcome(self.turn_id, "completed", self.rec.events[self.start :])


def run_turn(
    rec: Recorder,
    agent: AgentSpec,
    sandbox: SandboxProvider,
    store: ArtifactStore,
    model: Model,
    content: str | list[dict[str, Any]],
    *,
    external: ExternalCaller,
    step_limit: int = STEP_LIMIT,
    egress: list[EgressBlocked] | None = None,
    interruption: Interruption | None = None,
    refuse_missing_handlers: bool = False,
) -> TurnOutcome:
    """Run one turn (spec/replay.md, section 3) and return how it ended.

    With ``interruption`` the turn ends (``status="failed"``) with the recorded
    ``turn_failed`` at the recorded point, as the recording did (spec/replay.md 3.8).

    Stops (``status="stopped"``) on ``model_exhausted``, ``missing_stub`` or
    ``egress_blocked``, and on ``step_limit`` after ``step_limit`` model calls; each stop
    records ``turn_failed`` with the reason code. ``egress`` is the list yielded by
    :func:`block_egress`: an attempt recorded there stops the turn after the tool returns.
    With ``refuse_missing_handlers`` (a replay) a call of a sandbox tool without a handler
    raises :class:`HandlerMissing` instead of giving an error result.
    """
    ctx = SandboxContext(rec, sandbox, store)
    turn = _Turn(rec, agent, ctx, model, external, egress, refuse_missing_handlers)
    turn.begin(content)
    if interruption is None:
        return turn.steps(step_limit)
    rec.after_append = interruption.check
    try:
        if interruption.after == "turn_started" and interruption.index == 0:
            raise Interrupted
        return turn.steps(step_limit)
    except Interrupted:
        rec.after_append = None
        rec.append("turn_failed", {"turn_id": turn.turn_id, "error": dict(interruption.error)})
        return TurnOutcome(turn.turn_id, "failed", rec.events[turn.start :])
    finally:
        rec.after_append = None
