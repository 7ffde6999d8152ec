"""``reduce`` and ``validate``: commands over a single thread log."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from ..core.dialects import CANONICAL, get_dialect
from ..core.errors import CaseError
from .app import app, console, fail, note, print_json, wants_json
from .params import AutoFormatOpt, FormatOpt, check_log, check_log_or_case, checked

DialectOpt = Annotated[
    str, typer.Option("--dialect", help="The log's dialect: threads-py or threads-ts.")
]


@app.command()
def reduce(
    log: Annotated[
        Path, typer.Argument(help="A thread log (JSON Lines).", callback=checked(check_log))
    ],
    dialect: DialectOpt = CANONICAL,
    fmt: AutoFormatOpt = None,
) -> None:
    """Reduce LOG and print the state it reduces to, in the log's dialect (spec/reducer.md)."""
    from ..core.log import reduce_log, write_reduced

    try:
        d = get_dialect(dialect)
        if wants_json(fmt):  # written as it is reduced: memory about the state's JSON
            write_reduced(log, sys.stdout.buffer.write, dialect=d)
            sys.stdout.flush()
            return
        state = d.encode_state(reduce_log(log, dialect=d))
    except CaseError as err:
        from ..importers.recordings import log_error

        raise fail(log_error(err, log)) from None
    else:
        from rich.json import JSON

        console("stdout").print(JSON.from_data(state, indent=2, sort_keys=True))


@app.command()
def validate(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="Thread logs (JSON Lines) or case directories (or folders holding cases).",
            callback=checked(check_log_or_case),
        ),
    ],
    dialect: DialectOpt = CANONICAL,
    fmt: FormatOpt = "pretty",  # a verdict a CI log shows: text unless asked (reports.md 5.4)
) -> None:
    """Check each LOG or CASE and report every problem found; exit 0 when all are valid, 1
    otherwise.

    A log is checked with the log reader (--dialect). A case directory is checked whole:
    every file against its schema, the logs in each dialect, cross-file references, the
    fingerprint. With --format json one path prints
    {"file" or "case", "valid", "problems"}; several print {"valid", "results": [...],
    "warnings": [{"code", "name", "cases", "message"}]} (code case_name_shared: cases of a
    folder that share a name). Each problem is {"code", "message", "file", "line",
    "pointer", "hint"}, the hint the text output prints under it. A refusal (a path that
    does not exist, a bad option) is {"code", "message"} on stdout, exit 2.
    """
    from ..case.directory import shared_name_groups, shared_name_message
    from ..case.discovery import discover
    from ..core.log import inspect_log
    from ..importers.recordings import log_problems
    from ..review import validate_case

    try:
        d = get_dialect(dialect)
    except CaseError as err:
        raise fail(err, fmt) from None
    results: list[dict[str, Any]] = []
    shared: list[tuple[str, list[str]]] = []  # warnings: cases of a folder sharing a name
    for path in paths:
        if path.is_dir():
            cases = discover([path])
            if not cases:
                problem = CaseError(
                    "case_invalid",
                    "not a case directory: case.json is missing and no case is under it",
                    file=str(path),
                ).problem()
                results.append({"case": str(path), "valid": False, "problems": [problem]})
            for case in cases:
                problems = validate_case(case)
                results.append({"case": str(case), "valid": not problems, "problems": problems})
            shared.extend(shared_name_groups(cases))
        else:
            events, problems = inspect_log(path, dialect=d)
            problems = log_problems(problems, path)  # a recording: what it is, once
            warnings = [] if problems else _request_warnings(path, events)
            results.append(
                {
                    "file": str(path),
                    "valid": not problems,
                    "problems": problems,
                    "warnings": warnings,
                }
            )
    invalid = any(not r["valid"] for r in results)
    warnings = [
        {
            "code": SHARED_NAME_CODE,
            "name": name,
            "cases": paths,
            "message": shared_name_message(name, paths),
        }
        for name, paths in shared
    ]
    for w in warnings:
        note(f"warning: {w['message']}")
    if fmt == "json":
        docs = [{**r, "problems": [_problem_json(p) for p in r["problems"]]} for r in results]
        if len(docs) == 1:
            print_json(docs[0])
        else:  # a shared name takes two cases: always this form
            print_json({"valid": not invalid, "results": docs, "warnings": warnings})
    else:
        _print_results(results)
    raise typer.Exit(1 if invalid else 0)


