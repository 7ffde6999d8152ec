"""``show``, ``diff``, ``fmt``, ``list`` and ``stale``: reviewing case directories.

Exit statuses: ``show`` 0 (1 when the case cannot be read); ``diff`` 0 equal, 1 different,
2 refused (bad arguments, ``git_unavailable``); ``diff --git-driver`` always 0 (git stops on
a failing external diff); ``fmt`` 0 (``--check``: 1 when a file is not canonical or a
fingerprint is stale), 1 when a file cannot be read, 2 for a missing path; ``list`` 0;
``stale`` 0, 2 when the report is missing.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from ..core.errors import CaseError
from ..core.files import MAX_CASE_BYTES, read_regular
from ..review import (
    VALUES_WARNING,
    Change,
    bookkeeping_line,
    case_dirs_for,
    case_summary,
    diff_case_files,
    diff_file,
    format_case,
    git_case_files,
    render_case,
    short_fingerprint,
    split_bookkeeping,
    stale_entries,
    walk_case,
    write_formatted,
)
from ..review.added import plain_text, render_case_files, render_file
from .app import app, fail, print_json, render_error, stdout
from .params import FormatOpt, check_case, check_exists, check_folder, checked

CASE_EXPECTED = "expected a case directory (a folder holding case.json)"


def _width() -> int | None:
    """Wide output when piped (rich would otherwise cut tables at 80 columns)."""
    if not stdout.is_terminal:
        stdout.width = max(stdout.width, 200)
    return None


def _refuse(err: CaseError) -> typer.Exit:
    render_error(err)
    return typer.Exit(2)


@app.command()
def show(
    case: Annotated[Path, typer.Argument(help="A case directory.", callback=checked(check_case))],
    values: Annotated[
        bool,
        typer.Option(
            "--values",
            help="Also show text, tool inputs and results (raw, unredacted data).",
        ),
    ] = False,
    all_events: Annotated[
        bool, typer.Option("--all", help="Every event of the prefix, not only the last 20.")
    ] = False,
) -> None:
    """Render a case: fork point, the user's input, matchers, the prefix timeline, replies
    and stubs.

    Model text, tool inputs and results are shown only with --values. Piped, the case is
    printed without its box, as wide as the terminal, no line padded.
    """
    try:
        panel = render_case(case, values=values, all_events=all_events, boxed=stdout.is_terminal)
    except CaseError as err:
        raise fail(err) from None
    if values:
        print(VALUES_WARNING, file=sys.stderr)
    _print_fitted(panel)


def piped_width() -> int:
    """Columns for output that is not a terminal: $COLUMNS, else the width of the terminal
    stderr is on (``show | less``, git's pager), else 100."""
    try:
        return max(int(os.environ["COLUMNS"]), 40)
    except (KeyError, ValueError):
        pass
    try:
        return max(os.get_terminal_size(sys.stderr.fileno()).columns, 40)
    except (OSError, ValueError):
        return 100


def _print_fitted(renderable: Any) -> None:
    """On a terminal: its width. Piped: :func:`piped_width` columns, no trailing spaces."""
    if stdout.is_terminal:
        stdout.print(renderable, soft_wrap=False)
        return
    sys.stdout.write(plain_text(renderable, piped_width()))
    sys.stdout.flush()


def _print_changes(
    changes: list[Change], label_a: str, label_b: str, *, every: bool = False
) -> None:
    """The changes by file; ids and timestamps in one line unless ``every`` (--all)."""
    if not changes:
        stdout.print(f"no difference between {label_a} and {label_b}")
        return
    typer.echo(f"--- {label_a}")
    typer.echo(f"+++ {label_b}")
    shown, hidden = (changes, []) if every else split_bookkeeping(changes)
    if hidden:
        typer.echo(bookkeeping_line(hidden, len(shown)))
    current = None
    for c in shown:
        if c.file != current:
            current = c.file
            typer.echo(c.file)
        style = {"added": "green", "removed": "red", "changed": "yellow"}[c.kind]
        stdout.print(Text("  " + c.render(), style=style))
    if not shown:
        return
    counts = {k: sum(1 for c in shown if c.kind == k) for k in ("added", "removed", "changed")}
    summary = ", ".join(f"{v} {k}" for k, v in counts.items() if v)
    typer.echo(f"{len(shown)} change(s): {summary}")


def _git_driver(args: list[str]) -> None:
    """git's external diff: PATH OLD-FILE OLD-HEX OLD-MODE NEW-FILE NEW-HEX NEW-MODE."""
    if len(args) == 1:  # git's call for an unmerged path
        sys.stdout.write(f"* Unmerged path {args[0]}\n")
        return
    if len(args) == 9:  # a rename: the 7 arguments, the new path, git's rename header
        args = args[:7]
    if len(args) != 7:
        raise _refuse(
            CaseError(
                "invalid_request",
                f"--git-driver takes the 7 arguments git "
                f"passes (PATH OLD-FILE OLD-HEX OLD-MODE NEW-FILE NEW-HEX "
                f"NEW-MODE), got {len(args)}",
            )
        )
    path, old_file, old_hex, _old_mode, new_file, new_hex, _new_mode = args

    def read(file: str, hexsum: str) -> bytes | None:
        if file == "/dev/null" or (set(hexsum) == {"0"} and not Path(file).exists()):
            return None
        return read_regular(
            file, code="io_error", limit=MAX_CASE_BYTES, limit_code="case_too_large"
        )

    try:
        old, new = read(old_file, old_hex), read(new_file, new_hex)
    except CaseError as err:
        render_error(err)
        raise typer.Exit(0) from None  # git stops the whole diff on a failing driver
    sys.stdout.write(f"diff --threads-cases a/{path} b/{path}\n")
    if (old is None) != (new is None):  # a new or deleted file: its content, as show has it
        mark, data = ("+", new) if old is None else ("-", old)
        assert data is not None
        sys.stdout.write(f"  {mark} {'new' if mark == '+' else 'deleted'} file\n")
        text = plain_text(render_file(path, data), piped_width() - 4)
        sys.stdout.write("".join(f"  {mark} {line}".rstrip() + "\n" for line in text.splitlines()))
        return
    result = diff_file(path, old, new, unified=True)
    if result and isinstance(result[0], str):
        sys.stdout.write("".join(str(x) for x in result))
        return
    changes = [c for c in result if isinstance(c, Change)]
    shown, hidden = split_bookkeeping(changes)
    if hidden:
        sys.stdout.write("  " + bookkeeping_line(hidden, len(shown), one_file=True) + "\n")
    for c in shown:
        sys.stdout.write("  " + c.render() + "\n")
    if not result:
        sys.stdout.write("  no semantic change\n")


def _diff_files(a: Path, b: Path, fmt: str) -> None:
    """``diff LOG_A LOG_B`` / ``diff REPORT_A REPORT_B``: the first divergence and a summary;
    exit 0 equal, 1 different (raises ``typer.Exit``)."""
    from ..review.filediff import diff_files, render

    answer = diff_files(a, b)
    if fmt == "json":
        print_json({"a": str(a), "b": str(b), **answer})
    else:
        sys.stdout.write(render(answer))
    raise typer.Exit(0 if answer["equal"] else 1)


@app.command(context_settings={"allow_extra_args": False})
def diff(
    paths: Annotated[
        list[str] | None,
        typer.Argument(
            help="CASE_A CASE_B; or CASE with --git REV; or git's 7 arguments with --git-driver.",
        ),
    ] = None,
    git: Annotated[
        str | None,
        typer.Option(
            "--git", metavar="REV", help="Compare CASE with its committed version at REV."
        ),
    ] = None,
    git_driver: Annotated[
        bool,
        typer.Option(
            "--git-driver",
            help="Act as git's external diff for one file (diff.<name>.command).",
        ),
    ] = False,
    every: Annotated[
        bool,
        typer.Option("--all", help="List id and timestamp changes one by one too."),
    ] = False,
    fmt: FormatOpt = "pretty",
) -> None:
    """Semantic diff of two cases: matchers, prefix events by seq and JSON pointer, model
    replies, stubs, expected states and artifacts. Given two files: two thread logs (any
    dialects) or two run reports, the first divergence and a summary of the rest.

    Changes of only ids and timestamps (a re-recorded turn) are one line unless --all. A case
    added or deleted since --git REV is shown whole, as show shows it.
    Exit 0 when equal, 1 when different, 2 for bad arguments.
    """
    args = paths or []
    if git_driver:
        _git_driver(args)
        return
    try:
        if git is not None:
            if len(args) != 1:
                raise CaseError("invalid_request", "diff --git REV takes exactly one CASE")
            case_b = Path(args[0])
            a_files = git_case_files(git, case_b, absent_ok=True)
            label_a = f"{git}:{args[0]}"
            if not a_files or not case_b.exists():  # added or deleted since REV
                _whole_case(git, case_b, a_files, fmt)
        else:
            if len(args) != 2:
                raise CaseError(
                    "invalid_request", "diff takes two case directories (or one with --git REV)"
                )
            case_a = Path(args[0])
            case_b = Path(args[1])
            if case_a.is_file() and case_b.is_file():
                _diff_files(case_a, case_b, fmt)  # two thread logs or two reports
            if not (case_a / "case.json").is_file():
                raise CaseError(
                    "invalid_request",
                    "not a case directory: case.json is missing",
                    file=str(case_a),
                    hint=CASE_EXPECTED,
                )
            a_files, _ = walk_case(case_a, strict=True)
            label_a = args[0]
        if not (case_b / "case.json").is_file():
            raise CaseError(
                "invalid_request",
                "not a case directory: case.json is missing",
                file=str(case_b),
                hint=CASE_EXPECTED,
            )
        b_files, _ = walk_case(case_b, strict=True)
    except CaseError as err:
        if fmt == "json":
            print_json({"code": err.code, "message": err.message})
            raise typer.Exit(2) from None
        raise _refuse(err) from None
    changes = diff_case_files(a_files, b_files)
    if fmt == "json":
        print_json(
            {
                "a": label_a,
                "b": str(case_b),
                "equal": not changes,
                "changes": [c.to_json() for c in changes],
            }
        )
    else:
        _print_changes(changes, label_a, str(case_b), every=every)
    raise typer.Exit(1 if changes else 0)


def _whole_case(rev: str, case: Path, old: dict[str, bytes], fmt: str) -> None:
    """``diff --git REV CASE`` for a case new since REV (``old`` empty) or deleted since:
    every file, rendered as show renders it; exits 1 (raises ``typer.Exit``)."""
    if not old and not (case / "case.json").is_file():
        raise CaseError(
            "invalid_request",
            f"not a case directory, here or in {rev}",
            file=str(case),
            hint=CASE_EXPECTED,
        )
    new = walk_case(case, strict=True)[0] if not old else {}
    if fmt == "json":
        changes = diff_case_files(old, new)
        print_json(
            {
                "a": f"{rev}:{case}",
                "b": str(case),
                "equal": False,
                "changes": [c.to_json() for c in changes],
            }
        )
        raise typer.Exit(1)
    what = f"new case since {rev}" if not old else f"case deleted since {rev}"
    typer.echo(f"{'+' if not old else '-'} {case}: {what}")
    _print_fitted(render_case_files(str(case), new or old))
    raise typer.Exit(1)


@app.command()
def fmt(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Cases, folders holding cases, or files of cases (default: current folder).",
            callback=checked(check_exists),
        ),
    ] = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check", help="Write nothing; exit 1 naming every file that is not canonical."
        ),
    ] = False,
) -> None:
    """Rewrite every JSON/JSONL file of each case canonically and recompute its fingerprint.

    Artifacts are untouched. With --check nothing is written and the status is 1 when a file
    is not canonical or a fingerprint is stale.
    """
    cases, missing = case_dirs_for(paths or [Path(".")])
    if missing:
        raise fail(CaseError("invalid_request", f"no such file or folder: {missing[0]}"))
    if not cases and paths and all(p.is_file() for p in paths):
        typer.echo("no case files among the files given", err=True)  # pre-commit passes any
        raise typer.Exit(0)
    if not cases:
        # a CI gate pointed at the wrong folder must not pass quietly
        raise fail(
            CaseError(
                "invalid_request",
                "no cases found",
                hint="pass case directories or folders holding them (each with a case.json)",
            )
        )
    unreadable = 0
    pending: list[str] = []
    written: list[str] = []
    for path in cases:
        result = format_case(path)
        if result.problems:
            unreadable += 1
            for p in result.problems:
                typer.echo(f"error[{p.code}]: {p.render()}", err=True)
            continue
        for rel in sorted(result.changed):
            what = result.reason(rel)
            (pending if check else written).append(f"{path / rel}: {what}")
        if not check and result.changed:
            write_formatted(result)
    if check:
        for line in pending:
            typer.echo(line)
        if pending:
            typer.echo(
                f"{len(pending)} file(s) to format in {len(cases)} case(s); run "
                "`threads-cases fmt`",
                err=True,
            )
        elif not unreadable:
            typer.echo(f"{len(cases)} case(s) canonical")
        raise typer.Exit(1 if pending or unreadable else 0)
    for line in written:
        typer.echo(f"formatted {line.split(': ')[0]}")
    typer.echo(f"{len(written)} file(s) formatted in {len(cases)} case(s)")
    raise typer.Exit(1 if unreadable else 0)


