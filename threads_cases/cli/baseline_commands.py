"""``baseline update`` and ``baseline prune``: keep the expected failures of a suite in line
with a run (spec/replay.md section 12; library: harness/baseline_edit.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..core.errors import CaseError
from .app import app, note, print_json, render_error, stdout
from .params import check_exists, checked
from .run_commands import BaselineOpt, IsolationOpt, StrictOpt, TimeoutOpt, choose_isolation

if TYPE_CHECKING:
    from ..harness.baseline_edit import BaselineChange
    from ..harness.runner import SuiteResult

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
    typer.Option("--impl", help="Implementation to run (repeatable; default: every available)."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the change as JSON.")]


def _run(
    paths: list[Path] | None,
    impl: list[str] | None,
    baseline: Path | None,
    strict: bool,
    timeout: float | None,
    isolation: str | None,
) -> tuple[Path, SuiteResult]:
    """Run the suite with the baseline applied; refusals exit 2."""
    from ..harness.baseline import Baseline, locate_baseline, read_baseline
    from ..harness.registry import (
        available_implementations,
        configured,
        resolve_implementations,
        strict_setting,
    )
    from ..harness.runner import run_suite

    try:
        path = locate_baseline(baseline)  # update creates it when missing
        current = read_baseline(path) if path.is_file() else Baseline(None)
        impls = resolve_implementations(
            impl or available_implementations(),
            timeout=timeout,
            required=True if impl else set(configured()),
            isolation=choose_isolation(isolation),
        )
        suite = run_suite(
            paths or [Path(".")],
            impls,
            strict=strict or strict_setting(),
            jobs=None,  # the run default (harness/pool.py default_jobs)
            baseline=current,
        )
    except CaseError as err:
        if err.code in ("invalid_request", "dialect_unknown", "json_invalid", "baseline_invalid"):
            render_error(err)
            raise typer.Exit(2) from None
        raise
    return path, suite


def _show(change: BaselineChange, verb: str, as_json: bool) -> None:
    entries = change.added or change.removed
    if as_json:
        print_json(
            {
                "path": str(change.path),
                "added": [e.to_json() for e in change.added],
                "removed": [e.to_json() for e in change.removed],
                "total": change.total,
                "written": change.written,
                "unjudged": change.unjudged,
            }
        )
        return
    for e in entries:
        code = f" {e.code}" if e.code else ""
        stdout.print(f"{'+' if change.added else '-'} {e.label}{code}: {e.reason}", markup=False)
    stdout.print(
        f"{change.path}: {len(entries)} {verb}, {change.total} entr"
        f"{'y' if change.total == 1 else 'ies'}"
        + ("" if change.written else " (unchanged)")
        + (f"; {change.unjudged} not judged by this run" if change.unjudged else ""),
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
) -> None:
    """Run PATHS and add every failure the baseline does not list to it (one entry per case,
    implementation, check and reason code; existing entries are kept as they are).

    New entries get --reason, or the placeholder "TODO: say why this fails" that every run
    then warns about. Exit status: 0 written (or nothing to add); 2 bad arguments or a
    malformed baseline; 1 operational error.
    """
    if reason is not None and not reason.strip():
        render_error(CaseError("invalid_request", "--reason must say something"))
        raise typer.Exit(2)
    if issue is not None and not issue.startswith(("http://", "https://")):
        render_error(CaseError("invalid_request", f"--issue must be an http(s) link: {issue!r}"))
        raise typer.Exit(2)
    from ..harness.baseline_edit import update_baseline

    path, suite = _run(paths, impl, baseline, strict, timeout, isolation)
    change = update_baseline(path, suite.results, reason=reason, issue=issue)
    _show(change, "added", as_json)
    _warn_unreadable(suite)
    if change.added and reason is None and not as_json:
        note(
            f"warning: the new entries say 'TODO: say why this fails': edit {path} "
            "(or pass --reason) before committing it",
            "yellow",
        )


@baseline_app.command()
def prune(
    paths: PathsArg = None,
    impl: ImplOpt = None,
    baseline: BaselineOpt = None,
    strict: StrictOpt = False,
    timeout: TimeoutOpt = None,
    isolation: IsolationOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run PATHS and remove every baseline entry whose failure is gone (each run's xpass).

    Entries of cases this run did not judge (not under PATHS, skipped, an implementation that
    could not start) are kept. Exit status: 0 pruned (or nothing stale); 2 bad arguments or a
    malformed baseline; 1 operational error.
    """
    from ..harness.baseline_edit import prune_baseline

    path, suite = _run(paths, impl, baseline, strict, timeout, isolation)
    _show(prune_baseline(path, suite.results), "removed", as_json)
