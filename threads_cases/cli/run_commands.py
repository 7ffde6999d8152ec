"""``run``: replay cases on implementations and report verdicts (spec/replay.md)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..core.errors import CaseError
from ..core.statedir import state_path
from ..core.strictjson import read_json_file
from .agent_options import AgentOpt, AppDirOpt, agents_of
from .app import app, console, note, print_json, print_refusal, render_error
from .live_options import (
    AllowWriteOpt,
    BaseUrlOpt,
    BudgetOpt,
    LiveOpt,
    LiveRetriesOpt,
    LiveTimeoutOpt,
    MaxCostOpt,
    ModelOpt,
    PricesOpt,
    ProviderOpt,
    SystemFileOpt,
    build_live,
)
from .params import (
    ReportFormat,
    check_baseline,
    check_exists,
    check_file,
    check_not_input,
    check_out_file,
    checked,
)
from .repeat_options import FailUnderRateOpt, RepeatOpt, build_repeat

if TYPE_CHECKING:
    from ..harness.baseline.file import Baseline
    from ..harness.report.reporters import Terminal
    from ..harness.run.runner import SuiteResult

LAST_REPORT = "last-report.jsonl"
#: conformance keeps its own, so `run --last-failed` and `stale` never read a suite report
LAST_CONFORMANCE = "last-conformance.jsonl"
#: Options shared by `run` and `conformance`.
FormatOpt = Annotated[
    ReportFormat, typer.Option("--format", help="Output: pretty, json (JSON Lines) or github.")
]
JunitOpt = Annotated[
    Path | None,
    typer.Option("--junit", help="Also write JUnit XML here.", callback=checked(check_out_file)),
]
StrictOpt = Annotated[bool, typer.Option("--strict", help="Count drifted cases as failing.")]
TimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        min=0.1,
        help="Seconds per driver request (default: the implementation's, else 60).",
    ),
]
IsolatedOpt = Annotated[
    bool, typer.Option("--isolated", help="Run threads-py as a subprocess driver.")
]
IsolationOpt = Annotated[
    str | None,
    typer.Option(
        "--isolation",
        help="netns (drivers in an empty network namespace), guard (in-process guard, best "
        "effort) or none. Default: netns where available, else guard.",
    ),
]
BaselineOpt = Annotated[
    Path | None,
    typer.Option(
        "--baseline",
        help="Expected failures (default: baseline under [tool.threads-cases], else "
        ".threads-cases/baseline.json when it exists): listed failures give xfail, "
        "listed cases that pass give xpass (failing).",
        callback=checked(check_baseline),
    ),
]
ValidateProtocolOpt = Annotated[
    bool,
    typer.Option("--validate-protocol", help="Check every driver message against schemas/driver/."),
]


def refuse(err: CaseError, fmt: str) -> typer.Exit:
    """A refusal before start: exit 2, ``{"code","message"}`` on stdout under --format json,
    the message led by the error's location (file, line, JSON pointer) as on stderr."""
    if fmt == "json":  # one line, as the report it replaces would be JSON Lines
        print_refusal(err)
    else:
        render_error(err)
    return typer.Exit(2)


def emit(
    suite: SuiteResult,
    fmt: str,
    junit: Path | None,
    command: str,
    title: str,
    terminal: Terminal | None = None,
) -> None:
    """Hand the finished run to the reporters its options chose (harness/report/reporters.py):
    the ``--format`` output (``terminal`` for pretty, by default the suite's view, with the
    warnings about the cases after it), the ``--junit`` file, then the kept last report."""
    from ..harness.report.reporters import (
        FinishedRun,
        GitHub,
        JsonLines,
        JUnit,
        LastReport,
        Reporter,
        Terminal,
        report_all,
    )
    from ..harness.report.suite import report_lines

    run = FinishedRun(suite, list(report_lines(suite, command)), command, title)
    reporters: list[Reporter] = []
    if fmt == "json":
        reporters.append(JsonLines())
    elif fmt == "github":
        reporters.append(GitHub(note))
    elif fmt != "none":
        from ..review.suite_warnings import CaseWarnings

        reporters.append(terminal or Terminal(console()))
        if terminal is None:
            reporters.append(CaseWarnings(lambda m: note(m, "yellow")))
    if junit is not None:
        reporters.append(JUnit(junit))
    # outside any case: a file written into a case would make it invalid (core.statedir)
    keep = state_path(LAST_CONFORMANCE if command == "conformance" else LAST_REPORT)
    reporters.append(LastReport(keep, note))
    report_all(reporters, run)


