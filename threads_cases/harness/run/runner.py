"""Running cases: checks, verdicts and suites (spec/replay.md sections 4-6).

For one case and one implementation :func:`run_case` (1) reduces the case's log with the
implementation and compares the state with the expected file, (2) has the implementation
replay the turn, (3) checks ``must`` (any order) and ``expect`` (ordered subsequence),
(4) accounts for the recording (unused replies and stubs, diverged request hashes), and
returns a :class:`CaseResult` with one verdict:

==========  =============================================================================
pass        the state matches, every must and expect holds, everything was consumed
drifted     state and musts hold, but an expect missed, a recording went unused or a request
            hash differed (passing unless ``strict``)
fail        state_mismatch, must_unmatched, log_invalid, or a stop (missing_stub, ...)
error       the case could not be run (case_invalid, format_unsupported, driver errors)
skip        the case does not list the implementation (or it is unavailable)
xfail       a failure the baseline lists (passing; :mod:`.expected`)
xpass       a baseline entry whose failure is gone (failing: a stale entry to prune)
==========  =============================================================================
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ...case.directory import peek_case_name
from ...case.discovery import suite_cases
from ...case.loader import first_blocking, inspect_case
from ...core.errors import CaseError, Location
from ...core.shapes import (
    BaselineRecord,
    ConformanceLevel,
    DivergenceRecord,
    JsonObject,
    LiveSpend,
    LiveTotals,
    RepeatSummary,
    ReportResult,
    StopRecord,
    Verdict,
)
from ...protocol.client import Implementation
from ..check.checks import Check, check_case, check_live_case, verdict_of
from .case_arguments import check_arguments, split_agent, supply_calls
from .encoded import encode_result
from .forked import run_items
from .opened import Inspected, OpenedCases
from .pool import default_jobs, shard_of
from .provenance import answers_of
from .repeat import Repeat, repeat_runs
from .setup import check_named_runs, keep_only

if TYPE_CHECKING:
    from ...reference.agent import AgentSpec
    from ...reference.agent_ref import AgentRef
    from ..baseline.file import Baseline
    from ..check.expected import Judgement
    from ..live.desk import LiveRun

VERDICTS = ("pass", "drifted", "fail", "error", "skip", "xfail", "xpass")


@dataclass
class CaseResult:
    """The result of one case on one implementation (a line of the JSON report)."""

    case: str
    path: str
    implementation: str
    verdict: Verdict
    reasons: list[str] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    duration_ms: float = 0.0
    stop: StopRecord | None = None
    message: str = ""
    #: where the replay first departed from the recording (case/divergence.py), or None
    divergence: DivergenceRecord | None = None
    #: with the user's own agent, what differs from the agent the case was recorded with
    #: (harness/check/agent_diff.py: ``["system prompt changed", ...]``, empty when nothing does);
    #: None when the recorded agent replayed
    agent_changes: list[str] | None = None
    #: a live run's ``{provenance, calls, cost_usd}`` (spec/replay.md 11.6), or None
    live: LiveSpend | None = None
    #: a live run's replies in call order (``accept --from-live``, the report's
    #: ``live_replies``, the panel: harness/live/said.py)
    live_replies: list[JsonObject] | None = None
    #: where each model reply and tool result came from, in a --supply or --live run
    #: (``{"model": [...], "tools": [...]}``, harness/run/provenance.py), else None
    answers: dict[str, list[str]] | None = None
    #: what the N runs of ``run --repeat N`` showed (harness/run/repeat.py), else None
    repeat: RepeatSummary | None = None
    #: the baseline entry behind an xfail or xpass (harness/check/expected.py), else None
    baseline: BaselineRecord | None = None
    #: what the baseline made of the result (an ``expected.Judgement``; not reported)
    judgement: Judgement | None = field(default=None, repr=False, compare=False)
    location: Location | None = field(default=None, compare=False)  # the error's file, line
    #: what to do about the error (its one-line hint, reason-codes.md 1.2): shown in the
    #: terminal under the error, not part of the report line
    hint: str = field(default="", compare=False)
    #: the harness could not read or check the case itself (its ``error`` is the case's, not
    #: the implementation's): no baseline entry ever lists it (spec/replay.md 12.3)
    unreadable: bool = field(default=False, compare=False)
    #: the report line a forked worker encoded, ``(orjson stamp, canonical bytes)`` (.encoded)
    encoded: tuple[bytes, bytes] | None = field(default=None, repr=False, compare=False)
    #: in a suite, on the first result of each case: the name its case.json gives
    #: (``case.directory.peek_case_name``; ``""`` when it gives none), read where the case
    #: ran, so that the warning about names two cases share needs no read of its own; None
    #: on the other results and outside a suite (not reported)
    case_json_name: str | None = field(default=None, repr=False, compare=False)

    def passed(self, strict: bool = False) -> bool:
        return self.verdict in ("pass", "skip", "xfail") or (
            self.verdict == "drifted" and not strict
        )

    def to_json(self) -> ReportResult:
        """A result line of the JSON report (schemas/report.schema.json ``$defs/result``);
        a live run adds ``live: true``, ``provenance``, ``spend`` and ``live_replies``
        (spec/replay.md 11.6)."""
        out: ReportResult = {
            "kind": "result",
            "case": self.case,
            "path": self.path,
            "implementation": self.implementation,
            "verdict": self.verdict,
            "reasons": self.reasons,
            "warnings": self.warnings,
            "checks": [c.to_json() for c in self.checks],
            "stop": cast("dict[str, Any] | None", self.stop),
            "divergence": self.divergence,
            "message": self.message,
            "duration_ms": round(self.duration_ms, 3),
        }
        if self.live is not None:
            out["live"] = True
            out["provenance"] = self.live["provenance"]
            out["spend"] = {"calls": self.live["calls"], "cost_usd": self.live["cost_usd"]}
            out["live_replies"] = self.live_replies or []
        if self.answers is not None:
            out["answers"] = self.answers
        if self.repeat is not None:
            out["repeat"] = self.repeat
        if self.baseline is not None:
            out["baseline"] = self.baseline
        if self.agent_changes is not None:
            out["agent_changes"] = self.agent_changes
        return out

    def __str__(self) -> str:
        """The result as text a failing test shows: verdict, reasons, what differs in the
        agent, the first divergence, each failing or warning check, the message of an error
        (spec/reports.md 7)."""
        from ..report.result_text import describe

        reasons = f" ({', '.join(self.reasons)})" if self.reasons else ""
        lines = [f"{self.case} [{self.implementation}]: {self.verdict}{reasons}", describe(self)]
        if self.hint:  # what to do about an error (reason-codes.md 1.2)
            lines.append(f"  hint: {self.hint}")
        return "\n".join(line for line in lines if line)


@dataclass
class SuiteResult:
    """Every :class:`CaseResult` of a run, with counts and the exit status."""

    results: list[CaseResult]
    implementations: list[str]
    strict: bool = False
    started_at: str = ""
    duration_ms: float = 0.0
    #: runs never started because --max-fail was reached
    not_started: int = 0
    #: implementation name -> netns, guard or none (spec/replay.md 9.1)
    isolation: dict[str, str] = field(default_factory=dict)
    #: (K, N) when this run is shard K of N (``--shard``)
    shard: tuple[int, int] | None = None
    #: a live run's totals ``{provenance, calls, cost_usd, budget, max_cost_usd}``, or None
    live: LiveTotals | None = None
    #: a conformance run's levels ``{impl: {level, next, blocked_by}}`` (conformance.md 9)
    levels: dict[str, ConformanceLevel] | None = None

    @property
    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(VERDICTS, 0)
        for r in self.results:
            out[r.verdict] += 1
        return out

    @property
    def exit_status(self) -> int:
        """0 when everything passed (drifted too unless strict), else 3."""
        return 0 if all(r.passed(self.strict) for r in self.results) else 3


def run_case(
    path: str | os.PathLike[str],
    implementation: str | Implementation = "threads-py",
    agent: AgentSpec | AgentRef | str | None = None,
    *,
    supply: JsonObject | None = None,
    live: LiveRun | None = None,
    app_dir: Sequence[str | os.PathLike[str]] = (),
) -> CaseResult:
    """Run one case on one implementation (spec/replay.md); never raises for a bad case.
    ``live`` runs its turn live (spec/replay.md section 11).

    ``implementation`` is a name (``"threads-py"`` runs in process; ``"threads-ts"`` and
    configured names start their driver) or an :class:`Implementation`.
    ``agent`` replays your own agent instead of the recorded one (spec/replay.md 8): an
    :class:`AgentSpec` (threads-py in process), or a reference the implementation loads
    (``"my_agent:agent"`` for threads-py, ``"./agent.mjs#agent"`` for threads-ts; an
    :class:`AgentRef`), its imports found in ``app_dir`` (default: the current folder).
    Returns a :class:`CaseResult`; ``result.passed(strict)`` says whether it counts as
    passing, ``str(result)`` shows why not.

    Raises :class:`~threads_cases.CaseError` for a refusal of its arguments, never a
    TypeError: ``invalid_request`` for a ``path`` that is not a str or PathLike, an
    ``implementation`` that is neither a name nor an :class:`Implementation`, or a
    ``supply`` of the wrong shape; the implementation's own code when a named one is unknown
    or cannot start (``driver_unavailable``).
    """
    check_arguments(path, implementation)
    spec, ref = split_agent(agent, app_dir)
    if isinstance(implementation, str):
        if implementation != "threads-py":
            from .registry import open_implementation

            impl = open_implementation(implementation)
        else:
            from ...protocol.server import PythonImplementation

            impl = PythonImplementation(spec)
    else:
        impl = implementation
    try:
        return run_one(Path(path), impl, supply_calls(supply), live=live, agent=ref)
    finally:
        if isinstance(implementation, str):
            impl.close()  # a driver started here is not left running


def could_not_run(result: CaseResult, impl: Implementation, err: CaseError) -> None:
    """Record a run that could not happen: ``skip`` when an implementation nobody named is
    unavailable here, ``error`` otherwise (spec/driver-protocol.md 5.4)."""
    unavailable = err.code == "driver_unavailable" and impl.restarts == 0
    result.verdict = "skip" if unavailable and not impl.required else "error"
    result.reasons = [err.code]
    result.message = err.render()
    result.location = err.location
    result.hint = err.hint


def run_one(
    path: Path,
    impl: Implementation,
    supply: dict[str, Any] | None = None,
    opened: Inspected | None = None,
    live: LiveRun | None = None,
    agent: AgentRef | None = None,
) -> CaseResult:
    """Run one case directory on an open implementation (not closed); never raises for a bad
    case: one that cannot be run is ``error`` (or ``skip``, :func:`could_not_run`), one whose
    ``dialects`` lack the implementation's dialect ``skip`` (``not_listed``). ``supply``: a
    checked ``calls`` mapping (:func:`run_case`); ``opened``: the case as ``inspect_case``
    found it (read once per suite); ``live``: run the turn live (spec/replay.md section 11);
    ``agent``: the user's own agent, which the implementation loads (spec/replay.md 8)."""
    started = time.perf_counter()
    result = CaseResult(path.name, str(path), impl.name, "error")
    try:
        case, problems = opened if opened is not None else inspect_case(path)
        err = first_blocking(problems)
        if case is not None and not case.fingerprint_ok:  # whatever the verdict, as validate
            result.warnings.append("fingerprint_stale")
        if case is None or (err is not None and err.location.file == str(path / "case.json")):
            assert err is not None
            result.unreadable = True
            raise err
        result.case = case.name
        if impl.dialect not in case.dialects:
            # an implementation runs every case holding a log in its dialect
            result.verdict = "skip"
            result.reasons = ["not_listed"]
            result.message = (
                f"the case does not list {impl.name}'s dialect {impl.dialect} "
                f"(case.json dialects: {', '.join(case.dialects)})"
            )
            return result
        if err is not None:
            result.unreadable = True
            raise err  # the case is broken, not the agent (spec/replay.md 6.1)
        if not case.meta["expect"]["must"] and not case.meta["expect"]["expect"]:
            result.warnings.append("no_expectations")  # saved with --no-draft
        # an in-process implementation uses the checked case instead of reading it again
        lend = getattr(impl, "lend", None)
        with lend(case) if lend is not None else contextlib.nullcontext():
            if live is not None:
                # the ledger counts the calls even when the run then fails (its spend is real)
                replies = case.read("model.json")["replies"]
                ledger = live.ledger(replies, supply, f"{case.name} on {impl.name}")
                result.live_replies = ledger.replies
                try:
                    checks, stop, given = check_live_case(
                        case, impl, ledger, live.options, supply=supply, agent=agent
                    )
                finally:
                    result.live = ledger.to_json()
                    result.divergence = ledger.divergence()  # the first reply that differs
                result.answers = answers_of(given, ledger.replies)
            else:
                found = check_case(case, impl, supply=supply, agent=agent)
                checks, stop = found.checks, found.stop
                result.divergence = None if found.divergence is None else found.divergence.to_json()
                result.agent_changes = found.agent_changes
                result.answers = answers_of(found.provenance) if supply else None  # 11.11
        result.checks = checks
        result.stop = cast("StopRecord | None", stop)  # a replay answer's stop
        result.verdict, result.reasons = verdict_of(checks)
    except CaseError as err:
        could_not_run(result, impl, err)
    except Exception as exc:  # one bad case never sinks a run (spec/reports.md 5.3)
        if os.environ.get("THREADS_CASES_DEBUG"):
            raise
        could_not_run(result, impl, internal_error(exc))
    finally:
        result.duration_ms = (time.perf_counter() - started) * 1000
    return result


