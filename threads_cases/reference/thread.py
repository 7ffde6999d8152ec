"""The thread handle: a log being recorded or opened, its state, forks, snapshots, turns and
saved cases (Python twin of the TypeScript ``Thread``).

::

    thread = Thread.create(agent=AgentSpec("notes", "claude-x", "Be brief."),
                           sandbox=FakeSandbox({"notes.txt": "hello"}))
    thread.run_turn("Read notes.txt", ScriptedModel([tool_reply(("tu1", "read_file",
                    {"path": "notes.txt"})), text_reply("It says hello.")]))
    result = thread.save_case("reads-notes", at=thread.events[0]["event_id"],
                              expect=CaseExpectation(must=[{"type": "turn_completed"}]),
                              dir="cases")
"""

from __future__ import annotations

import copy
import os
import re
import secrets
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any, cast

from ..case.artifacts import ArtifactStore
from ..case.directory import DEFAULT_DIALECTS, CaseExpectation, is_hex64
from ..case.loader import artifact_refs
from ..case.sandbox import SandboxProvider
from ..case.save import SaveResult, save_case
from ..core.atomic import replacing
from ..core.dialects import CANONICAL
from ..core.errors import CaseError
from ..core.events import Event
from ..core.files import MAX_CASE_BYTES, read_regular
from ..core.frozen import EventsView
from ..core.log import check_events, dump_log, read_log
from ..core.reducer import Reducer
from ..core.shapes import JsonObject, State
from ..core.texts import quote
from .agent import AgentSpec, ToolOutput, ToolResult
from .agent_ref import AgentRef
from .branching import IdIndex, SharedLog
from .model import Model
from .runtime import STEP_LIMIT, Clock, Recorder, TurnOutcome, parse_ts, run_turn
from .sandbox import FakeSandbox

_SAFE = re.compile(r"[^A-Za-z0-9._-]")


