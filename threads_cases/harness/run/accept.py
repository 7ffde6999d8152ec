"""Accepting a change: rewrite the drifted parts of a case from its replay (spec/replay.md
section 10), like a snapshot tool's ``--snapshot-update``; the result is a normal file
change to review.

:func:`accept_case` runs the case on one implementation, then rebuilds from the replayed
turn (as ``save`` builds them from a recorded one, case-format.md 5):

* ``model.json``: each reply with the replayed ``request_sha256`` and request record (and
  only the replies the replay used, plus supplied ones);
* ``stubs.json``: the external calls the replay made, with their answers (stubs never used
  are dropped; ``--supply`` answers become stubs);
* ``expected.<dialect>.json`` of the implementation, when the state check failed
  (``state_mismatch``: the reducer changed);
* the fingerprint of ``case.json``.

It refuses (``CaseError("invalid_request")``) a ``fail`` for any other reason (a ``must``
that no longer holds, a stop) unless ``force``, and an ``error``. The write is atomic and
under the case folder's lock (case-format.md 6). Returns ``AcceptResult``: the verdict
before, whether anything changed, and the old and new files for a diff.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from ...case.build import agent_summary, recorded_parts
from ...case.directory import finish_case_files, read_case_files
from ...case.divergence import replayed_requests
from ...case.loader import Case, first_blocking, inspect_case, open_case
from ...case.once import one_run
from ...case.requests import delta_records
from ...case.writer import write_case_dir
from ...core.canonical import canonical_document
from ...core.dialects import get_dialect
from ...core.errors import CaseError
from ...core.shapes import Verdict
from ...protocol.client import Implementation
from ...reference.agent_ref import AgentRef
from ...reference.live import AskModel
from ..check.checks import replay
from .runner import CaseResult, run_one

#: fail reasons accept rewrites without --force
ACCEPTABLE_FAILS = frozenset({"state_mismatch"})


@dataclass
class AcceptResult:
    """What :func:`accept_case` did: ``verdict`` before, ``changed``, the files before and
    after (``{relative path: bytes}``) and the run's result."""

    path: Path
    verdict: Verdict
    changed: bool
    before: dict[str, bytes]
    after: dict[str, bytes]
    result: CaseResult


def accept_case(
    path: Path,
    impl: Implementation,
    *,
    force: bool = False,
    supply: dict[str, Any] | None = None,
    agent: AgentRef | None = None,
) -> AcceptResult:
    """Rewrite the drifted parts of the case at ``path`` from its replay on ``impl`` (module
    docstring). ``supply`` is a checked ``calls`` mapping whose answers are written in;
    ``agent`` is the user's own agent, whose replay is written (spec/replay.md 10.4)."""
    with one_run():  # case.json read once (case/once.py)
        opened = inspect_case(path)  # the run and the rebuild share it (issue 33)
    kept = _Kept(impl)
    result = run_one(path, kept, supply, opened, agent=agent)
    case, problems = opened
    if case is None or first_blocking(problems) is not None:
        case, before = None, read_case_files(path)  # refused below, as a run refuses it
    else:
        before = dict(case.files)
    if result.verdict in ("pass", "skip") and not supply:
        return AcceptResult(path, result.verdict, False, before, before, result)
    if result.verdict == "error":
        raise CaseError(
            "invalid_request",
            f"cannot accept a case that errors: {result.message}",
            hint=result.hint or None,  # the error's own remedy (an --agent for handler_missing)
        )
    hard = [r for r in result.reasons if r in _fail_codes(result) and r not in ACCEPTABLE_FAILS]
    if hard and not force:
        raise CaseError(
            "invalid_request",
            f"{path}: the replay fails ({', '.join(hard)}); accepting would record a broken turn",
            hint="fix the agent, or pass --force to accept it anyway",
        )
    after = _rebuilt(case or open_case(path), kept, supply, before, result, agent)
    changed = after != before
    if changed:
        write_case_dir(path.parent, path.name, after, overwrite=True, secrets="allow")
    return AcceptResult(path, result.verdict, changed, before, after, result)


def _fail_codes(result: CaseResult) -> set[str]:
    return {c.code or c.id for c in result.checks if c.result == "fail"}