def lost_run(path: Path, impl: Implementation) -> CaseResult:
    """The ``error`` of a run whose worker process ended before it answered (killed, out of
    memory: harness/run/forked.py): ``internal_error``, and the suite goes on."""
    result = CaseResult(path.name, str(path), impl.name, "error")
    could_not_run(result, impl, internal_error(RuntimeError("the worker process running it ended")))
    return result


def internal_error(exc: BaseException) -> CaseError:
    """An unexpected exception as ``CaseError("internal_error")`` with a one-line message
    (its type and first line), for the verdict ``error`` of one case."""
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    return CaseError(
        "internal_error",
        f"{type(exc).__name__}: {first[:300]}" if first else type(exc).__name__,
        hint="a bug in threads-cases or the implementation: please report it with this case",
    )


def _open_implementations(
    implementations: Sequence[str | Implementation], agent: AgentSpec | None
) -> list[Implementation]:
    """Each implementation opened: ``threads-py`` in process (with ``agent``), another name
    from the registry, an object as given."""
    from .registry import open_implementation

    impls: list[Implementation] = []
    for i in implementations:
        if i == "threads-py":
            from ...protocol.server import PythonImplementation

            impls.append(PythonImplementation(agent))
        elif isinstance(i, str):
            impls.append(open_implementation(i))
        else:
            impls.append(i)
    return impls