class Thread:
    """A thread: its canonical ``events``, reduced ``state``, ``sandbox`` and artifacts.

    Build one with :meth:`create` or :meth:`open`; do not call the constructor directly.
    """

    def __init__(
        self,
        events: list[JsonObject] | SharedLog,
        *,
        sandbox: SandboxProvider,
        artifacts: ArtifactStore,
        thread_id: str,
        clock: Clock,
        agent: AgentSpec | None = None,
        reducer: Reducer | None = None,
        ids: IdIndex | None = None,
    ) -> None:
        """``reducer`` and ``ids`` (a fork's, already in step with ``events``) spare the
        reduction of the log and the index of its ids."""
        self._events = events if isinstance(events, SharedLog) else SharedLog(events)
        self._frozen: list[dict[str, Any]] = []  # read-only copies, see events
        if reducer is None:
            reducer = Reducer()
            for ev in self._events:
                reducer.apply(ev)
        self._reducer = reducer
        self.sandbox = sandbox
        self.artifacts = artifacts
        self.thread_id = thread_id
        self.clock = clock
        self._agent = agent
        self._sandbox_snapshots: dict[str, Any] = {}
        if ids is None:
            ids = IdIndex({e["event_id"]: i for i, e in enumerate(self._events)})
        self._ids = ids
        self._next_branch: str | None = None  # the branch a forked event being recorded opens
        # a weak reference back: no cycle, so a dropped fork is freed at once (not by the
        # cyclic collector, whose full passes walk every live event of every thread)
        event_id = weakref.WeakMethod(self._event_id)
        self._recorder = Recorder(
            self._events,
            self._reducer,
            thread_id=thread_id,
            id_for=lambda seq: event_id()(seq),  # type: ignore[misc]
            clock=clock,
        )

    # ------------------------------------------------------------------ construction
    @classmethod
    def create(
        cls,
        *,
        agent: AgentSpec,
        sandbox: SandboxProvider | None = None,
        thread_id: str | None = None,
        clock: Clock | None = None,
        metadata: JsonObject | None = None,
    ) -> Thread:
        """Start a new thread: records ``thread_started`` with ``agent.to_json()``."""
        tid = thread_id or f"thread-{secrets.token_hex(6)}"
        t = cls(
            [],
            sandbox=sandbox or FakeSandbox(),
            artifacts=ArtifactStore(),
            thread_id=tid,
            clock=clock or Clock(),
            agent=agent,
        )
        t._recorder.append("thread_started", {"agent": agent.to_json(), "metadata": metadata or {}})
        return t

    @classmethod
    def open(
        cls,
        log: str | os.PathLike[str] | IO[bytes] | Sequence[Event] | Sequence[JsonObject],
        *,
        sandbox: SandboxProvider | None = None,
        artifacts: str | os.PathLike[str] | ArtifactStore | dict[str, bytes] | None = None,
        dialect: str = CANONICAL,
        handlers: dict[str, Callable[..., ToolOutput]] | None = None,
    ) -> Thread:
        """Open an existing log (a path, a binary stream or a list of envelopes in ``dialect``:
        :data:`threads_cases.Event` in the canonical one).

        ``artifacts`` is a folder of files named by sha256 hex, a store or a dict. Without a
        ``sandbox``, a :class:`FakeSandbox` is rebuilt from the state's files whose bytes are
        in the artifacts. Raises ``CaseError("log_invalid")`` for an invalid log.
        """
        if isinstance(log, (str, os.PathLike)) or hasattr(log, "readline"):
            events = cast(list[dict[str, Any]], list(read_log(log, dialect=dialect)))  # type: ignore[arg-type]
        else:
            given = cast("Sequence[dict[str, Any]]", log)
            events = list(check_events(copy.deepcopy(list(given)), dialect=dialect))
        store = _artifact_store(artifacts, _referenced_artifacts(events))
        reducer = Reducer()
        for i, ev in enumerate(events):
            try:
                reducer.apply(ev)
            except CaseError as exc:
                raise exc.at(file=f"event {i}") from None
        state = reducer.state
        if sandbox is None:
            files = {}
            for path, sha in state["sandbox"]["files"].items():
                data = store.get(sha)
                if data is not None:
                    files[path] = data
            sandbox = FakeSandbox(files)  # type: ignore[arg-type]
        last_ms = parse_ts(events[-1]["ts"]) if events else None
        agent = AgentSpec.from_json(state["agent"], handlers) if state["agent"] else None
        return cls(
            events,
            sandbox=sandbox,
            artifacts=store,
            thread_id=state["thread_id"] or f"thread-{secrets.token_hex(6)}",
            clock=Clock() if last_ms is None else _AfterClock(last_ms),
            agent=agent,
        )

    # ------------------------------------------------------------------ views
    @property
    def events(self) -> Sequence[Event]:
        """The canonical envelopes (:data:`threads_cases.Event`), in log order, as they are
        now: a read-only sequence of read-only dicts (``TypeError`` on a change;
        ``copy.deepcopy`` gives mutable ones). Getting it costs nothing; each event is frozen
        on first access."""
        return cast("Sequence[Event]", EventsView(self._events, self._frozen, len(self._events)))

    @property
    def state(self) -> State:
        """A copy of the canonical state the log reduces to (spec/reducer.md)."""
        return cast(State, copy.deepcopy(self._reducer.state))

    @property
    def agent(self) -> AgentSpec | None:
        return self._agent

    def _event_id(self, seq: int) -> str:
        """``<branch>.<seq>`` (the new branch for a ``forked`` event), with ``.2``, ``.3``...
        on a clash: deterministic, so a recording with a fixed clock is byte-stable."""
        branch = _SAFE.sub("-", self._next_branch or self._reducer.state["branch_id"])[:40]
        base = f"{branch}.{seq}"
        eid = base
        n = 1
        while eid in self._ids:
            n += 1
            eid = f"{base}.{n}"
        self._ids.add(eid, len(self._events))
        return eid

    # ------------------------------------------------------------------ operations
    def fork(self, at: str, *, branch_id: str | None = None) -> Thread:
        """A new thread handle on a branch: the log up to ``at``, then a ``forked`` event.

        The new handle gets its own copy of an in-memory sandbox as it was at ``at``: files
        the log wrote (or first read) after ``at`` are put back from the artifacts, files
        first written after ``at`` are left out; any other sandbox is shared. Raises
        ``CaseError("event_not_found")`` when ``at`` is not in the log.

        Cost (spec/reducer.md 6.5): the fork shares the log up to ``at``, its ids and, at the
        last event, the reduced state with this thread (each side copies a shared container
        on its first change to it), so forking at the end of the log costs the same for any
        length; forking at an earlier event reduces the log up to it again, without copies.
        """
        idx = self._ids.position(at)
        if idx is None or idx >= len(self._events) or self._events[idx]["event_id"] != at:
            raise CaseError("event_not_found", f"event {quote(at)} is not in the log")
        new_branch = branch_id or f"fork-{secrets.token_hex(3)}"
        if _SAFE.search(new_branch):
            raise CaseError(
                "invalid_request",
                f"branch_id {quote(new_branch)} may hold only ASCII letters, digits, "
                "'.', '_' or '-'",
            )
        events = self._events.branch(idx + 1)
        if idx + 1 == len(self._events):
            reducer = self._reducer.branch()
        else:
            reducer = Reducer(copy_data=False)  # the events are shared, never changed
            for ev in events:
                reducer.apply(ev)
        if isinstance(self.sandbox, FakeSandbox):
            sandbox: SandboxProvider = FakeSandbox(self._files_at(idx, reducer.state))
        else:
            sandbox = self.sandbox
        child = Thread(
            events,
            sandbox=sandbox,
            artifacts=ArtifactStore(self.artifacts.blobs),
            thread_id=self.thread_id,
            clock=self.clock,
            agent=self._agent,
            reducer=reducer,
            ids=self._ids.branch(len(self._events), idx + 1),
        )
        if idx + 1 == len(self._events):
            child._recorder.hasher = self._recorder.hasher.copy()
        child._next_branch = new_branch
        try:
            child._recorder.append("forked", {"from_event_id": at, "branch_id": new_branch})
        finally:
            child._next_branch = None
        return child

    def _files_at(self, idx: int, then: dict[str, Any]) -> dict[str, bytes | str]:
        """The in-memory sandbox's files as of event ``idx`` (``then`` is the state there):
        the current files with every path the log touched after ``idx`` put back (from the
        artifacts) as it was then. A path first written after ``idx`` is left out."""
        files: dict[str, bytes | str] = dict(self.sandbox.files)  # type: ignore[attr-defined]
        known = then["sandbox"]["files"]
        first: dict[str, dict[str, Any]] = {}
        for ev in self._events[idx + 1 :]:
            if ev["type"] in ("sandbox_read", "sandbox_wrote"):
                first.setdefault(ev["data"]["path"], ev)
        for path, ev in first.items():
            if path in known:
                sha: str | None = known[path]
            elif ev["type"] == "sandbox_read":
                sha = ev["data"]["sha256"]  # it was there, unseen, at the fork point
            else:
                sha = None  # created after the fork point
            data = self.artifacts.get(sha) if sha else None
            if data is not None:
                files[path] = data
            elif sha is None:
                files.pop(path, None)
        return files

    def snapshot(self) -> str:
        """Record ``snapshot_taken`` and keep the sandbox's files; returns the snapshot_id."""
        sid = f"snap-{len(self._reducer.state['snapshots']) + 1}"
        while self._reducer.has_snapshot(sid):
            sid += "x"
        self._sandbox_snapshots[sid] = self.sandbox.snapshot()
        self._recorder.append("snapshot_taken", {"snapshot_id": sid})
        return sid

    def restore(self, snapshot_id: str) -> None:
        """Record ``restored``: the state and the sandbox return to right after the snapshot.

        Raises ``CaseError("invalid_request")`` for an unknown snapshot_id.
        """
        if not self._reducer.has_snapshot(snapshot_id):
            raise CaseError("invalid_request", f"unknown snapshot_id {quote(snapshot_id)}")
        self._recorder.append("restored", {"snapshot_id": snapshot_id})
        token = self._sandbox_snapshots.get(snapshot_id)
        if token is not None:
            self.sandbox.restore(token)
        else:
            files = {}
            for path, sha in self._reducer.state["sandbox"]["files"].items():
                data = self.artifacts.get(sha)
                if data is not None:
                    files[path] = data
            self.sandbox.restore(files)

    def run_turn(
        self,
        text: str | list[JsonObject],
        model: Model,
        *,
        step_limit: int = STEP_LIMIT,
    ) -> TurnOutcome:
        """Run one live turn with ``model`` and record every event (spec/replay.md, section 3).

        Sandbox tools run against the thread's sandbox; external tools call their handler
        (a missing handler gives a tool_result with is_error true). Returns the
        :class:`~threads_cases.reference.runtime.TurnOutcome`.
        """
        if self._agent is None:
            raise CaseError("invalid_request", "the thread has no agent (no thread_started)")
        agent = self._agent

        def external(name: str, inp: dict[str, Any]) -> ToolResult:
            tool = agent.tool(name)
            if tool is None or tool.handler is None:
                return ToolResult(f"no handler for external tool {quote(name)}", is_error=True)
            out = tool.handler(inp)
            return out if isinstance(out, ToolResult) else ToolResult(out)

        return run_turn(
            self._recorder,
            agent,
            self.sandbox,
            self.artifacts,
            model,
            text,
            external=external,
            step_limit=step_limit,
        )

    def save_case(
        self,
        name: str,
        *,
        expect: CaseExpectation | JsonObject | None = None,
        at: str,
        dir: str | os.PathLike[str],
        external_effects: str = "stub",
        overwrite: bool = False,
        dialects: Sequence[str] = DEFAULT_DIALECTS,
        secrets: str = "refuse",
        verify: bool = True,
        sandbox_dir: str | os.PathLike[str] | None = None,
        agent: AgentSpec | AgentRef | str | None = None,
        draft: bool | None = None,
    ) -> SaveResult:
        """Save the turn after ``at`` as a case directory ``dir/name``.

        See :func:`threads_cases.case.save.save_case` (``verify`` replays the case before it
        is written, with ``agent`` (an ``AgentSpec`` or a ``"module:attribute"`` reference),
        by default this thread's own agent, so custom sandbox tools run their handlers;
        ``sandbox_dir`` supplies sandbox bytes the log knows by hash only; without matchers in
        ``expect`` they are drafted from the recorded turn, as the command line drafts them,
        and ``warnings`` says so: ``draft=False`` saves none);
        returns a :class:`SaveResult` and never raises for a refusal. ``dialects`` are the
        dialects the case is saved in (case.json ``dialects``).
        """
        return save_case(
            self._events,
            sandbox=self.sandbox,
            store=self.artifacts,
            name=name,
            expect=expect,
            at=at,
            dir=dir,
            external_effects=external_effects,
            overwrite=overwrite,
            dialects=dialects,
            secrets=secrets,
            verify=verify,
            sandbox_dir=sandbox_dir,
            agent=self._agent if agent is None else agent,
            draft=draft,
        )

    def write_log(self, path: str | os.PathLike[str], *, dialect: str = CANONICAL) -> None:
        """Write the log canonically to ``path`` in ``dialect``, line by line into a sibling
        file moved into place: an event canonical JSON cannot hold (``unsafe_value``) leaves
        ``path`` as it was."""
        with replacing(Path(path)) as fh:  # a rewrite keeps the log's mode
            dump_log(self._events, fh.write, dialect=dialect)

    def write_artifacts(self, directory: str | os.PathLike[str]) -> None:
        """Write every artifact's bytes to ``directory/<sha256 hex>``."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        for sha, data in sorted(self.artifacts.blobs.items()):
            (d / sha).write_bytes(data)


class _AfterClock(Clock):
    """A wall clock that never reads earlier than the last event of an opened log."""

    def __init__(self, last_ms: int) -> None:
        super().__init__()
        self._last = last_ms


def _referenced_artifacts(events: list[dict[str, Any]]) -> set[str]:
    """The sha256 hex of every artifact a log refers to (:func:`artifact_refs`) and of every
    file a sandbox event names, whose bytes rebuild an in-memory sandbox."""
    out = {aid.removeprefix("sha256:") for _, _, aid in artifact_refs(events)}
    out.update(
        ev["data"]["sha256"]
        for ev in events
        if ev["type"] in ("sandbox_read", "sandbox_wrote") and ev["data"].get("sha256")
    )
    return out


def _artifact_store(
    artifacts: str | os.PathLike[str] | ArtifactStore | dict[str, bytes] | None,
    wanted: set[str],
) -> ArtifactStore:
    """The artifact store of an opened log. From a folder, only the files the log refers to
    are read (``wanted``), each within the case size limit (``case_too_large``); a special
    file is ``invalid_request`` (spec/case-format.md, "Reading files")."""
    if artifacts is None:
        return ArtifactStore()
    if isinstance(artifacts, ArtifactStore):
        return artifacts
    if isinstance(artifacts, dict):
        return ArtifactStore(artifacts)
    d = Path(artifacts)
    if not d.is_dir():
        raise CaseError("invalid_request", f"artifacts folder {d} does not exist")
    blobs = {}
    for name in sorted(wanted):
        p = d / name
        if is_hex64(name) and os.path.lexists(p):
            blobs[name] = read_regular(
                p, code="invalid_request", limit=MAX_CASE_BYTES, limit_code="case_too_large"
            )
    return ArtifactStore(blobs)
