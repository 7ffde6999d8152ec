"""``diff``: the semantic diff of two cases, of a case and its committed version
(``--git REV``), of two thread logs or two reports, and git's external diff driver
(``--git-driver``).

Exit statuses: 0 equal, 1 different, 2 refused (bad arguments, ``git_unavailable``);
``--git-driver`` always 0 (git stops on a failing external diff).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from ..case.directory import CASE_JSON_NOT_A_FILE_HINT, case_json_kind
from ..core.errors import CaseError
from ..core.files import MAX_CASE_BYTES, read_regular
from ..review import (
    Change,
    bookkeeping_line,
    diff_case_files,
    diff_file,
    git_case_files,
    split_bookkeeping,
    walk_case,
)
from ..review.added import plain_text, render_case_files, render_file
from ..review.git import folder_cases, one_case_refusal
from .app import app, print_json, render_error
from .params import FormatOpt
from .review_output import CASE_EXPECTED, piped_width, print_changes, print_fitted, refuse


def _git_driver(args: list[str]) -> None:
    """git's external diff: PATH OLD-FILE OLD-HEX OLD-MODE NEW-FILE NEW-HEX NEW-MODE."""
    if len(args) == 1:  # git's call for an unmerged path
        sys.stdout.write(f"* Unmerged path {args[0]}\n")
        return
    if len(args) == 9:  # a rename: the 7 arguments, the new path, git's rename header
        args = args[:7]
    if len(args) != 7:
        raise refuse(
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


#: What ``diff`` compares, in a refusal's hint.
DIFF_EXPECTED = (
    "expected two case directories (or their case.json), two thread logs or two run "
    "reports (diff compares two of a kind); one case with --git REV"
)


def _as_case(path: Path) -> Path:
    """``path``, or its case directory when it is a case's case.json (a regular file named
    case.json stands for its case, as `run` reads it: discovery.discover); ``invalid_request``
    for a path that does not exist."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        raise CaseError(
            "invalid_request", "no such file or folder", file=str(path), hint=DIFF_EXPECTED
        ) from None
    return path.parent if path.name == "case.json" and path.is_file() else path


def _kind(path: Path) -> str:
    """What a path given to ``diff`` is, in words: a case directory, a folder, a run report,
    a thread log."""
    from ..review.filediff import is_report

    if path.is_dir():
        return "a case directory" if os.path.lexists(path / "case.json") else "a folder"
    return "a run report" if is_report(path) else "a thread log"


def _mixed(a: Path, b: Path) -> CaseError:
    """The refusal of a file given with a folder: the two cannot be compared."""
    case = a if a.is_dir() else b
    hint = DIFF_EXPECTED
    logs = sorted(case.glob("log.*.jsonl"))
    if logs and os.path.lexists(case / "case.json"):
        hint = f"{hint}; to compare a log with the case's, pass {logs[0]}"
    return CaseError(
        "invalid_request",
        f"cannot compare {_kind(a)} ({a}) with {_kind(b)} ({b})",
        hint=hint,
    )


def _case_files(case: Path) -> dict[str, bytes]:
    """The files of the case directory ``case`` (strict walk); ``invalid_request`` naming the
    path when it holds no case.json."""
    if not case.is_dir() and os.path.lexists(case):
        raise CaseError(
            "invalid_request", "is a file, not a case directory", file=str(case), hint=CASE_EXPECTED
        )
    kind = case_json_kind(case)
    if kind == "missing":
        raise CaseError(
            "invalid_request",
            "not a case directory: case.json is missing",
            file=str(case),
            hint=CASE_EXPECTED,
        )
    if kind is not None:  # a folder, a symlink...: said as the loader says it
        raise CaseError(
            "invalid_request",
            f"case.json is a {kind}, not a file",
            file=str(case),
            hint=CASE_JSON_NOT_A_FILE_HINT,
        )
    return walk_case(case, strict=True)[0]


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
            case_b = Path(args[0])  # may be deleted since REV: not refused for that
            if case_b.name == "case.json" and case_b.is_file():
                case_b = case_b.parent
            inner = folder_cases(case_b)
            if inner:  # a folder of cases, here or at REV (git_case_files)
                raise one_case_refusal(case_b, inner, git)
            a_files = git_case_files(git, case_b, absent_ok=True)
            label_a = f"{git}:{case_b}"
            if not a_files or not case_b.exists():  # added or deleted since REV
                _whole_case(git, case_b, a_files, fmt)
        else:
            if len(args) != 2:
                raise CaseError(
                    "invalid_request", "diff takes two case directories (or one with --git REV)"
                )
            case_a, case_b = _as_case(Path(args[0])), _as_case(Path(args[1]))
            if case_a.is_file() and case_b.is_file():
                _diff_files(case_a, case_b, fmt)  # two thread logs or two reports
            if case_a.is_file() != case_b.is_file():
                raise _mixed(case_a, case_b)  # a log with a case: say so, blame neither
            a_files = _case_files(case_a)
            label_a = str(case_a)
        b_files = _case_files(case_b)
    except CaseError as err:  # one line under --format json, as run's (reports.md 5.2)
        raise refuse(err, fmt) from None
    changes = diff_case_files(a_files, b_files, (label_a, str(case_b)))
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
        print_changes(changes, label_a, str(case_b), every=every)
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
        changes = diff_case_files(old, new, (f"{rev}:{case}", str(case)))
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
    print_fitted(render_case_files(str(case), new or old))
    raise typer.Exit(1)
