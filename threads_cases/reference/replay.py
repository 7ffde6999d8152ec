"""Replay: the Python reference runtime replaying one case (spec/replay.md, sections 2-3).

:func:`replay_case` restores a case's fork point and replays its input with a scripted model
(``model.json``), stubs (``stubs.json``) and a :class:`~threads_cases.reference.sandbox.FakeSandbox`
holding the fork point's files plus the recorded reads (``sandbox.json``). It returns the
same shape the driver protocol's ``replay`` answer has::

    {"events": [canonical envelopes from the user_message on],
     "stop": null | {"code", "stop_key", "message"},
     "requests": [request_sha256, ...],            # in call order
     "consumed": {"replies": int, "stubs": [bool, ...]},
     "provenance": {"model": [...], "tools": [...]}}   # where each answer came from

``provenance`` (spec/replay.md 11.11) names, per model reply in call order, ``recorded``
(model.json) or ``supplied`` (``--supply model:<n>``), empty on a live turn (the harness
answers those calls and knows); per ``tool_result`` in order, ``recorded`` (a stub),
``supplied`` (``--supply tool:<name>``) or ``live`` (run now: a sandbox tool, the agent's own
handler, an unknown tool's error).

Event ids are ``<case name>.<seq>`` and the clock is the fork point's ts plus 1 ms per event,
so a replay is byte-stable.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..case.artifacts import ArtifactStore
from ..case.loader import Case, open_case
from ..core.canonical import canonical_line
from ..core.dialects import get_dialect
from ..core.errors import CaseError
from ..core.reducer import Reducer
from ..core.texts import quote
from .agent import AgentSpec, ToolResult
from .live import HarnessModel, LiveExternal, LiveTurn
from .model import ScriptedModel, normalize_reply
from .runtime import Clock, Interruption, Recorder, block_egress, parse_ts, run_turn
from .sandbox import FakeSandbox

MAX_SUPPLY_ENTRIES = 200
MAX_SUPPLY_BYTES = 64 * 1024


class MissingStub(CaseError):
    def __init__(self, name: str) -> None:
        super().__init__(
            "missing_stub",
            f"the agent called external tool {quote(name)} with an input no stub answers",
            hint="record the call, or answer it with --supply "
            f'\'{{"calls": {{"tool:{name}": ...}}}}\'',
        )
        self.stop_key = f"tool:{name}"


#: The hint of a supply document that is not shaped as one.
SUPPLY_HINT = 'a supply is {"calls": {"model:<n>": <reply>, "tool:<name>": <result>}}'


def check_supply(supply: Any, *, source: str = "--supply") -> dict[str, Any]:
    """Check a supply document ``{"calls": {"model:<n>": reply, "tool:<name>": result}}``.

    At most 200 entries and 64 KiB of canonical JSON. Returns the ``calls`` mapping (a
    :class:`CheckedCalls`). Raises ``CaseError("invalid_request")`` naming the offending
    key.
    """
    if (
        not isinstance(supply, dict)
        or set(supply) != {"calls"}
        or not isinstance(supply["calls"], dict)
    ):
        raise CaseError(
            "invalid_request", 'a supply must be {"calls": {...}}', file=source, hint=SUPPLY_HINT
        )
    calls = supply["calls"]
    if len(calls) > MAX_SUPPLY_ENTRIES:
        raise CaseError(
            "invalid_request",
            f"the supply holds {len(calls)} entries; at most 200",
            file=source,
            hint="answer only the calls the recording lacks",
        )
    if len(canonical_line(supply)) > MAX_SUPPLY_BYTES:
        raise CaseError(
            "invalid_request",
            "the supply is over 64 KiB",
            file=source,
            hint="answer only the calls the recording lacks",
        )
    for key, value in calls.items():
        kind, _, rest = key.partition(":")
        if kind == "model" and rest.isascii() and rest.isdigit():
            normalize_reply(value, where=f"{source} calls[{key!r}]")
        elif kind == "tool" and rest:
            _tool_result(value, f"{source} calls[{key!r}]")
        else:
            raise CaseError(
                "invalid_request",
                f"the supply's key {key!r} must be 'model:<n>' or 'tool:<name>'",
                file=source,
                pointer=f"/calls/{key}",
                hint=SUPPLY_HINT,
            )
    return CheckedCalls(calls)


class CheckedCalls(dict[str, Any]):
    """A supply's ``calls`` mapping as :func:`check_supply` accepted it: the harness checks
    a ``--supply`` once per run and hands this on (issue 33), never checking it again."""


def _tool_result(value: Any, where: str) -> ToolResult:
    if isinstance(value, str):
        return ToolResult(value)
    if (
        isinstance(value, dict)
        and set(value) <= {"content", "is_error"}
        and isinstance(value.get("content"), (str, list))
        and isinstance(value.get("is_error", False), bool)
    ):
        return ToolResult(value["content"], bool(value.get("is_error", False)))
    raise CaseError(
        "invalid_request",
        f"{where} must be a string or {{content, is_error}}",
        hint='a tool answer is "text" or {"content": "text" or [blocks], "is_error": false}',
    )


class StubBook:
    """External calls answered from stubs.json: matched by tool name and canonical input,
    each stub used once, in recorded order when keys are equal (spec/replay.md, 3.3)."""

    def __init__(self, calls: list[dict[str, Any]], supply: dict[str, Any]) -> None:
        self.calls = calls
        self.used = [False] * len(calls)
        self.supply = supply
        self._keys = [(c["tool"], canonical_line(c["input"])) for c in calls]
        #: where each answered call's result came from, in call order (recorded, supplied)
        self.answered: list[str] = []

    def __call__(self, name: str, inp: dict[str, Any]) -> ToolResult:
        key = (name, canonical_line(inp))
        for i, k in enumerate(self._keys):
            if not self.used[i] and k == key:
                self.used[i] = True
                r = self.calls[i]["result"]
                self.answered.append("recorded")
                return ToolResult(r["content"], r["is_error"])
        supplied = self.supply.get(f"tool:{name}")
        if supplied is not None:
            result = _tool_result(supplied, f"supply tool:{name}")
            self.answered.append("supplied")
            return result
        raise MissingStub(name)


def answer_provenance(
    events: list[dict[str, Any]], agent: AgentSpec, model: list[str], external: list[str]
) -> dict[str, list[str]]:
    """``{"model", "tools"}`` of a replay (module docstring): ``model`` as given, cut to the
    replies the turn got (its ``model_responded`` events); per ``tool_result`` event, the
    next of ``external`` (each answered external call, in order) when the tool is one of the
    agent's external tools, else ``live``."""
    answered = sum(1 for e in events if e["type"] == "model_responded")
    queue = iter(external)
    tools = []
    for e in events:
        if e["type"] == "tool_result":
            tool = agent.tool(e["data"]["name"])
            external_call = tool is not None and tool.kind != "sandbox"
            tools.append(next(queue, "live") if external_call else "live")
    return {"model": model[:answered], "tools": tools}


