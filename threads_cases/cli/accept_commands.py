"""``accept``: rewrite the drifted parts of cases from their replay (spec/replay.md 10).

The library call is :func:`threads_cases.harness.run.accept.accept_case`; this module only
parses arguments and prints what changed as a semantic diff.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..core.errors import CaseError
from .agent_options import AgentOpt, AppDirOpt, agents_of
from .app import app, print_json, render_error

if TYPE_CHECKING:
    from ..reference.agent_ref import AgentRef
from .params import FormatOpt, check_exists, check_file, checked


def accept_paths(
    paths: list[Path],
    impl_name: str,
    *,
    force: bool = False,
    supply: dict[str, Any] | None = None,
    fmt: str = "pretty",
    from_live: bool = False,
    agent: AgentRef | None = None,
) -> int:
    """Accept every case under ``paths`` on ``impl_name``; print each change. Returns the exit
    status: 0 when every case was accepted or had nothing to accept, 3 when one was refused.
    ``from_live`` records the last live run's replies instead (spec/replay.md 11.8);
    ``agent`` is the user's own agent, whose replay is accepted (spec/replay.md 10.4)."""
    from ..case.discovery import discover
    from ..harness.live.record import find_live_record
    from ..harness.run.accept import accept_case, accept_from_live
    from ..harness.run.registry import open_implementation
    from ..review.diff import diff_case_files
    from .review_output import print_changes

    cases = discover(paths)
    if not cases:
        raise CaseError("invalid_request", "no cases found", hint="pass case directories")
    impl = open_implementation(impl_name, required=True)
    status = 0
    answers = []
    try:
        for path in cases:
            try:
                if from_live:
                    entry = find_live_record(path, impl_name)
                    done = accept_from_live(path, impl, entry, force=force)
                else:
                    done = accept_case(path, impl, force=force, supply=supply, agent=agent)
            except CaseError as err:
                status = 3
                answers.append(
                    {
                        "path": str(path),
                        "accepted": False,
                        **err.problem().to_json(),  # code, message and where
                        **({"hint": err.hint} if err.hint else {}),
                    }
                )
                if fmt != "json":
                    render_error(err)
                continue
            changes = diff_case_files(done.before, done.after, (str(path), str(path)))
            answers.append(
                {
                    "path": str(path),
                    "accepted": done.changed,
                    "verdict": done.verdict,
                    "reasons": done.result.reasons,
                    "changes": [c.to_json() for c in changes],
                }
            )
            if fmt == "json":
                continue
            if not done.changed:
                typer.echo(f"nothing to accept: {path} [{impl_name}] is {done.verdict}")
                continue
            reasons = ", ".join(done.result.reasons) or "-"
            typer.echo(f"accepted {path} [{impl_name}] (was {done.verdict}: {reasons})")
            print_changes(changes, f"{path} (before)", f"{path} (accepted)")
    finally:
        impl.close()
    if fmt == "json":
        print_json({"implementation": impl_name, "cases": answers})
    return status


@app.command()
def accept(
    paths: Annotated[
        list[Path],
        typer.Argument(help="Cases, or folders holding cases.", callback=checked(check_exists)),
    ],
    impl: Annotated[
        str, typer.Option("--impl", help="The implementation whose replay is accepted.")
    ] = "threads-py",
    force: Annotated[
        bool,
        typer.Option("--force", help="Also accept a failing replay (a must that no longer holds)."),
    ] = False,
    supply: Annotated[
        Path | None,
        typer.Option(
            "--supply",
            help='Answers to write into the case: {"calls": {...}}.',
            callback=checked(check_file),
        ),
    ] = None,
    fmt: FormatOpt = "pretty",
    from_live: Annotated[
        bool,
        typer.Option(
            "--from-live",
            help="Record the replies of the last `run --live` of each case as its new "
            "model.json (no provider is called).",
        ),
    ] = False,
    agent: AgentOpt = None,
    app_dir: AppDirOpt = None,
) -> None:
    """Rewrite the drifted parts of each case from its replay: request records and hashes,
    unused replies and stubs, the expected state when the reducer changed, the fingerprint.
    With --agent, the replay of your own agent is what is written (what it now asks the
    model, the tool results of its handlers, the sandbox reads).
    With --from-live, record the last live run's replies instead (a replay never takes
    them otherwise). Prints what changed. Exit 0 done, 3 a case refused (fail without
    --force, a stopped live turn, or error), 2 bad arguments.
    """
    from .run_commands import load_supply, refuse

    try:
        if from_live and supply is not None:
            raise CaseError(
                "invalid_request",
                "--from-live records the live run's replies: --supply cannot go with it",
            )
        supplied = load_supply(supply)
        mine = agents_of(agent, app_dir).get(impl)
        status = accept_paths(
            paths, impl, force=force, supply=supplied, fmt=fmt, from_live=from_live, agent=mine
        )
    except CaseError as err:
        if err.code in ("invalid_request", "dialect_unknown", "json_invalid"):
            raise refuse(err, fmt) from None
        raise
    raise typer.Exit(status)