class _Kept:
    """``impl`` keeping the answer of each command it was asked (the run's ``reduce`` and
    ``replay``), so that accept rebuilds the case from the run's own replay: one replay."""

    def __init__(self, impl: Implementation) -> None:
        self.impl = impl
        self.answers: dict[str, dict[str, Any]] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.impl, name)

    def request(
        self, message: dict[str, Any], on_model_call: AskModel | None = None
    ) -> dict[str, Any]:
        if on_model_call is None:
            out = self.impl.request(message)
        else:
            out = self.impl.request(message, on_model_call)
        self.answers[str(message.get("cmd"))] = out
        return out

    def answer(self, cmd: str, ask: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """The run's answer to ``cmd``, or ``ask()`` when the run did not ask it."""
        return self.answers[cmd] if cmd in self.answers else ask()


def _rebuilt(
    case: Case,
    impl: _Kept,
    supply: dict[str, Any] | None,
    before: dict[str, bytes],
    result: CaseResult,
    agent: AgentRef | None,
) -> dict[str, bytes]:
    d = get_dialect(impl.dialect)
    prefix = list(case.logs[impl.dialect])  # the loader's canonical events of the log
    if "replay" in impl.answers:
        out = dict(impl.answers["replay"])
        out["events"] = [d.decode_event(e) for e in out["events"]]
    else:
        out = replay(case, impl, d, supply, agent)
    events = out["events"]
    own = out.get("agent")  # the user's own agent, when the replay ran one
    parts = recorded_parts(events, own if own is not None else fork_point_agent(case, d.name))
    records = delta_records(
        [r for r in replayed_requests(prefix, events, own, start=case.fork(d.name)) if r]
    )
    for reply, record in zip(parts["replies"], records, strict=False):
        reply["request"] = record
    files = {k: v for k, v in before.items() if k != "case.json"}
    model = case.read("model.json")
    files["model.json"] = canonical_document({**model, "replies": parts["replies"]})
    stubs = case.read("stubs.json")
    files["stubs.json"] = canonical_document({**stubs, "calls": parts["calls"]})
    if "state_mismatch" in _fail_codes(result):
        state = impl.answer(
            "reduce",
            lambda: impl.request(
                {"cmd": "reduce", "path": str(case.log_path(impl.dialect)), "dialect": impl.dialect}
            ),
        )
        files[f"expected.{impl.dialect}.json"] = canonical_document(state["state"])
    meta = dict(case.meta)
    if own is not None:  # the replies are now recorded for the user's agent (case-format 3.1)
        meta["agent"] = agent_summary(own)
    return finish_case_files(meta, files)


def fork_point_agent(case: Case, dialect: str) -> dict[str, Any] | None:
    """The agent the ``dialect`` log of ``case`` ends with (the one its replay asks the model
    with): a copy of the one in the state the loader reduced the log to, or, for a case built
    without it, the log reduced here."""
    from ...core.reducer import Reducer

    state = case.state(dialect)
    if state is not None:
        return copy.deepcopy(state["agent"])
    r = Reducer()
    for ev in case.logs[dialect]:
        r.apply(ev)
    agent: dict[str, Any] | None = r.state["agent"]
    return agent


def accept_from_live(
    path: Path, impl: Implementation, entry: dict[str, Any], *, force: bool = False
) -> AcceptResult:
    """``accept --from-live`` (spec/replay.md 11.8): record the replies of the last live run
    of the case on ``impl`` (``entry``, harness/live/record.py) as its new ``model.json``,
    with the stubs the turn used and the fingerprint. The turn is replayed with those
    replies (and the run's ``--model``/``--system-file``), so the request records are the
    ones the live turn sent; no provider is called.

    Refuses (``invalid_request``) a live turn that stopped (its replies end early), and a
    ``fail`` unless ``force``; and a replay that no longer reaches the turn's end with those
    replies (the case changed since the live run)."""
    from ...reference.live import LiveTurn

    before = read_case_files(path)
    stop = entry.get("stop")
    verdict = cast(Verdict, str(entry.get("verdict", "error")))  # a report line's (checked)
    reasons = [str(r) for r in entry.get("reasons", [])]
    if verdict == "error":
        raise CaseError("invalid_request", f"{path}: the live run could not run the case")
    if stop:
        raise CaseError(
            "invalid_request",
            f"{path}: the live turn stopped ({stop.get('code')} at {stop.get('stop_key')}); "
            "there is no complete turn to record",
            hint="raise the budget or fix the failure, run --live again, then accept",
        )
    if verdict == "fail" and not force:
        raise CaseError(
            "invalid_request",
            f"{path}: the live turn fails ({', '.join(reasons)}); accepting would record it",
            hint="pass --force to record it anyway",
        )
    replies = list(entry.get("replies", []))

    def ask(index: int, request: dict[str, Any], sha: str) -> dict[str, Any]:
        if index < len(replies):
            return {"reply": replies[index]}
        return {"stop": {"code": "model_exhausted", "stop_key": f"model:{index}", "message": ""}}

    case = open_case(path)
    d = get_dialect(impl.dialect)
    body = dict(entry.get("live") or {})
    msg = {"cmd": "replay", "case": {"path": str(case.path)}, "live": body}
    out = impl.request(msg, on_model_call=ask)
    if out.get("stop"):
        raise CaseError(
            "invalid_request",
            f"{path}: the live replies no longer lead the turn to its end "
            f"({out['stop'].get('code')}); the case changed since the live run",
            hint="run it with --live again",
        )
    events = [d.decode_event(e) for e in out["events"]]
    live = LiveTurn(ask, body.get("model"), body.get("system"))
    agent = live.agent_json(fork_point_agent(case, impl.dialect) or {})
    parts = _live_parts(case, impl.dialect, events, agent)
    files = {k: v for k, v in before.items() if k != "case.json"}
    files["model.json"] = canonical_document(
        {"format": 1, "replies": parts["replies"]}  # a live turn has no recorded interruption
    )
    files["stubs.json"] = canonical_document({**case.read("stubs.json"), "calls": parts["calls"]})
    after = finish_case_files(dict(case.meta), files)
    result = CaseResult(case.name, str(path), impl.name, verdict, reasons)
    changed = after != before
    if changed:
        write_case_dir(path.parent, path.name, after, overwrite=True, secrets="allow")
    return AcceptResult(path, verdict, changed, before, after, result)


def _live_parts(
    case: Case, dialect: str, events: list[dict[str, Any]], agent: dict[str, Any]
) -> dict[str, Any]:
    """The replies and external calls of a live turn's replay (``recorded_parts``), each
    reply with the request record the turn sent, rebuilt from the loader's reduction of the
    ``dialect`` log (``Case.fork``) and the turn's events."""
    from ...case.requests import turn_requests

    parts = recorded_parts(events, agent)
    prefix = list(case.logs[dialect])  # the loader's canonical events of the log
    turn = turn_requests(prefix, events, agent, start=case.fork(dialect))
    for reply, record in zip(parts["replies"], delta_records([r for r in turn if r]), strict=False):
        reply["request"] = record
    return parts