def choose_isolation(asked: str | None) -> str:
    """The isolation mode for this run: ``asked``, else netns where available, else guard.
    Raises ``CaseError("invalid_request")`` for an unknown or impossible mode."""
    from ..harness.run.isolation import check_mode, default_isolation

    return check_mode(asked) if asked is not None else default_isolation()


#: the isolation modes, weakest first (spec/replay.md 9.1)
_STRENGTH = ("none", "guard", "netns")


def announce_isolation(impls: list[Any]) -> None:
    """The stderr line saying what each implementation runs under, when one runs under less
    than this machine's default (``--isolation guard`` where netns works, a driver of the
    user's without a namespace), or under ``--verbose``: the default on every run is noise
    (the report header records it always); a warning for ``none``."""
    from ..harness.run.isolation import APPLIED, default_isolation
    from ..harness.run.runner import isolation_of
    from .native import verbosity

    modes = {i.name: isolation_of(i) for i in impls}
    floor = _STRENGTH.index(default_isolation())
    if verbosity() > 0 or any(_STRENGTH.index(m) < floor for m in modes.values()):
        line = "isolation: " + ", ".join(f"{n} {m}" for n, m in modes.items())
        note(line + (f" ({APPLIED})" if "netns" in modes.values() else ""))
    bare = [n for n, m in modes.items() if m == "none"]
    if bare:
        note(
            f"warning: {', '.join(bare)} run(s) without isolation: a replayed tool can reach "
            "the network (use --isolation netns, or guard for the built-in implementations)",
            "yellow",
        )


def open_baseline(path: Path | None) -> Baseline:
    """The run's baseline (harness/baseline/file.py ``load_baseline``), with a warning on stderr
    for every entry naming an implementation that is not known (it can never match) and
    for the entries whose reason is still the placeholder ``baseline update`` wrote."""
    from ..harness.baseline.file import (
        load_baseline,
        unknown_implementation,
        unknown_implementation_warning,
    )
    from ..harness.run.registry import available_implementations

    baseline = load_baseline(path)
    for entry in unknown_implementation(baseline, available_implementations()):
        note(unknown_implementation_warning(entry), "yellow")
    todo = baseline.todo
    if todo:
        note(
            f"warning: {len(todo)} baseline entr{'y' if len(todo) == 1 else 'ies'} in "
            f"{baseline.path} still say{'s' if len(todo) == 1 else ''} {todo[0].reason!r}: "
            "write why each case fails (and an issue link)",
            "yellow",
        )
    return baseline


def load_supply(path: Path | None) -> dict[str, Any] | None:
    """The checked ``calls`` of ``--supply FILE``: a supply document, or an MCP session
    cassette read as one (spec/importers.md section 10)."""
    if path is None:
        return None
    from ..importers.mcp import is_mcp_cassette, mcp_supply, supply_refusal
    from ..reference.replay import check_supply  # the runtime, only when answers are given

    if is_mcp_cassette(path):
        return check_supply(mcp_supply(path), source=str(path))
    try:
        doc = read_json_file(path, code="invalid_request")
    except CaseError as err:  # a cassette of LLM calls, say, is no supply: say what it is
        raise supply_refusal(err, path) from None
    return check_supply(doc, source=str(path))


class _Progress:
    """The run's progress bar on stderr when ``shown`` (pretty output on a terminal)."""

    def __init__(self, shown: bool) -> None:
        self.bar: Any = None
        self.task: Any = None
        if not shown:
            return
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            console=console("stderr"),
            transient=True,
        )
        self.bar.start()
        self.task = self.bar.add_task("running", total=None)

    def tick(self, _r: Any) -> None:
        if self.bar is not None and self.task is not None:
            self.bar.advance(self.task)

    def plan(self, total: int) -> None:
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, total=total)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


