"""The reducer: the state a thread log reduces to (spec/reducer.md).

``reduce(events) -> state`` is a pure streaming fold over canonical envelopes. The log itself
is never held. Each event costs time proportional to its own size (turn and snapshot ids are
checked in sets), and a ``snapshot_taken`` shares the state's messages and turns with the live
state instead of copying them (spec/reducer.md, "Cost"): messages are never changed in place
(a tool result merged into the last message replaces that message), so a snapshot only keeps
how many messages and turns it saw, the last message and small copies of the rest.

State (canonical keys; the ``threads-ts`` dialect renames the top-level ones)::

    {"thread_id": str|null, "branch_id": str, "epoch": int, "last_seq": int|null,
     "last_event_id": str|null, "status": "idle"|"in_turn"|"failed",
     "current_turn": str|null,
     "turns": [{"turn_id", "status": "completed"|"failed", "stop_reason", "error"}],
     "agent": {name, model, system, tools}|null,
     "messages": [{"role": "user"|"assistant", "content": str|[block]}],
     "pending_tool_calls": [tool_use_id], "sandbox": {"files": {path: sha256}},
     "artifacts": {artifact_id: {"media_type", "size"}},
     "usage": {"input_tokens", "output_tokens"}, "snapshots": [snapshot_id]}

Every rule violation raises ``CaseError("log_invalid")`` with the JSON pointer of the
offending field and the event's seq in the message. :meth:`Reducer.apply` checks before it
changes anything, so a refused event leaves the state as it was.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any, cast

import orjson

from .canonical import MAX_SAFE_INTEGER
from .errors import CaseError
from .shapes import JsonObject, State

#: State keys that ``restored`` brings back from the snapshot (spec/reducer.md, "restored").
RESTORED_KEYS = (
    "status",
    "current_turn",
    "turns",
    "agent",
    "messages",
    "pending_tool_calls",
    "sandbox",
    "artifacts",
    "usage",
)


class _Saved:
    """What ``snapshot_taken`` keeps: shared lists with their lengths, the last message (the
    only slot a later event may replace), and the small mutable parts, shared until the
    reducer's next change to them (copy on write)."""

    __slots__ = (
        "agent",
        "artifacts",
        "current_turn",
        "files",
        "last_message",
        "messages",
        "n_messages",
        "n_turns",
        "pending",
        "status",
        "turns",
        "usage",
    )

    def __init__(self, state: dict[str, Any]) -> None:
        self.status = state["status"]
        self.current_turn = state["current_turn"]
        self.turns: list[dict[str, Any]] = state["turns"]
        self.n_turns = len(self.turns)
        self.agent = state["agent"]
        self.messages: list[dict[str, Any]] = state["messages"]
        self.n_messages = len(self.messages)
        self.last_message = self.messages[-1] if self.messages else None
        # shared, not copied: the reducer copies them before its next change (_unshare)
        self.pending: list[str] = state["pending_tool_calls"]
        self.files: dict[str, str] = state["sandbox"]["files"]
        self.artifacts: dict[str, Any] = state["artifacts"]
        self.usage: dict[str, int] = state["usage"]

    def restore_into(self, state: dict[str, Any]) -> None:
        """Put the saved parts back as fresh containers; the saved ones stay as they were."""
        messages = self.messages[: self.n_messages]
        if messages:
            messages[-1] = self.last_message  # type: ignore[assignment]
        state["status"] = self.status
        state["current_turn"] = self.current_turn
        state["turns"] = self.turns[: self.n_turns]
        state["agent"] = self.agent
        state["messages"] = messages
        state["pending_tool_calls"] = list(self.pending)
        state["sandbox"] = {"files": dict(self.files)}
        state["artifacts"] = dict(self.artifacts)
        state["usage"] = dict(self.usage)


#: Event types that change a container :meth:`Reducer.branch` shares.
_CHANGES_BORROWED = frozenset(
    {
        "user_message",
        "model_responded",
        "tool_result",
        "turn_completed",
        "turn_failed",
        "snapshot_taken",
        "restored",
    }
)


