"""``import``, ``turns`` and ``draft``: real agent sessions in, turns listed, matchers drafted.

``threads-cases import FORMAT FILE -o LOG`` writes a canonical thread log from a Claude Code
or Codex transcript (threads_cases/importers/); ``turns LOG`` lists a log's turns with the
event ids ``save`` needs; ``draft LOG --turn N`` prints proposed matchers as JSON
``{"must": [...], "expect": [...]}``. Errors are ``error[code]: file:line: message`` plus a
hint (``import_invalid`` and ``io_error`` exit 1, ``invalid_request`` exits 2).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

import typer

from ..core.dialects import CANONICAL
from ..core.errors import CaseError
from .app import app, fail, note, print_json, wants_json
from .params import (
    AutoFormatOpt,
    FormatOpt,
    check_log,
    check_not_input,
    check_out_file_or_stdout,
    check_transcript,
    checked,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from ..importers import ImportReport, Stats


def report_stats(stats: Stats, *, verbose: bool, file: str | Path = "") -> None:
    """On stderr: the notes, one ``warning[import_repaired|import_skipped]: FILE:LINE:
    reason: message`` per repaired or skipped line, and with ``verbose`` every skipped kind."""
    for text in stats.notes:
        note(f"note: {text}")
    for w in stats.warnings:
        note(f"warning[{w.code}]: {file}:{w.line}: {w.reason}: {w.message}")
    # one count for what the warnings above skipped: a cut record joined to the next whole
    # record leaves no line skipped, yet it is a skipped piece the user is told about
    skips = sum(1 for w in stats.warnings if w.code == "import_skipped")
    if skips:
        note(f"skipped {skips} unreadable or malformed record(s), each named above")
    if verbose:
        if not stats.skipped:
            print("skipped: nothing", file=sys.stderr)
        for kind, n in sorted(stats.skipped.items()):
            print(f"skipped {n:>6}  {kind}", file=sys.stderr)


def import_summary(report: ImportReport) -> dict[str, Any]:
    """The JSON output of ``import --format json`` (spec/importers.md section 4)::

    {"output": str, "events": int, "turns": int, "bytes": int,
     "warnings": [{"line", "code": "import_repaired" | "import_skipped", "reason",
                   "message"}],
     "skipped": {kind: count}, "notes": [str]}
    """
    st = report.stats
    return {
        "output": str(report.path),
        "events": report.events,
        "turns": report.turns,
        "bytes": report.bytes,
        "warnings": [w.as_json() for w in st.warnings],
        "skipped": dict(sorted(st.skipped.items())),
        "notes": list(st.notes),
    }


@app.command("import")
def import_(
    fmt: Annotated[
        Literal[
            "claude-code", "codex", "vcr", "swe-agent", "inspect-ai", "openhands", "threads", "auto"
        ],
        typer.Argument(
            metavar="FORMAT",
            help="The transcript's format: claude-code, codex, vcr (a VCR cassette), swe-agent "
            "(a .traj trajectory), inspect-ai (a .eval or .json eval log), openhands (an "
            "OpenHands trajectory), threads (a `threads export` file) or auto (detected; a "
            "refusal names the formats tried).",
        ),
    ],
    file: Annotated[
        Path,
        typer.Argument(
            help="The transcript (JSON Lines), the cassette (YAML, plain or gzipped), or an "
            "OpenHands conversation folder (its events/, one file per event).",
            callback=checked(check_transcript),
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "-o",
            "--output",
            help="The thread log to write (- for standard output).",
            callback=checked(check_out_file_or_stdout),
        ),
    ],
    branch: Annotated[
        str | None,
        typer.Option("--branch", help="claude-code: follow the branch holding this uuid."),
    ] = None,
    prompt: Annotated[
        str | None,
        typer.Option(
            "--prompt", help="codex exec: the user prompt (the stream does not record it)."
        ),
    ] = None,
    sample: Annotated[
        str | None,
        typer.Option("--sample", help="inspect-ai: the sample id to import (default: the first)."),
    ] = None,
    epoch: Annotated[
        int | None,
        typer.Option("--epoch", min=1, help="inspect-ai: the sample's epoch (default: the first)."),
    ] = None,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict",
            help="Refuse the file at the first place the import would repair, skip or cut "
            "short with a warning (a line that is not strict JSON or is malformed, a stream "
            "or file cut short...); default: read it with the warning.",
        ),
    ] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Report on stderr what was skipped, per kind.")
    ] = False,
    out_format: FormatOpt = "pretty",
) -> None:
    """Import a Claude Code or Codex transcript, a VCR cassette of LLM API calls (vcr), a
    SWE-agent trajectory (swe-agent), one sample of an inspect-ai eval log (inspect-ai:
    --sample ID --epoch N, default the first) or an OpenHands trajectory (openhands) as a
    thread log (atomic: a refused import writes nothing); auto detects the format
    (spec/importers.md).

    Lines that are not strict JSON are read as their writer reads them, damaged lines are
    recovered or skipped, each with a warning naming the line (import_repaired,
    import_skipped); --strict refuses every such warning instead. --format json prints
    {output, events, turns, bytes, warnings: [{line, code, reason, message}], skipped, notes}
    (the notes and warnings then only there, not on stderr as well), and a refusal as
    {code, message} (same exit status). The default is pretty, piped too: the log goes to -o
    and stdout holds one status line; -o - writes the log to stdout and the status line to
    stderr (spec/reports.md 5.4).

    Exit status: 0 written; 1 with --strict a place a warning would name (error[import_invalid]:
    FILE:LINE: <line type or reason>: message), or an I/O error; 2 bad arguments.
    """
    from ..importers import import_to_file

    to_stdout = str(out) == "-"
    if to_stdout and out_format == "json":
        err = CaseError(
            "invalid_request",
            "-o - and --format json would both write standard output",
            hint="write the log to a file (-o FILE), or leave --format json out",
        )
        raise fail(err, out_format) from None
    check_not_input(None if to_stdout else out, [file], "transcript")

    def write(to: Path) -> ImportReport:
        return import_to_file(
            fmt, file, to, branch=branch, prompt=prompt, strict=strict, sample=sample, epoch=epoch
        )

    try:
        report = _import_to_stdout(write) if to_stdout else write(out)
    except CaseError as err:  # under --format json: {"code","message"} on stdout
        raise fail(err, out_format) from None
    if out_format == "json":  # the notes and warnings are in it: not on stderr as well
        print_json(import_summary(report))
        return
    report_stats(report.stats, verbose=verbose, file=file)
    status = f"{report.events} events, {report.turns} turn(s)"
    if to_stdout:  # the log is standard output: the status line goes beside the notes
        note(f"wrote standard output: {status}")
    else:
        typer.echo(f"wrote {out}: {status}")


def _import_to_stdout(write: Callable[[Path], ImportReport]) -> ImportReport:
    """``import -o -``: the log written whole into a temporary file first (``write``), so
    that a refused import writes nothing to standard output either, then copied there."""
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory(prefix="threads-cases-import-") as tmp:
        report = write(Path(tmp) / "log.jsonl")
        with report.path.open("rb") as src:
            shutil.copyfileobj(src, sys.stdout.buffer)
        sys.stdout.buffer.flush()
    return report


def _load(log: Path, dialect: str) -> list[dict[str, Any]]:
    try:
        from ..core.log import read_log

        return cast(list[dict[str, Any]], list(read_log(log, dialect=dialect)))
    except CaseError as err:
        raise fail(log_refusal(err, log)) from None


def log_refusal(err: CaseError, log: Path) -> CaseError:
    """The log reader's refusal of ``log``, or, when ``log`` is a recording ``import auto``
    detects, the refusal saying what it is and the command that imports it."""
    from ..importers.recordings import log_error

    return log_error(err, log)


@app.command()
def turns(
    log: Annotated[
        Path, typer.Argument(help="A thread log (JSON Lines).", callback=checked(check_log))
    ],
    fmt: AutoFormatOpt = None,
    dialect: Annotated[str, typer.Option("--dialect", help="The log's dialect.")] = CANONICAL,
) -> None:
    """List the turns of LOG, numbered from 1: the user input's first words, the tool calls
    and the event ids (fork point = the --at of `save`, user_message, terminal event).

    JSON: a list of {index, text, tools, fork_point, user_message, terminal, status,
    stop_reason, turn_id}.
    """
    from ..case.turns import list_turns
    from ..core.log import read_log

    try:
        found = list_turns(cast("Iterator[dict[str, Any]]", read_log(log, dialect=dialect)))
    except CaseError as err:
        raise fail(log_refusal(err, log)) from None
    if wants_json(fmt):
        print_json(found)
        return
    if not found:
        typer.echo("no turns")
        return
    for t in found:
        tools = ", ".join(t["tools"]) if t["tools"] else "-"
        end = t["stop_reason"] if t["status"] == "completed" else t["status"]
        typer.echo(f"{t['index']:>3}  {t['text']}")
        typer.echo(f"     tools: {tools}")
        typer.echo(
            f"     at: {t['fork_point']}  user: {t['user_message']}  "
            f"end: {t['terminal'] or '-'} ({end})"
        )


@app.command()
def draft(
    log: Annotated[
        Path, typer.Argument(help="A thread log (JSON Lines).", callback=checked(check_log))
    ],
    turn: Annotated[int, typer.Option("--turn", min=1, help="The turn number (see `turns`).")],
    dialect: Annotated[str, typer.Option("--dialect", help="The log's dialect.")] = CANONICAL,
) -> None:
    """Print proposed matchers for turn N as JSON {"must": [...], "expect": [...]}: a must per
    successful tool_result and for the terminal event, the tool calls in order as expect."""
    events = _load(log, dialect)
    from ..case.turns import draft_matchers

    try:
        print_json(draft_matchers(events, turn))
    except CaseError as err:
        raise fail(err) from None