def run_suite(
    paths: Iterable[str | os.PathLike[str]],
    implementations: Sequence[str | Implementation] = ("threads-py",),
    *,
    agent: AgentSpec | None = None,
    agents: Mapping[str, AgentRef] | None = None,
    strict: bool = False,
    pattern: str | None = None,
    only: set[tuple[str, str]] | None = None,
    on_note: Callable[[str], None] | None = None,
    max_fail: int | None = None,
    jobs: int | None = 1,
    shard: tuple[int, int] | None = None,
    supply: JsonObject | None = None,
    on_result: Callable[[CaseResult], None] | None = None,
    on_plan: Callable[[int], None] | None = None,
    live: LiveRun | None = None,
    baseline: Baseline | None = None,
    repeat: Repeat | None = None,
) -> SuiteResult:
    """Run every case under ``paths`` on every implementation.

    ``agent`` replays your own :class:`AgentSpec` on ``threads-py`` in process; ``agents``
    maps implementation names to the agent each loads (:class:`AgentRef`,
    spec/replay.md 8: :func:`.agent_setup.agent_refs` reads ``--agent`` and the settings);
    the others replay the agent recorded in each case.
    ``on_plan(total)`` is called once with the number of runs planned, ``on_result(result)``
    after each. ``pattern`` selects case names (a glob, or a substring); ``only`` keeps just these
    ``(resolved case path, implementation)`` pairs (``--last-failed``; when none is among the
    selected runs, every run is kept and ``on_note`` says so: :func:`.setup.keep_only`);
    ``max_fail`` stops starting
    new cases after that many failures or errors, exactly as a serial run would; ``jobs`` runs
    up to that many cases at once, in as many forked worker processes each loading, checking
    and replaying its cases with implementations of its own (:mod:`.forked`; threads and
    driver pools where it cannot fork), with results in the same order whatever ``jobs``
    is (``None``: :func:`.pool.default_jobs`, 1 unless the suite is large enough for
    another driver to pay for itself); ``shard=(K, N)``
    runs only the cases of shard K of N (:func:`threads_cases.harness.run.pool.shard_of`);
    ``baseline`` turns listed failures into ``xfail`` and stale entries into ``xpass``
    (:mod:`.expected`; every result then carries its judgement, which ``baseline update``
    and ``prune`` read); the entries of a name two of the cases share are applied to
    neither (:func:`.expected.set_aside`, a warning through ``on_note``); ``repeat`` runs each
    case that many times per implementation, one combined result each (:mod:`.repeat`).
    Raises ``CaseError("invalid_request")`` when no case is found.
    """
    from ..check.expected import apply_shared, shared_listed

    supply = supply_calls(supply)
    if live is not None:
        jobs = 1
    cases = _in_shard(suite_cases(list(paths), pattern), shard)
    impls = _open_implementations(implementations, agent)
    work = keep_only([(c, i) for c in cases for i in impls], only, on_note)
    check_named_runs(work)  # a named implementation must run something (not all not_listed)
    if on_plan is not None:
        on_plan(len(work))
    shared = shared_listed(cases, baseline, on_note)  # names whose entries mean two cases
    started = time.time()
    t0 = time.perf_counter()
    if jobs is None:
        jobs = default_jobs(len(cases), impls)
    items = [(c, impls.index(i)) for c, i in work]
    opened = OpenedCases([c for c, _ in work])
    refs = dict(agents or {})  # the user's own agent of each implementation that has one
    named: set[Path] = set()  # the cases whose case.json name a result carries (this process)

    def unjudged(item: tuple[Path, int]) -> CaseResult:
        impl = impls[item[1]]
        ref = refs.get(impl.name)

        def body(o: Inspected) -> CaseResult:  # once, or ``repeat.runs`` times combined
            return repeat_runs(lambda: run_one(item[0], impl, supply, o, live, ref), repeat, strict)

        result = opened.run(item[0], body)
        if item[0] not in named:  # case.json's bytes are remembered by now (case/once.py)
            named.add(item[0])
            result.case_json_name = peek_case_name(item[0]) or ""
        return result

    def judged(r: CaseResult) -> CaseResult:
        return r if baseline is None else apply_shared(r, baseline, shared, strict)

    try:
        results = run_items(  # impls pooled in place when they run on threads
            items,
            impls,
            unjudged,
            judged,
            lost=lambda item: lost_run(item[0], impls[item[1]]),
            in_worker=encode_result,  # the report line encoded where it ran (.encoded)
            jobs=jobs,
            live=live is not None,
            failed=lambda r: not r.passed(strict),
            max_fail=max_fail,
            on_result=on_result,
        )
    finally:
        for impl in impls:
            impl.close()
    return _suite_of(results, impls, strict, (started, t0), shard, live)