def _print_results(results: list[dict[str, Any]]) -> None:
    """The text output of ``validate``: each path's problems with their hints (stderr), its
    log warnings, then ``PATH: valid`` (console("stdout")) or ``PATH: <n> problem(s)`` (stderr)."""
    for r in results:
        name = r.get("file", r.get("case"))
        print_problems(r["problems"])
        for w in r.get("warnings", []):
            note(f"warning[{w['code']}]: {w['file']}:{w['line']}: {w['message']}")
        if r["problems"]:
            typer.echo(f"{name}: {len(r['problems'])} problem(s)", err=True)
        else:
            typer.echo(f"{name}: valid")


#: The reason code of the warning about cases that share a name (spec/reason-codes.md 3.7).
SHARED_NAME_CODE = "case_name_shared"

#: What to do about a problem, by reason code, when the problem has no hint of its own or its
#: hint is to run ``threads-cases validate`` (what other commands say: here it is running).
VALIDATE_HINTS = {
    "case_invalid": "fix it there: every file of a case follows spec/case-format.md",
    "log_invalid": "fix it there: every line of a thread log follows spec/thread-log.md",
    "state_mismatch": "an expected file holds the state its log reduces to (spec/reducer.md); "
    "`threads-cases reduce LOG` prints that state",
    "fingerprint_stale": "the fingerprint covers every file of the case (spec/case-format.md); "
    "`threads-cases fmt` recomputes it once the case has no other problem",
}
#: The hint under a JSON syntax error (a trailing comma, a comment...), whatever the file.
STRICT_JSON_HINT = (
    "write strict JSON (spec/strict-json.md): no trailing comma, comment, single quote or "
    "NaN; fix it where shown"
)


def validate_hint(problem: Any) -> str:
    """The one-line hint ``validate`` prints under ``problem``: its own, unless it is to run
    ``threads-cases validate``; else for a JSON syntax error :data:`STRICT_JSON_HINT`; else
    :data:`VALIDATE_HINTS` or the code's hint (:data:`~threads_cases.core.errors.REASON_HINTS`)."""
    from ..core.errors import REASON_HINTS

    own = getattr(problem, "hint", "")
    if own and "threads-cases validate" not in own:
        return str(own)
    if "not valid JSON" in problem.message:
        return STRICT_JSON_HINT
    general = REASON_HINTS.get(problem.code, "")
    if "threads-cases validate" in general:
        general = ""
    return (
        VALIDATE_HINTS.get(problem.code)
        or general
        or "spec/reason-codes.md says what the code means"
    )


def _problem_json(problem: Any) -> dict[str, Any]:
    """A problem under ``--format json``: its location, code and message, and the hint the
    text output prints under it (:func:`validate_hint`)."""
    return {**problem.to_json(), "hint": validate_hint(problem)}


def print_problems(problems: list[Any]) -> None:
    """Each problem, with its hint (:func:`validate_hint`) right under it the first time that
    hint comes (a hint printed after the list would sit under another error)."""
    shown: set[str] = set()
    for p in problems:
        typer.echo(f"error[{p.code}]: {p.render()}", err=True)
        hint = validate_hint(p)
        if hint not in shown:
            shown.add(hint)
            typer.echo(f"  hint: {hint}", err=True)


def _request_warnings(path: Path, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A warning per model_requested event whose request_sha256 is not the hash of the
    request the reducer builds before it (spec/case-format.md 5.11): a case saved from that
    turn drifts with request_diverged on every run."""
    from ..case.verify import request_mismatches

    return [
        {
            "code": "request_diverged",
            "file": str(path),
            "line": m["line"],
            "message": f"{m['event_id']}: request_sha256 {m['recorded']} is not the hash of the "
            f"request the reducer builds ({m['computed']}); a case of this turn will drift",
        }
        for m in request_mismatches(events)
    ]