def restore_sandbox(case: Case, state: dict[str, Any], reads: list[dict[str, Any]]) -> FakeSandbox:
    """The fork point's files plus the recorded reads (spec/replay.md 2.3).

    A file whose bytes are in artifacts/ is restored with them. A prefix file, or a read
    whose ``artifact`` is null, without bytes there is a hash-only entry: reading it in the
    replay stops with ``sandbox_content_missing``. Raises ``CaseError("case_invalid")`` for
    a read whose recorded artifact is missing from artifacts/ or whose path is refused.
    """
    files: dict[str, bytes | str] = {}
    hash_only: dict[str, str] = {}
    wanted = [(p, sha, None) for p, sha in state["sandbox"]["files"].items()]
    wanted += [(r["path"], r["sha256"], r["artifact"]) for r in reads]
    for path, sha, artifact in wanted:
        data = case.artifact(sha)
        if data is not None:
            files[path] = data
            hash_only.pop(path, None)
        elif artifact is None:
            hash_only[path] = sha
            files.pop(path, None)
        else:
            raise CaseError(
                "case_invalid",
                f"artifacts/{sha} (for {path}) is missing",
                file=str(case.path / "artifacts"),
            )
    return FakeSandbox(files, hash_only=hash_only)


def _fork_point(
    case: Case, implementation: str, *, shared: bool, has_agent: bool
) -> tuple[list[dict[str, Any]], Reducer]:
    """The case's prefix in ``implementation``'s dialect, reduced: the state the turn starts
    from. ``case_invalid`` when the case has no log in that dialect, or the prefix starts no
    thread (no agent) and no ``agent`` is given."""
    dialect = get_dialect(implementation)
    if dialect.name not in case.logs:
        raise CaseError(
            "case_invalid",
            f"the case holds no log in the dialect {dialect.name}",
            file=str(case.log_path(dialect.name)),
        )
    prefix = list(case.logs[dialect.name])
    # the loader's reduction of the log, branched: the replay changes only its own copies of
    # what it changes, so a shared case stays as it was (issue 33: each log reduced once)
    forked = case.fork(dialect.name)
    if forked is not None:
        reducer = forked
    else:  # a Case built without the loader's reducers
        # a case opened here is this replay's own; a given one is shared: its events are copied
        reducer = Reducer(copy_data=shared)
        for ev in prefix:
            reducer.apply(ev)
    if reducer.state["agent"] is None and not has_agent:
        # an empty prefix, or extension events only: no thread_started, so no agent
        raise CaseError(
            "case_invalid",
            f"log.{implementation}.jsonl has no thread_started "
            "event: the fork point has no agent to replay",
            file=str(case.log_path(implementation)),
        )
    return prefix, reducer