def _suite_of(
    results: list[CaseResult | None],
    impls: list[Implementation],
    strict: bool,
    began: tuple[float, float],
    shard: tuple[int, int] | None,
    live: LiveRun | None,
) -> SuiteResult:
    """The :class:`SuiteResult` of a run's results in work order (``None``: never started),
    ``began`` being the run's ``(time.time(), time.perf_counter())`` at its start."""
    done = [r for r in results if r is not None]
    return SuiteResult(
        done,
        [i.name for i in impls],
        strict,
        time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(began[0])),
        (time.perf_counter() - began[1]) * 1000,
        not_started=len(results) - len(done),
        isolation={i.name: isolation_of(i) for i in impls},
        shard=shard,
        live=None if live is None else _live_totals(live, done),
    )


def _in_shard(cases: list[Path], shard: tuple[int, int] | None) -> list[Path]:
    """The cases of shard K of N (``--shard K/N``: :func:`.pool.shard_of`), or all of them."""
    if shard is None:
        return cases
    return [c for c in cases if shard_of(c.name, shard[1]) == shard[0]]


def isolation_of(impl: Implementation) -> str:
    """``netns``, ``guard`` or ``none``: what ``impl`` runs under (its ``isolation``
    attribute; an implementation object without one is ``none``)."""
    value = getattr(impl, "isolation", "none")
    return value if value in ("netns", "guard", "none") else "none"


def _live_totals(live: LiveRun, done: list[CaseResult]) -> LiveTotals:
    """The run's live totals (harness/live/desk.py ``live_totals``); loaded only by a live
    run, so a replay that is not live never imports harness.live."""
    from ..live.desk import live_totals

    return live_totals(live, done)
