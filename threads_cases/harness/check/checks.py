"""The checks of one case on one implementation (spec/replay.md sections 4-5): the prefix
state, the replay's stop, ``must`` (any order) and ``expect`` (ordered subsequence), and the
recording's accounting (unused replies and stubs, diverged request hashes); and the verdict
they give.

Each check is a :class:`Check` ``{id, result: pass|fail|warn|skip, detail, code}``. Reason
codes of checks: ``state_mismatch``, the stop codes (``model_exhausted``, ``missing_stub``,
``egress_blocked``, ``step_limit``), ``must_unmatched``, ``expect_unmatched``,
``reply_unused``, ``stub_unused``, ``request_diverged``. A refusal of a request (a
``CaseError``, for example ``log_invalid`` for a log the implementation refuses) is raised,
not turned into a check: the case could not be run (verdict ``error``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from ...case.divergence import Divergence, find_divergence
from ...case.loader import Case
from ...core.canonical import canonical_line
from ...core.dialects import Dialect, get_dialect
from ...core.errors import CaseError
from ...core.matchers import Difference, diff_values, explain, find_all, match_in_order, nearest
from ...core.shapes import CheckRecord, CheckResult, JsonObject, State, Verdict
from ...protocol.client import Implementation
from ...reference.agent_ref import AgentRef, AgentRequest
from .agent_diff import agent_changes, recorded_agent

if TYPE_CHECKING:  # a live run's types: a replay that is not live never loads harness.live
    from ..live.desk import CaseLedger, LiveOptions

#: Codes that mean the case could not be run at all (verdict ``error``).
ERROR_CODES = frozenset(
    {
        "case_invalid",
        "format_unsupported",
        "json_invalid",
        "driver_crashed",
        "driver_timeout",
        "driver_unavailable",
        "protocol_error",
        "internal_error",
        "io_error",
        "invalid_request",
        "dialect_unknown",
        "agent_unavailable",
        "handler_missing",
        "handler_failed",
    }
)


@dataclass(frozen=True)
class Check:
    """One check of a case run: ``{id, result: pass|fail|warn|skip, detail}``."""

    id: str
    result: CheckResult
    detail: str = ""
    code: str | None = None
    differences: tuple[Difference, ...] = ()
    matcher: JsonObject | None = None
    nearest_event: JsonObject | None = None

    def to_json(self) -> CheckRecord:
        """The check as a report line holds it (schemas/report.schema.json ``$defs/check``)."""
        out: dict[str, Any] = {"id": self.id, "result": self.result, "detail": self.detail}
        if self.code:
            out["code"] = self.code
        if self.differences:
            out["differences"] = [d.to_json() for d in self.differences]
        if self.matcher is not None:
            out["matcher"] = self.matcher
        if self.nearest_event is not None:
            out["nearest_event"] = self.nearest_event
        return cast(CheckRecord, out)


@dataclass(frozen=True)
class Outcome:
    """What :func:`check_case` found: the checks, the stop (``None`` when the replay ran to
    its end), the first divergence (``None`` for a pass; :mod:`.divergence`) and, when the
    replay ran the user's own agent, how it differs from the recorded one
    (:func:`.agent_diff.agent_changes`; ``None`` otherwise), and the answer's ``provenance``
    (None when the driver sent none; spec/replay.md 11.11)."""

    checks: list[Check]
    stop: dict[str, Any] | None
    divergence: Divergence | None
    agent_changes: list[str] | None
    provenance: dict[str, Any] | None = None


def check_case(
    case: Case,
    impl: Implementation,
    *,
    supply: dict[str, Any] | None = None,
    agent: AgentRef | None = None,
) -> Outcome:
    """Run every check of one case on one implementation, replaying ``agent`` (the user's
    own, by reference) when given; see :class:`Outcome`."""
    d = get_dialect(impl.dialect)
    state = state_check(case, impl, d)
    out = replay(case, impl, d, supply, agent)
    events: list[dict[str, Any]] = out["events"]
    stop: dict[str, Any] | None = out.get("stop")
    checks = outcome_checks(case, state, stop, events)
    checks.extend(recording_checks(case, out, stop))
    changes = None
    if isinstance(out.get("agent"), dict):
        changes = agent_changes(case_agent(case, impl.dialect), out["agent"])
    divergence = find_divergence(case, impl, checks, out)
    return Outcome(checks, stop, divergence, changes, out.get("provenance"))


def case_agent(case: Case, dialect: str) -> dict[str, Any] | None:
    """The agent the case's replies were recorded for (:func:`.agent_diff.recorded_agent`):
    its first request record, named as case.json's agent summary names the prefix agent;
    for a case without request records, the agent of the state the loader reduced the prefix
    to (the prefix reduced here only for a case built without it)."""
    from ...case.requests import expand_records
    from ...core.reducer import Reducer

    records = expand_records(case.read("model.json")["replies"])
    if records and records[0] is not None:
        return recorded_agent(records, {"name": case.meta["agent"]["name"]})
    state = case.state(dialect)
    if state is None:
        reducer = Reducer(copy_data=False)
        for ev in case.logs[dialect]:
            reducer.apply(ev)
        state = cast(State, reducer.state)
    return recorded_agent(records, state["agent"])


def check_live_case(
    case: Case,
    impl: Implementation,
    ledger: CaseLedger,
    live: LiveOptions,
    *,
    supply: dict[str, Any] | None = None,
    agent: AgentRef | None = None,
) -> tuple[list[Check], dict[str, Any] | None, dict[str, Any] | None]:
    """A live run of one case (spec/replay.md section 11): the prefix state, then the turn with
    its model calls answered by ``ledger`` (reused, supplied or live; it counts them),
    judged by the stop, ``must`` and ``expect`` only (request hashes and the recording's use
    cannot hold). Returns the checks, the stop and the answer's ``provenance`` (or None).
    Raises ``CaseError("invalid_request")``
    for an implementation that does not announce ``live``."""
    if "live" not in (impl.hello().get("capabilities") or []):
        raise CaseError(
            "invalid_request",
            f"{impl.name} does not announce the live capability (spec/driver-protocol.md "
            "2.5.1), so it cannot run --live",
        )
    d = get_dialect(impl.dialect)
    state = state_check(case, impl, d)
    msg: dict[str, Any] = {
        "cmd": "replay",
        "case": {"path": str(case.path)},
        "live": live.request_body(),
    }
    if supply:
        msg["case"]["supply"] = {"calls": supply}
    if agent is not None:
        msg["agent"] = agent_request(impl, agent)
    out = dict(impl.request(msg, on_model_call=ledger.answer))
    events = [d.decode_event(e) for e in out["events"]]
    stop: dict[str, Any] | None = out.get("stop")
    return outcome_checks(case, state, stop, events), stop, out.get("provenance")


def outcome_checks(
    case: Case, state: Check, stop: dict[str, Any] | None, events: list[dict[str, Any]]
) -> list[Check]:
    """The checks of a turn's outcome, shared by replay and live runs (spec/replay.md 7.1):
    the prefix ``state`` check, the stop (when the turn stopped), each ``must`` matcher and
    the ordered ``expect`` matchers (when there are any)."""
    checks = [state]
    if stop:
        checks.append(stop_check(stop, events))
    checks.extend(must_checks(case.meta["expect"]["must"], events))
    exp = case.meta["expect"]["expect"]
    if exp:
        checks.append(expect_check(exp, events))
    return checks


def state_check(case: Case, impl: Implementation, d: Dialect) -> Check:
    """The implementation reduces the case's log to the expected state (spec/replay.md 6.2).
    A refusal of the log (for example ``log_invalid``) is raised: the case cannot be run."""
    expected_name = f"expected.{impl.dialect}.json"
    expected = case.read(expected_name)
    misspelled = None
    if isinstance(expected, dict):
        try:
            expected = d.decode_state(expected)
        except CaseError as err:
            # a key spelled as another dialect spells it: it cannot equal the state
            misspelled = f"{expected_name}: {err.location.pointer}: {err.message}"
    log_path = case.log_path(impl.dialect)
    answer = impl.request({"cmd": "reduce", "path": str(log_path), "dialect": impl.dialect})
    actual = d.decode_state(answer["state"])
    if isinstance(actual, dict) and actual.get("last_event_id") != case.meta["at"]:
        # the fork point must be the last event of the log (case-format.md 3.2)
        raise CaseError(
            "case_invalid",
            f"the fork point {case.meta['at']!r} is not the last "
            f"event of log.{impl.dialect}.jsonl (it ends at "
            f"{actual.get('last_event_id')!r})",
            file=str(log_path),
        )
    if misspelled is not None:
        return Check("state", "fail", misspelled, "state_mismatch")
    diffs = diff_values(expected, actual)
    if diffs:
        detail = f"{len(diffs)} difference(s) from {expected_name}"
        return Check("state", "fail", detail, "state_mismatch", tuple(diffs))
    return Check("state", "pass")


def replay(
    case: Case,
    impl: Implementation,
    d: Dialect,
    supply: dict[str, Any] | None,
    agent: AgentRef | None = None,
) -> dict[str, Any]:
    """The implementation's answer to ``replay`` with its events in canonical spelling;
    ``agent`` goes in the request (spec/driver-protocol.md 2.5.2)."""
    msg: dict[str, Any] = {"cmd": "replay", "case": {"path": str(case.path)}}
    if supply:
        msg["case"]["supply"] = {"calls": supply}
    if agent is not None:
        msg["agent"] = agent_request(impl, agent)
    out = dict(impl.request(msg))
    out["events"] = [d.decode_event(e) for e in out["events"]]
    return out


def agent_request(impl: Implementation, agent: AgentRef) -> AgentRequest:
    """The ``agent`` field of a replay request to ``impl``; ``agent_unavailable`` when it does
    not announce the ``agent`` capability (spec/driver-protocol.md 2.5.2)."""
    if "agent" not in (impl.hello().get("capabilities") or []):
        raise CaseError(
            "agent_unavailable",
            f"{impl.name} does not announce the agent capability "
            "(spec/driver-protocol.md 2.5.2), so it cannot replay your agent",
            hint=f"run {impl.name} without --agent, or update its driver",
        )
    return agent.to_request()


def stop_check(stop: dict[str, Any], events: Sequence[dict[str, Any]]) -> Check:
    """A replay that stopped early fails with the stop's code (and, for a missing stub, the
    input of the call that had none)."""
    detail = f"{stop['code']} at {stop['stop_key']}: {stop.get('message', '')}"
    calls = [e for e in events if e["type"] == "tool_called"]
    if stop["code"] == "missing_stub" and calls:
        text = canonical_line(calls[-1]["data"]["input"]).decode("utf-8")
        detail += f"; its input was {text if len(text) <= 200 else text[:197] + '...'}"
    return Check("stop", "fail", detail, stop["code"])


def must_checks(must: Sequence[dict[str, Any]], events: Sequence[dict[str, Any]]) -> list[Check]:
    """One check per ``must`` matcher, matched in any order (spec/matchers.md)."""
    checks = []
    for i, hit in enumerate(find_all(must, events)):
        if hit is not None:
            checks.append(Check(f"must[{i}]", "pass", f"matched seq {events[hit]['seq']}"))
            continue
        near = nearest(must[i], events)
        checks.append(
            Check(
                f"must[{i}]",
                "fail",
                explain(must[i], events, label=f"must[{i}]"),
                "must_unmatched",
                tuple(near[1]) if near else (),
                must[i],
                None if near is None else events[near[0]],
            )
        )
    return checks


def expect_check(exp: Sequence[dict[str, Any]], events: Sequence[dict[str, Any]]) -> Check:
    """The ``expect`` matchers as an ordered subsequence; a miss is a warning that explains
    the first matcher not found after the ones that were."""
    ok, count = match_in_order(exp, events)
    if ok:
        return Check("expect", "pass", f"{count} matcher(s) in order")
    rest = events[_after_in_order(exp[:count], events) :]
    near = nearest(exp[count], rest)
    return Check(
        "expect",
        "warn",
        f"after the first {count} in order: {explain(exp[count], rest, label=f'expect[{count}]')}",
        "expect_unmatched",
        tuple(near[1]) if near else (),
        exp[count],
        None if near is None else rest[near[0]],
    )


def _after_in_order(matchers: Sequence[dict[str, Any]], events: Sequence[dict[str, Any]]) -> int:
    """Index just after the event the last of ``matchers`` took in greedy in-order matching."""
    from ...core.matchers import matches

    pos = 0
    for m in matchers:
        while pos < len(events) and not matches(m, events[pos]):
            pos += 1
        pos += 1
    return min(pos, len(events))


def recording_checks(case: Case, out: dict[str, Any], stop: dict[str, Any] | None) -> list[Check]:
    """The recording was used as recorded: every reply and stub consumed (unless the replay
    stopped) and every model request hashing to its recorded ``request_sha256``."""
    replies = case.read("model.json")["replies"]
    consumed = out.get("consumed") or {}
    checks = []
    used = int(consumed.get("replies", len(replies)))
    if used < len(replies) and not stop:
        checks.append(
            Check(
                "model",
                "warn",
                f"{len(replies) - used} of {len(replies)} recorded replies were never used",
                "reply_unused",
            )
        )
    else:
        checks.append(Check("model", "pass"))
    unused = [i for i, u in enumerate(consumed.get("stubs", [])) if not u]
    if unused and not stop:
        calls = case.read("stubs.json")["calls"]
        named = ", ".join(f"#{i} {calls[i]['tool']}" if i < len(calls) else f"#{i}" for i in unused)
        checks.append(Check("stubs", "warn", f"stubs never used: {named}", "stub_unused"))
    else:
        checks.append(Check("stubs", "pass"))
    diverged = [
        i
        for i, (got, rec) in enumerate(zip(out.get("requests", []), replies, strict=False))
        if got != rec["request_sha256"]
    ]
    if diverged:
        detail = f"model request(s) {diverged} differ from the recorded request_sha256"
        checks.append(Check("requests", "warn", detail, "request_diverged"))
    else:
        checks.append(Check("requests", "pass"))
    return checks


def verdict_of(checks: Sequence[Check]) -> tuple[Verdict, list[str]]:
    """The verdict and ordered reason codes of a case's checks."""
    fails = [c.code or c.id for c in checks if c.result == "fail"]
    warns = [c.code or c.id for c in checks if c.result == "warn"]
    reasons = list(dict.fromkeys(fails + warns))
    if fails:
        return "fail", reasons
    if warns:
        return "drifted", reasons
    return "pass", reasons