def initial_state() -> State:
    """The state of an empty log (:class:`threads_cases.State`)."""
    return {
        "thread_id": None,
        "branch_id": "main",
        "epoch": 0,
        "last_seq": None,
        "last_event_id": None,
        "status": "idle",
        "current_turn": None,
        "turns": [],
        "agent": None,
        "messages": [],
        "pending_tool_calls": [],
        "sandbox": {"files": {}},
        "artifacts": {},
        "usage": {"input_tokens": 0, "output_tokens": 0},
        "snapshots": [],
    }


def _identity(value: Any) -> Any:
    return value


def _fail(event: dict[str, Any], message: str, pointer: str = "") -> CaseError:
    return CaseError("log_invalid", f"seq {event.get('seq')}: {message}", pointer=pointer)


class Reducer:
    """A streaming reducer. Feed canonical envelopes to :meth:`apply`; read :attr:`state`.

    ``Reducer(state)`` resumes from a state produced earlier (for example a case's expected
    state); saved snapshot states are then unknown, so restoring a snapshot taken before the
    resume point raises ``log_invalid``.
    """

    def __init__(
        self, state: State | None = None, *, copy_data: bool = True, freeze: bool = False
    ) -> None:
        start = copy.deepcopy(state) if state else initial_state()
        #: ``freeze``: each message but the last is held as its compact JSON text (``bytes``,
        #: orjson's writing of it) from the moment the next one is added, for a caller that
        #: only writes the state (about a fifth of the memory of the Python values)
        self._freeze = freeze
        self.state: dict[str, Any] = cast(dict[str, Any], start)
        # Values taken from events are copied unless the caller hands over fresh objects
        # (the log reader does), so later changes to a caller's events cannot leak in.
        self._copy: Any = copy.deepcopy if copy_data else _identity
        self._saved: dict[str, _Saved] = {}
        self._shared = False  # pending, files, artifacts, usage are held by a snapshot
        self._turn_ids = {t["turn_id"] for t in self.state["turns"]}
        self._snapshot_ids = set(self.state["snapshots"])
        # Started means "thread_started was applied", which is exactly "agent is not null"
        # (thread_started always sets an agent object and nothing clears it). Looking at
        # last_seq as well would wrongly count a prefix of x_ events as a start.
        self._started = self.state["agent"] is not None
        self._borrowed = False  # messages, turns, snapshots and the id sets belong to a branch

    def branch(self) -> Reducer:
        """A reducer in the same state that goes its own way from here (a fork's reducer).

        Costs the same whatever the log's length: the two share every container until one of
        them changes it, and the first change copies it (the lists' items, which are never
        changed in place, stay shared).
        """
        child = Reducer.__new__(Reducer)
        child.state = dict(self.state)
        child._copy = self._copy
        child._freeze = self._freeze
        child._saved = self._saved
        child._turn_ids = self._turn_ids
        child._snapshot_ids = self._snapshot_ids
        child._started = self._started
        child._shared = self._shared = True
        child._borrowed = self._borrowed = True
        return child

    def _own(self) -> None:
        """Copy the containers a :meth:`branch` shares, before changing them."""
        if self._borrowed:
            st = self.state
            for key in ("messages", "turns", "snapshots"):
                st[key] = list(st[key])
            self._saved = dict(self._saved)
            self._turn_ids = set(self._turn_ids)
            self._snapshot_ids = set(self._snapshot_ids)
            self._borrowed = False
        self._unshare()

    def _unshare(self) -> None:
        """Copy the small mutable parts a snapshot shares, before changing them."""
        if self._shared:
            st = self.state
            st["pending_tool_calls"] = list(st["pending_tool_calls"])
            st["sandbox"] = {"files": dict(st["sandbox"]["files"])}
            st["artifacts"] = dict(st["artifacts"])
            st["usage"] = dict(st["usage"])
            self._shared = False

    # ------------------------------------------------------------------ apply
    def has_snapshot(self, snapshot_id: str) -> bool:
        """True when ``snapshot_id`` was taken (a set lookup, not a scan of the snapshots)."""
        return snapshot_id in self._snapshot_ids

    def apply(self, ev: JsonObject) -> None:
        """Fold one canonical envelope into the state (spec/reducer.md, section 3).

        Raises ``CaseError("log_invalid")`` for a broken rule; the state is then unchanged.
        """
        st = self.state
        # the envelope rules first (seq, thread_id here, epoch and branch_id in apply_read)
        last_seq = st["last_seq"]
        expected_seq = 0 if last_seq is None else last_seq + 1
        if ev["seq"] != expected_seq:
            raise _fail(ev, f"seq gap: expected seq {expected_seq}", "/seq")
        thread_id = st["thread_id"]
        if thread_id is not None and ev["thread_id"] != thread_id:
            raise _fail(
                ev, f"thread_id {ev['thread_id']!r} differs from {thread_id!r}", "/thread_id"
            )
        self.apply_read(ev)

    def apply_read(self, ev: JsonObject) -> None:
        """:meth:`apply` of an envelope whose seq and thread_id the log reader checked (seq
        0, 1, 2, ... from this reducer's start, one thread_id: a fresh reducer fed in the
        reader's order); every other rule as :meth:`apply`, the same refusals."""
        st = self.state
        etype: str = ev["type"]
        want_epoch = st["epoch"] + 1 if etype == "restored" else st["epoch"]
        if ev["epoch"] != want_epoch:
            raise _fail(ev, f"epoch {ev['epoch']} where {want_epoch} is expected", "/epoch")
        if etype == "forked":
            if ev["branch_id"] != ev["data"]["branch_id"]:
                raise _fail(ev, "a forked event carries its new branch_id", "/branch_id")
        elif ev["branch_id"] != st["branch_id"]:
            raise _fail(
                ev, f"branch_id {ev['branch_id']!r} differs from {st['branch_id']!r}", "/branch_id"
            )
        handler = _HANDLERS.get(etype)
        if handler is not None or not etype.startswith("x_"):
            if not self._started and etype != "thread_started":
                raise _fail(ev, f"the first event must be thread_started, not {etype}", "/type")
            if handler is None:
                handler = getattr(Reducer, "_on_" + etype)  # not a type: AttributeError
            if self._borrowed and etype in _CHANGES_BORROWED:
                self._own()  # equal copies: a refused event still leaves the state as it was
            handler(self, ev, ev["data"])
        st["thread_id"] = ev["thread_id"]
        st["last_seq"] = ev["seq"]
        st["last_event_id"] = ev["event_id"]

    def _in_turn(self, ev: dict[str, Any], data: dict[str, Any]) -> None:
        """Raise for an event of a turn (``data.turn_id``) that is not the open turn's (its
        callers look first: a call an event fewer)."""
        st = self.state
        if st["status"] != "in_turn":
            why = (
                "after turn_failed without a new turn"
                if st["status"] == "failed"
                else "outside a turn"
            )
            raise _fail(ev, f"{ev['type']} {why}", "/type")
        if data["turn_id"] != st["current_turn"]:
            raise _fail(
                ev,
                f"turn_id {data['turn_id']!r} is not the current turn {st['current_turn']!r}",
                "/data/turn_id",
            )

    def _add_message(self, message: dict[str, Any]) -> None:
        """Append ``message``; with ``freeze``, the message before it becomes its JSON text
        (the last one stays a value: a tool result may still merge into it)."""
        msgs = self.state["messages"]
        if self._freeze and msgs and type(msgs[-1]) is dict:
            # copied to a bytes of its own length: orjson's own result keeps the whole
            # buffer it wrote into allocated (4x the memory on a log of one long thread)
            msgs[-1] = bytes(memoryview(orjson.dumps(msgs[-1])))
        msgs.append(message)

    def _on_thread_started(self, ev: dict[str, Any], data: dict[str, Any]) -> None:
        if self._started:
            raise _fail(ev, "a second thread_started", "/type")
        self._started = True
        self.state["agent"] = self._copy(data["agent"])

    def _on_user_message(self, ev: dict[str, Any], data: dict[str, Any]) -> None:
        if self.state["status"] == "in_turn":
            raise _fail(ev, "user_message during a turn", "/type")
        self._add_message({"role": "user", "content": self._copy(data["content"])})

    def _on_turn_started(self, ev: dict[str, Any], data: dict[str, Any]) -> None:
        st = self.state
        if st["status"] == "in_turn":
            raise _fail(ev, f"turn_started while turn {st['current_turn']!r} is open", "/type")
        if data["turn_id"] in self._turn_ids:
            raise _fail(ev, f"turn_id {data['turn_id']!r} was used before", "/data/turn_id")
        st["status"] = "in_turn"
        st["current_turn"] = data["turn_id"]

    def _on_model_requested(self, ev: dict[str, Any], data: dict[str, Any]) -> None:
        if self.state["status"] != "in_turn" or data["turn_id"] != self.state["current_turn"]:
            self._in_turn(ev, data)  # raises: the event is not of the open turn

    def _on_model_responded(self, ev: dict[str, Any], data: dict[str, Any]) -> None:
        if self.state["status"] != "in_turn" or data["turn_id"] != self.state["current_turn"]:
            self._in_turn(ev, data)  # raises: the event is not of the open turn
        st = self.state
        totals = {}
        for key in ("input_tokens", "output_tokens"):
            totals[key] = st["usage"][key] + data["usage"][key]
            if totals[key] > MAX_SAFE_INTEGER:
                message = f"usage.{key} would exceed 2^53-1 ({MAX_SAFE_INTEGER})"
                raise _fail(ev, message, f"/data/usage/{key}")
        self._unshare()
        self._add_message({"role": "assistant", "content": self._copy(data["message"]["content"])})
        st["usage"].update(totals)

    def _on_tool_called(self, ev: dict[str, Any], data: dict[str, Any]) -> None:
        if self.state["status"] != "in_turn" or data["turn_id"] != self.state["current_turn"]:
            self._in_turn(ev, data)  # raises: the event is not of the open turn
        if data["tool_use_id"] in self.state["pending_tool_calls"]:
            raise _fail(
                ev, f"tool_use_id {data['tool_use_id']!r} is already pending", "/data/tool_use_id"
            )
        self._unshare()
        self.state["pending_tool_calls"].append(data["tool_use_id"])

    def _on_tool_result(self, ev: dict[str, Any], data: dict[str, Any]) -> None:
        if self.state["status"] != "in_turn" or data["turn_id"] != self.state["current_turn"]:
            self._in_turn(ev, data)  # raises: the event is not of the open turn
        st = self.state
        if data["tool_use_id"] not in st["pending_tool_calls"]:
            raise _fail(
                ev, f"tool_result with no call: {data['tool_use_id']!r}", "/data/tool_use_id"
            )
        self._unshare()
        st["pending_tool_calls"].remove(data["tool_use_id"])
        block = {
            "type": "tool_result",
            "tool_use_id": data["tool_use_id"],
            "content": self._copy(data["content"]),
            "is_error": data["is_error"],
        }
        msgs = st["messages"]
        last = msgs[-1] if msgs else None
        if (
            last is not None
            and last["role"] == "user"
            and isinstance(last["content"], list)
            and last["content"]
            and all(b.get("type") == "tool_result" for b in last["content"])
        ):
            # replaced, not extended in place: a snapshot may share the old message
            msgs[-1] = {"role": "user", "content": [*last["content"], block]}
        else:
            self._add_message({"role": "user", "content": [block]})

    def _on_sandbox_read(self, ev: dict[str, Any], data: dict[str, Any]) -> None:
        self._check_artifact(ev, data)
        self._unshare()
        self.state["sandbox"]["files"][data["path"]] = data["sha256"]

    def _on_sandbox_wrote(self, ev: dict[str, Any], data: dict[str, Any]) -> None:
        self._unshare()
        files = self.state["sandbox"]["files"]
        if data["sha256"] is None:
            if data["artifact"] is not None or data["size"] != 0:
                raise _fail(ev, "a deletion (sha256 null) has size 0 and no artifact", "/data")
            if data["path"] not in files:
                raise _fail(ev, f"deleting {data['path']!r}, which the log never saw", "/data/path")
            del files[data["path"]]
            return
        self._check_artifact(ev, data)
        files[data["path"]] = data["sha256"]

    def _check_artifact(self, ev: dict[str, Any], data: dict[str, Any]) -> None:
        art = data["artifact"]
        if art is None:
            return
        if art != "sha256:" + data["sha256"]:
            raise _fail(ev, "artifact must be 'sha256:' + the file's sha256", "/data/artifact")
        known = self.state["artifacts"].get(art)
        if known is None:
            raise _fail(ev, f"artifact {art} was not added before", "/data/artifact")
        if known["size"] != data["size"]:
            raise _fail(
                ev, f"size {data['size']} differs from the artifact's {known['size']}", "/data/size"
            )

    def _on_artifact_added(self, ev: dict[str, Any], data: dict[str, Any]) -> None:
        self._unshare()
        arts = self.state["artifacts"]
        entry = {"media_type": data["media_type"], "size": data["size"]}
        old = arts.get(data["artifact_id"])
        if old is not None and old != entry:
            raise _fail(
                ev, f"artifact {data['artifact_id']} added again with other details", "/data"
            )
        arts[data["artifact_id"]] = entry

    def _on_snapshot_taken(self, ev: dict[str, Any], data: dict[str, Any]) -> None:
        sid = data["snapshot_id"]
        if sid in self._snapshot_ids:
            raise _fail(ev, f"snapshot_id {sid!r} was taken before", "/data/snapshot_id")
        self.state["snapshots"].append(sid)
        self._snapshot_ids.add(sid)
        self._saved[sid] = _Saved(self.state)
        self._shared = True

    def _on_restored(self, ev: dict[str, Any], data: dict[str, Any]) -> None:
        sid = data["snapshot_id"]
        saved = self._saved.get(sid)
        if saved is None:
            raise _fail(ev, f"restored an unknown snapshot {sid!r}", "/data/snapshot_id")
        saved.restore_into(self.state)
        self._turn_ids = {t["turn_id"] for t in self.state["turns"]}
        self.state["epoch"] += 1

    def _on_forked(self, ev: dict[str, Any], data: dict[str, Any]) -> None:
        st = self.state
        if data["from_event_id"] != st["last_event_id"]:
            raise _fail(
                ev,
                f"forked from {data['from_event_id']!r}, but the previous event is "
                f"{st['last_event_id']!r}",
                "/data/from_event_id",
            )
        if data["branch_id"] == st["branch_id"]:
            raise _fail(ev, "a fork starts a new branch_id", "/data/branch_id")
        st["branch_id"] = data["branch_id"]

    def _on_turn_completed(self, ev: dict[str, Any], data: dict[str, Any]) -> None:
        if self.state["status"] != "in_turn" or data["turn_id"] != self.state["current_turn"]:
            self._in_turn(ev, data)  # raises: the event is not of the open turn
        st = self.state
        if st["pending_tool_calls"]:
            raise _fail(
                ev, f"turn completed with tool calls pending: {st['pending_tool_calls']}", "/type"
            )
        self._turn_ids.add(data["turn_id"])
        st["turns"].append(
            {
                "turn_id": data["turn_id"],
                "status": "completed",
                "stop_reason": data["stop_reason"],
                "error": None,
            }
        )
        st["status"] = "idle"
        st["current_turn"] = None

    def _on_turn_failed(self, ev: dict[str, Any], data: dict[str, Any]) -> None:
        if self.state["status"] != "in_turn" or data["turn_id"] != self.state["current_turn"]:
            self._in_turn(ev, data)  # raises: the event is not of the open turn
        st = self.state
        self._turn_ids.add(data["turn_id"])
        st["turns"].append(
            {
                "turn_id": data["turn_id"],
                "status": "failed",
                "stop_reason": None,
                "error": self._copy(data["error"]),
            }
        )
        st["pending_tool_calls"] = []
        st["status"] = "failed"
        st["current_turn"] = None


#: Event type -> its handler, ``Reducer._on_<type>`` (one dict look-up an event).
_HANDLERS: dict[str, Any] = {
    name[4:]: fn for name, fn in vars(Reducer).items() if name.startswith("_on_")
}


def reduce(events: Iterable[dict[str, Any]], state: dict[str, Any] | None = None) -> State:
    """Reduce canonical envelopes to a canonical state (spec/reducer.md).

    ``events`` is any iterable (a list, or :func:`threads_cases.core.log.read_log` for streaming).
    The envelopes are assumed schema-valid (the log reader checks that). Raises
    ``CaseError("log_invalid")`` for a broken reducer rule.
    """
    r = Reducer(cast(State | None, state))
    for ev in events:
        r.apply(ev)
    return cast(State, r.state)