def _last_failed_only(last_failed: bool) -> set[tuple[str, str]] | None:
    """``--last-failed``: the pairs that failed in the last report (None: run everything)."""
    from ..harness.run.setup import last_failed_pairs

    if not last_failed:
        return None
    report = state_path(LAST_REPORT)
    if not report.is_file():  # the first run here: not "no failures", say so
        note(f"no report yet at {report} (a run writes it): running everything")
        return None
    only = last_failed_pairs(report, note)
    if only is None:
        note(f"no failures in the last report ({report}): running everything")
    return only


def _run_with_progress(
    fmt: str,
    paths: list[Path] | None,
    impls: list[Any],
    *,
    jobs: int | None,
    shard: str | None,
    **options: Any,
) -> SuiteResult:
    """:func:`run_suite` on ``paths`` (default: the current folder) with ``--jobs`` (default:
    :func:`threads_cases.harness.run.pool.default_jobs` for the suite) and ``--shard``, and a
    progress bar for pretty output on a terminal. The isolation line comes once every
    refusal is behind (the cases found, the shard and the named implementations checked),
    just before the first case runs: never before a refusal, when nothing ran under any
    isolation; the warnings about shared case names come after the run, from the names its
    results carry (:func:`warn_shared_names`)."""
    from ..harness.run.pool import parse_shard

    parsed = parse_shard(shard) if shard is not None else None  # a refusal, before the bar
    progress = _Progress(fmt == "pretty" and sys.stderr.isatty())

    def plan(total: int) -> None:  # every refusal is behind: the run starts
        announce_isolation(impls)
        from ..harness.run.agent_setup import agent_note

        line = agent_note(options.get("agents") or {}, [i.name for i in impls])
        if line:
            note(line)
        progress.plan(total)

    from ..case.once import one_run

    try:
        from ..harness.run.runner import run_suite

        with one_run():  # each case.json read once, the cases found once (issue 33)
            suite = run_suite(
                paths or [Path(".")],
                impls,
                jobs=jobs,  # None: the default for this suite (harness/run/pool.py)
                shard=parsed,
                on_result=progress.tick,
                on_plan=plan,
                **options,
            )
            progress.stop()
            warn_shared_names(paths or [Path(".")], suite)  # the cases as the run found them
            return suite
    finally:
        progress.stop()