def _turn_agent(state: dict[str, Any], agent: AgentSpec | None, live: LiveTurn | None) -> AgentSpec:
    """The agent the turn runs; sets the agent the state (so each model request) carries:
    the user's agent when given, as the harness sees it on a live turn."""
    run_agent = agent or AgentSpec.from_json(state["agent"])
    if agent is not None:
        # the user's agent: its system prompt and tools are what the model is asked with
        state["agent"] = agent.to_json()
    if live is not None:
        state["agent"] = live.agent_json(state["agent"])
    return run_agent


def _recorder(case: Case, prefix: list[dict[str, Any]], reducer: Reducer) -> Recorder:
    """A recorder continuing the prefix with deterministic ids and a clock 1 ms per event."""
    start_ms = parse_ts(prefix[-1]["ts"]) + 1 if prefix else 0
    name = case.name
    return Recorder(
        list(prefix),
        reducer,
        thread_id=reducer.state["thread_id"] or name,
        id_for=_ids(name),
        clock=Clock(start_ms, 1),
    )


def replay_case(
    path: str | Path | Case,
    *,
    implementation: str = "threads-py",
    agent: AgentSpec | None = None,
    supply: dict[str, Any] | None = None,
    live: LiveTurn | None = None,
) -> dict[str, Any]:
    """Replay a case's turn on the Python runtime (spec/replay.md section 3).

    ``agent`` replaces the recorded agent (its system prompt, tools and sandbox handlers);
    external tools are answered from stubs. ``supply`` is the checked ``calls`` mapping of
    a supply document. ``live`` makes it a live turn (spec/replay.md section 11): every
    model call is asked of the harness, and the agent's own external handlers may answer
    what no stub does (:mod:`.live`). Returns ``{events, stop, requests, consumed}``
    (module docstring), and ``agent`` (the agent JSON the turn ran) when ``agent`` is given.
    Raises ``CaseError`` (``case_invalid``, ``log_invalid``...) when the case cannot be run,
    ``handler_missing`` when the turn calls a sandbox tool that has no handler (a custom
    tool of the recorded agent: spec/replay.md 8.4).
    """
    case = path if isinstance(path, Case) else open_case(path)
    prefix, reducer = _fork_point(
        case, implementation, shared=isinstance(path, Case), has_agent=agent is not None
    )
    model_doc = case.read("model.json")
    stubs_doc = case.read("stubs.json")
    sandbox_doc = case.read("sandbox.json")
    supply = supply or {}
    sandbox = restore_sandbox(case, reducer.state, sandbox_doc["reads"])
    model: ScriptedModel | HarnessModel = ScriptedModel(
        model_doc["replies"],
        supply={int(k[6:]): v for k, v in supply.items() if k.startswith("model:")},
    )
    stubs = StubBook(stubs_doc["calls"], supply)
    run_agent = _turn_agent(reducer.state, agent, live)
    turn_agent = reducer.state["agent"]  # what each model request of the turn is built with
    external: Callable[[str, dict[str, Any]], ToolResult] = stubs
    if live is not None:
        model = HarnessModel(live)
        external = LiveExternal(stubs, run_agent, live.allow_write, stubs.answered)
    rec = _recorder(case, prefix, reducer)
    with block_egress() as attempts:
        outcome = run_turn(
            rec,
            run_agent,
            sandbox,
            ArtifactStore(),
            model,
            case.meta["input"],
            external=external,
            egress=attempts,
            # a recorded interruption belongs to the recorded replies, not to a live turn
            interruption=None
            if live is not None
            else Interruption.from_json(model_doc.get("interruption")),
            refuse_missing_handlers=True,
        )
    out = {
        "events": outcome.events,
        "stop": outcome.stop,
        "requests": list(model.requests),
        "consumed": {"replies": model.used, "stubs": list(stubs.used)},
        "provenance": answer_provenance(
            outcome.events,
            run_agent,
            _model_provenance(model, len(model_doc["replies"])),
            stubs.answered,
        ),
    }
    if agent is not None:  # the user's agent: the harness compares it with the recorded one
        out["agent"] = turn_agent
    return out


def _model_provenance(model: ScriptedModel | HarnessModel, recorded: int) -> list[str]:
    """Per model call asked: ``recorded`` when model.json holds its reply, else ``supplied``
    (spec/replay.md 5.1); none on a live turn (the harness knows)."""
    if isinstance(model, HarnessModel):
        return []
    return ["recorded" if i < recorded else "supplied" for i in range(len(model.requests))]


def _ids(name: str) -> Callable[[int], str]:
    return lambda seq: f"{name}.{seq}"