@app.command(name="list")
def list_cases(
    path: Annotated[
        Path | None,
        typer.Argument(
            help="A folder holding cases (default: the current folder).",
            callback=checked(check_folder),
        ),
    ] = None,
    fmt: FormatOpt = "pretty",
) -> None:
    """List the cases found: name, dialects, portable, fingerprint, size in bytes."""
    from ..harness.runner import discover

    root = path or Path(".")
    if not root.exists():
        raise fail(CaseError("invalid_request", f"no such folder: {root}"))
    rows = [case_summary(p) for p in discover([root])]
    if fmt == "json":
        print_json({"cases": rows})
        return
    if not rows:
        typer.echo(f"no cases under {root}")
        return
    table = Table(header_style="bold")
    for col in ("case", "dialects", "portable", "fingerprint", "size", "path"):
        table.add_column(col, justify="right" if col == "size" else "left")
    for r in rows:
        if r["error"]:
            table.add_row(
                Text(r["name"]),
                Text(r["error"], style="red"),
                "",
                "",
                str(r["size"]),
                Text(r["path"]),
            )
            continue
        fp = Text(short_fingerprint(r["fingerprint"]))
        if not r["fingerprint_ok"]:
            fp.append(" stale", style="yellow")
        table.add_row(
            Text(r["name"]),
            ", ".join(r["dialects"]),
            str(r["portable"]).lower(),
            fp,
            str(r["size"]),
            Text(r["path"]),
        )
    stdout.print(table, width=_width())
    typer.echo(f"{len(rows)} case(s), {sum(r['size'] for r in rows)} bytes")