@app.command()
def run(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Case directories, or folders holding them (default: current folder).",
            callback=checked(check_exists),
        ),
    ] = None,
    impl: Annotated[
        list[str] | None,
        typer.Option(
            "--impl",
            help="Implementation to run (repeatable; default: the impl setting, else every "
            "available).",
        ),
    ] = None,
    fmt: FormatOpt = "pretty",
    junit: JunitOpt = None,
    strict: StrictOpt = False,
    pattern: Annotated[
        str | None, typer.Option("-k", help="Only case names matching (glob or substring).")
    ] = None,
    max_fail: Annotated[
        int | None, typer.Option("--max-fail", min=1, help="Stop after N failures.")
    ] = None,
    last_failed: Annotated[
        bool, typer.Option("--last-failed", help="Rerun what failed last time.")
    ] = False,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs",
            "-j",
            min=1,
            help="Cases run at once, in N worker processes each with its own implementations "
            "(default: 1, or one per 400 cases up to the CPU count when an implementation "
            "runs as a driver). The report is the same whatever N.",
        ),
    ] = None,
    shard: Annotated[
        str | None,
        typer.Option(
            "--shard",
            help="K/N: run only the cases of shard K of N (by a hash of the case's folder "
            "name); merge the reports with `threads-cases report merge`.",
        ),
    ] = None,
    supply: Annotated[
        Path | None,
        typer.Option(
            "--supply",
            help='Answers the recording lacks: {"calls": {...}}, or an MCP session cassette '
            "(its tools/call answers).",
            callback=checked(check_file),
        ),
    ] = None,
    timeout: TimeoutOpt = None,
    isolated: IsolatedOpt = False,
    isolation: IsolationOpt = None,
    validate_protocol: ValidateProtocolOpt = False,
    baseline: BaselineOpt = None,
    show_schema: Annotated[
        bool, typer.Option("--schema", help="Print the JSON report's schema and exit.")
    ] = False,
    accept: Annotated[
        bool,
        typer.Option(
            "--accept", help="Then accept each drifted case from its replay (see `accept`)."
        ),
    ] = False,
    live: LiveOpt = False,
    model: ModelOpt = None,
    system_file: SystemFileOpt = None,
    provider: ProviderOpt = "anthropic",
    base_url: BaseUrlOpt = None,
    live_budget: BudgetOpt = 20,
    max_cost_usd: MaxCostOpt = None,
    prices: PricesOpt = None,
    allow_write: AllowWriteOpt = None,
    live_timeout: LiveTimeoutOpt = 600.0,
    live_retries: LiveRetriesOpt = 2,
    agent: AgentOpt = None,
    app_dir: AppDirOpt = None,
    repeat: RepeatOpt = 1,
    fail_under_rate: FailUnderRateOpt = None,
) -> None:
    """Replay every case under PATHS on each implementation and report one verdict per pair.

    Exit status: 0 all passed (drifted too, unless --strict; xfail too); 3 a case failed or
    errored, or a baseline entry no longer fails (xpass); 2 refused before start; 1
    operational error.
    """
    if show_schema:
        return print_report_schema()
    from ..harness.run.registry import strict_setting
    from ..harness.run.setup import REFUSALS, check_live_accept, suite_implementations

    check_not_input(junit, [p for p in (baseline, supply) if p is not None], "input")
    try:
        check_live_accept(live, accept)
        live_run = build_live(
            live,
            model=model,
            system_file=system_file,
            provider=provider,
            base_url=base_url,
            budget=live_budget,
            max_cost_usd=max_cost_usd,
            prices=prices,
            allow_write=allow_write,
            timeout=live_timeout,
            retries=live_retries,
        )
        supplied = load_supply(supply)
        agents = agents_of(agent, app_dir)
        expected = open_baseline(baseline)
        strict = strict or strict_setting()
        impls = suite_implementations(
            impl,
            timeout=timeout,
            isolated=isolated,
            validate_protocol=validate_protocol,
            isolation=isolation,
        )
        suite = _run_with_progress(
            fmt,
            paths,
            impls,
            jobs=jobs,
            shard=shard,
            strict=strict,
            pattern=pattern,
            only=_last_failed_only(last_failed),
            on_note=note,
            max_fail=max_fail,
            supply=supplied,
            live=live_run,
            baseline=expected,
            agents=agents,
            repeat=build_repeat(repeat, fail_under_rate, live_run, supplied),
        )
    except CaseError as err:
        if err.code in REFUSALS:
            raise refuse(err, fmt) from None
        raise
    emit(suite, fmt, junit, "run", "case")
    if live_run is not None:
        keep_live(suite, live_run)
    if accept and fmt != "json":
        accept_drifted(suite, supplied, agents)
    raise typer.Exit(suite.exit_status)


def print_report_schema() -> None:
    """``run --schema``: the JSON report's schema (schemas/report.schema.json)."""
    from ..core.schemas import schema_document

    print_json(schema_document("report.schema.json"))


def warn_shared_names(paths: list[Path], suite: SuiteResult) -> None:
    """Warn, naming both paths, when two cases under ``paths`` share a name: after the run,
    from the names its results carry (each read where its case ran: in a forked worker
    under ``--jobs N``, ``CaseResult.case_json_name``), reading case.json only for the
    cases that did not run (``-k``, ``--shard``, ``--max-fail``)."""
    from ..case.directory import shared_names
    from ..case.discovery import discover

    known = {r.path: r.case_json_name for r in suite.results if r.case_json_name is not None}
    for text in shared_names(discover(paths), known):
        note(text)


def keep_live(suite: SuiteResult, live: Any) -> None:
    """Keep the live replies for ``accept --from-live`` (.threads-cases/last-live.jsonl)."""
    from ..harness.live.record import LAST_LIVE, live_records, write_live_records

    keep = state_path(LAST_LIVE)
    try:
        write_live_records(live_records(suite, live.options), keep)
    except OSError as exc:
        note(f"warning: cannot keep the live replies in {keep}: {exc}")


def accept_drifted(
    suite: SuiteResult, supply: dict[str, Any] | None, agents: dict[str, Any]
) -> None:
    """``run --accept``: accept every drifted result's case on its implementation (the run's
    exit status is not changed; the next run shows the result)."""
    from .accept_commands import accept_paths

    for name in suite.implementations:
        paths = [
            Path(r.path)
            for r in suite.results
            if r.implementation == name and r.verdict == "drifted"
        ]
        if paths:
            accept_paths(paths, name, supply=supply, agent=agents.get(name))
