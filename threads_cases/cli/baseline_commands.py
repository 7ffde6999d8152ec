"""``baseline update`` and ``baseline prune``: keep the expected failures of a suite in line
with a run (spec/replay.md section 12; library: harness/baseline/edit.py)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..core.errors import CaseError
from .agent_options import AgentOpt, AppDirOpt, agents_of
from .app import app, console, note, print_json
from .params import check_exists, checked
from .run_commands import (
    BaselineOpt,
    IsolationOpt,
    StrictOpt,
    TimeoutOpt,
    choose_isolation,
    refuse,
)

if TYPE_CHECKING:
    from ..harness.baseline.edit import BaselineChange
    from ..harness.run.runner import SuiteResult

baseline_app = typer.Typer(
    name="baseline", help="Expected failures: update and prune the baseline.", no_args_is_help=True
)
app.add_typer(baseline_app)

PathsArg = Annotated[
    list[Path] | None,
    typer.Argument(
        help="Case directories, or folders holding them (default: current folder).",
        callback=checked(check_exists),
    ),
]
ImplOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--impl",
        help="Implementation to run (repeatable; default: the impl setting, else every available).",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the change as JSON.")]


def _run(
    paths: list[Path] | None,
    impl: list[str] | None,
    baseline: Path | None,
    options: _Options,
    *,
    creates: bool,
) -> tuple[Path, SuiteResult]:
    """Run the suite with the baseline applied; refusals exit 2 (one JSON line on stdout
    under --json). ``creates``: a named baseline file that does not exist is a new, empty
    one (update); otherwise it is refused with ``invalid_request``, as ``run`` does (prune).
    """
    from ..harness.baseline.file import (
        Baseline,
        load_baseline,
        locate_baseline,
        read_baseline,
        refuse_not_a_file,
    )
    from ..harness.run.registry import (
        available_implementations,
        configured,
        impl_setting,
        resolve_implementations,
        strict_setting,
    )
    from ..harness.run.runner import run_suite

    try:
        refuse_shared_names(paths or [Path(".")])
        path = locate_baseline(baseline)
        if creates:
            refuse_not_a_file(path, writing=True)
            current = read_baseline(path) if path.is_file() else Baseline(None)
        else:
            current = load_baseline(baseline)
        agents = agents_of(options.agent, options.app_dir)
        named = impl or impl_setting()
        impls = resolve_implementations(
            named or available_implementations(),
            timeout=options.timeout,
            required=True if named else set(configured()),
            isolation=choose_isolation(options.isolation),
        )
        suite = run_suite(
            paths or [Path(".")],
            impls,
            strict=options.strict or strict_setting(),
            jobs=None,  # the run default (harness/run/pool.py default_jobs)
            baseline=current,
            agents=agents,
        )
    except CaseError as err:
        if err.code in ("invalid_request", "dialect_unknown", "json_invalid", "baseline_invalid"):
            raise refuse(err, _fmt(options.as_json)) from None
        raise
    return path, suite


def refuse_shared_names(paths: list[Path]) -> None:
    """Raise ``CaseError("invalid_request")`` when two of the cases under ``paths`` share a
    name: baseline entries are keyed by case name, so an entry would stand for both and the
    one that passes would prune (or keep) the entry of the one that fails."""
    from ..case.directory import shared_name_groups
    from ..case.discovery import discover

    groups = shared_name_groups(discover(paths))
    if groups:
        name, named = groups[0]
        more = f" (and {len(groups) - 1} more shared name(s))" if len(groups) > 1 else ""
        raise CaseError(
            "invalid_request",
            f"the cases {', '.join(named)} share the name {name!r}{more}: baseline entries "
            "are keyed by case name, so one entry would stand for both",
            hint="rename one case (case.json `name`): every case of a baseline needs its own name",
        )


def _fmt(as_json: bool) -> str:
    return "json" if as_json else "pretty"


@dataclass(frozen=True)
class _Options:
    strict: bool
    timeout: float | None
    isolation: str | None
    as_json: bool
    #: the user's own agent per implementation (--agent, spec/replay.md 8.2)
    agent: list[str] | None = None
    app_dir: list[Path] | None = None


def _unavailable(suite: SuiteResult) -> list[str]:
    """The named implementations that could not start (every result ``error
    driver_unavailable``): this run judged none of their cases, so neither update nor prune
    changed their entries. Each is named on stderr (an error: -q keeps it)."""
    from ..harness.report.suite import unavailable_lines

    down = sorted(
        {
            r.implementation
            for r in suite.results
            if r.verdict == "error" and r.reasons == ["driver_unavailable"]
        }
    )
    for line in unavailable_lines(suite):
        if line.startswith("error["):
            print(line + "; its baseline entries were not judged", file=sys.stderr)
    return down


def _finish(change: BaselineChange, suite: SuiteResult, verb: str, as_json: bool) -> None:
    """Print the change, then exit 1 (an operational error) when a named implementation
    could not start: the file holds what the others judged, but that one was not judged."""
    down = _unavailable(suite)
    _show(change, verb, as_json, down)
    if down:
        raise typer.Exit(1)


#: How many entries the count line names when the run did not judge them.
NOT_JUDGED_SHOWN = 10


def _not_judged(change: BaselineChange) -> str:
    """``; N not judged by this run: a [impl], ...`` (the first :data:`NOT_JUDGED_SHOWN`),
    so that the entries a partial run keeps are seen; "" when it judged every entry."""
    if not change.unjudged:
        return ""
    named = ", ".join(e.label for e in change.not_judged[:NOT_JUDGED_SHOWN])
    more = change.unjudged - min(len(change.not_judged), NOT_JUDGED_SHOWN)
    return f"; {change.unjudged} not judged by this run: {named}" + (
        f" and {more} more" if more > 0 else ""
    )


def _show(change: BaselineChange, verb: str, as_json: bool, down: list[str]) -> None:
    entries = change.added or change.removed
    if as_json:
        print_json(
            {
                "path": str(change.path),
                "added": [e.to_json() for e in change.added],
                "removed": [e.to_json() for e in change.removed],
                "unknown_implementation": [e.to_json() for e in change.unknown],
                "total": change.total,
                "written": change.written,
                "unjudged": change.unjudged,
                "not_judged": [e.to_json() for e in change.not_judged],
                "unavailable": down,
            }
        )
        return
    for e in entries:
        code = f" {e.code}" if e.code else ""
        why = f" (the implementation {e.implementation!r} is not known)" * (e in change.unknown)
        console("stdout").print(
            f"{'+' if change.added else '-'} {e.label}{code}: {e.reason}{why}", markup=False
        )
    console("stdout").print(
        f"{change.path}: {len(entries)} {verb}, {change.total} entr"
        f"{'y' if change.total == 1 else 'ies'}"
        + ("" if change.written else " (unchanged)")
        + _not_judged(change)
        + (f"; not judged: {', '.join(down)} could not start" if down else ""),
        markup=False,
    )


def _warn_unreadable(suite: SuiteResult) -> None:
    """A warning naming the cases the run could not read: a baseline never lists them
    (spec/replay.md 12.3), so they stay ``error`` until someone fixes them."""
    broken = sorted(
        {(r.path, r.reasons[0] if r.reasons else "") for r in suite.results if r.unreadable}
    )
    if not broken:
        return
    shown = ", ".join(f"{p} ({code})" for p, code in broken[:5]) + (
        " ..." if len(broken) > 5 else ""
    )
    note(
        f"warning: {len(broken)} case(s) cannot be read and get no entry (a baseline never "
        f"lists a broken case; they stay error): {shown}; `threads-cases validate CASE` "
        "names every problem",
        "yellow",
    )


@baseline_app.command()
def update(
    paths: PathsArg = None,
    impl: ImplOpt = None,
    baseline: BaselineOpt = None,
    reason: Annotated[
        str | None,
        typer.Option("--reason", help="Why the new entries fail (default: a TODO to edit)."),
    ] = None,
    issue: Annotated[
        str | None, typer.Option("--issue", help="An http(s) link for the new entries.")
    ] = None,
    strict: StrictOpt = False,
    timeout: TimeoutOpt = None,
    isolation: IsolationOpt = None,
    as_json: JsonOpt = False,
    agent: AgentOpt = None,
    app_dir: AppDirOpt = None,
) -> None:
    """Run PATHS and add every failure the baseline does not list to it (one entry per case,
    implementation, check and reason code; existing entries are kept as they are).

    New entries get --reason, or the placeholder "TODO: say why this fails" that every run
    then warns about. A --baseline FILE that does not exist is created. Exit status: 0
    written (or nothing to add); 2 bad arguments, a malformed baseline or two cases that
    share a name (an entry would stand for both); 1 operational error (a named
    implementation that could not start: its entries were not judged).
    """
    if reason is not None and not reason.strip():
        raise refuse(CaseError("invalid_request", "--reason must say something"), _fmt(as_json))
    if issue is not None and not issue.startswith(("http://", "https://")):
        bad = CaseError("invalid_request", f"--issue must be an http(s) link: {issue!r}")
        raise refuse(bad, _fmt(as_json))
    from ..harness.baseline.edit import update_baseline

    options = _Options(strict, timeout, isolation, as_json, agent, app_dir)
    path, suite = _run(paths, impl, baseline, options, creates=True)
    change = update_baseline(path, suite.results, reason=reason, issue=issue)
    _warn_unreadable(suite)
    if change.added and reason is None and not as_json:
        note(
            f"warning: the new entries say 'TODO: say why this fails': edit {path} "
            "(or pass --reason) before committing it",
            "yellow",
        )
    _finish(change, suite, "added", as_json)


@baseline_app.command()
def prune(
    paths: PathsArg = None,
    impl: ImplOpt = None,
    baseline: BaselineOpt = None,
    strict: StrictOpt = False,
    timeout: TimeoutOpt = None,
    isolation: IsolationOpt = None,
    as_json: JsonOpt = False,
    agent: AgentOpt = None,
    app_dir: AppDirOpt = None,
) -> None:
    """Run PATHS and remove every baseline entry whose failure is gone (each run's xpass), and
    every entry naming an implementation that is not known (it can never match).

    Entries of cases this run did not judge (not under PATHS, skipped, an implementation that
    could not start) are kept, and named in the count line. Exit status: 0 pruned (or nothing
    stale); 2 bad arguments, a malformed baseline, a named one that does not exist or two
    cases that share a name (an entry would stand for both); 1 operational error (a named
    implementation that could not start: its entries were not judged).
    """
    from ..harness.baseline.edit import prune_baseline
    from ..harness.run.registry import available_implementations

    options = _Options(strict, timeout, isolation, as_json, agent, app_dir)
    path, suite = _run(paths, impl, baseline, options, creates=False)
    change = prune_baseline(path, suite.results, available_implementations())
    _finish(change, suite, "removed", as_json)