@app.command()
def stale(
    path: Annotated[
        Path | None,
        typer.Argument(help="Only cases under this folder.", callback=checked(check_folder)),
    ] = None,
    report: Annotated[
        Path,
        typer.Option(
            "--report",
            help="A JSON Lines report of `run`.",
        ),
    ] = Path(".threads-cases/last-report.jsonl"),
    fmt: FormatOpt = "pretty",
) -> None:
    """List the cases whose recorded replies or stubs the last run never used
    (reply_unused, stub_unused), to trim them."""
    from ..harness.report import read_report

    if path is not None and not path.exists():
        raise _refuse(CaseError("invalid_request", f"no such folder: {path}"))
    if not report.is_file():
        raise _refuse(
            CaseError(
                "invalid_request",
                f"no report at {report}",
                hint="run `threads-cases run` first, or pass --report FILE",
            )
        )
    try:
        results = read_report(report)
        if not results:
            raise CaseError(
                "invalid_request",
                f"{report} holds no result lines: it is not a report of `run`",
                file=str(report),
                hint="pass --report a JSON Lines report of `threads-cases run`",
            )
        entries = stale_entries(results, path)
    except CaseError as err:
        raise _refuse(err) if err.code == "invalid_request" else fail(err) from None
    if fmt == "json":
        print_json({"report": str(report), "stale": entries})
        return
    if not entries:
        typer.echo(f"no case left a reply or stub unused in {report}")
        return
    table = Table(header_style="bold")
    for col in ("case", "implementations", "unused", "path"):
        table.add_column(col)
    for e in entries:
        table.add_row(
            Text(e["case"]),
            Text(", ".join(e["implementations"])),
            Text("\n".join(e["details"])),
            Text(e["path"] + ("" if e["exists"] else " (gone)")),
        )
    stdout.print(table, width=_width())
    typer.echo(f"{len(entries)} case(s) with unused recordings")
