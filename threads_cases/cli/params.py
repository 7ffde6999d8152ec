"""Typed parameters shared by every command: ``--format`` choices and checked paths.

``--format`` is a typed choice (:data:`PrettyJson`, :data:`ReportFormat`): typer lists the
choices in the help and refuses any other value as a usage error, which
:class:`~.native.Group` prints as ``error[invalid_request]`` with exit status 2.

The path callbacks (:func:`log_path`, :func:`case_path`, ...) refuse a path that does not
exist or is of the wrong kind the same way, with a hint saying what was expected
(spec/reason-codes.md, ``invalid_request``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from .native import PathProblem

PrettyJson = Literal["pretty", "json"]
ReportFormat = Literal["pretty", "json", "github"]

#: ``--format pretty|json`` defaulting to pretty.
FormatOpt = Annotated[PrettyJson, typer.Option("--format", help="Output format.")]
#: ``--format pretty|json`` defaulting to json when piped, pretty on a terminal.
AutoFormatOpt = Annotated[
    PrettyJson | None,
    typer.Option(
        "--format", help="Output format (default: json when piped, pretty on a terminal)."
    ),
]

Check = Callable[[Path], None]


#: at most this many names of the folder are compared with a missing path's name
_SIBLINGS_READ = 10_000


def _nearest(path: Path, depth: int = 3) -> Path | None:
    """The existing path closest to the missing ``path``: in its folder (or, when that folder
    is missing too, in the nearest existing one, up to ``depth`` folders up), the name whose
    difflib ratio to the missing one is 0.6 or more, the closest first; else None."""
    import difflib
    import itertools

    parent = path.parent
    if not os.path.isdir(parent):
        if depth == 0 or parent == path or parent == parent.parent:
            return None
        found = _nearest(parent, depth - 1)
        if found is None:
            return None
        parent = found
        if os.path.lexists(parent / path.name):
            return parent / path.name
    try:
        with os.scandir(parent) as entries:
            names = [e.name for e in itertools.islice(entries, _SIBLINGS_READ)]
    except OSError:
        return None
    close = difflib.get_close_matches(path.name, names, n=1)
    return parent / close[0] if close else None


def _did_you_mean(path: Path) -> str:
    """``"did you mean cases/lists-notes? "`` for :func:`_nearest`, or ``""``."""
    near = _nearest(path)
    return f"did you mean {near}? " if near is not None else ""


def _missing(path: Path, what: str) -> PathProblem:
    return PathProblem(f"{path}: no such file or folder", f"{_did_you_mean(path)}expected {what}")


def _is_case(path: Path) -> bool:
    """A folder holding an entry case.json of any kind, as `run` and `list` count cases (one
    whose case.json is a folder or a symlink is a case that is ``case_invalid``)."""
    return os.path.lexists(path / "case.json")


def _case_log(case: Path) -> Path:
    """A log the case holds (``log.<dialect>.jsonl``, case-format.md), the first by name, or
    the pattern when it holds none."""
    logs = sorted(case.glob("log.*.jsonl"))
    return logs[0] if logs else case / "log.<dialect>.jsonl"


def check_log(path: Path) -> None:
    """A thread log or transcript: an existing file, not a case's case.json nor a folder."""
    what = "a JSON Lines file (a thread log, or a transcript to import)"
    if not path.exists():
        raise _missing(path, what)
    if path.is_dir():
        hint = f"expected {what}, not a folder"
        if _is_case(path):
            hint = f"{path} is a case directory; expected {what}, e.g. {_case_log(path)}"
        raise PathProblem(f"{path}: is a folder", hint)
    if path.name == "case.json":
        from ..case.directory import UPSTREAM_CASE_HINT, UPSTREAM_CASE_MESSAGE, is_upstream_case

        if is_upstream_case(path.parent):  # one line, as the loader says it
            raise PathProblem(f"{path}: {UPSTREAM_CASE_MESSAGE}", UPSTREAM_CASE_HINT)
        raise PathProblem(
            f"{path}: is a case's case.json, not a thread log",
            f"expected {what}; to check the case, pass its directory {path.parent}",
        )


def check_transcript(path: Path) -> None:
    """A transcript to import: as :func:`check_log`, or a folder that is an OpenHands event
    store (spec/importers.md section 12.3)."""
    if path.is_dir() and not _is_case(path):
        from ..importers.detect import is_event_store

        if is_event_store(path):
            return
    check_log(path)


def check_log_or_case(path: Path) -> None:
    """A thread log file, or a case directory / folder of cases (``validate``)."""
    what = "a thread log file, a case directory or a folder holding cases"
    if not path.exists():
        raise _missing(path, what)
    if path.is_file() and path.name == "case.json":
        raise PathProblem(
            f"{path}: is a case's case.json, not a thread log",
            f"pass the case directory instead: {path.parent}",
        )


def check_case(path: Path) -> None:
    """A case directory: a folder holding case.json."""
    what = "a case directory (a folder holding case.json)"
    if not path.exists():
        raise _missing(path, what)
    if path.is_file():
        hint = f"expected {what}, not a file"
        if path.name == "case.json":
            hint = f"pass the case directory instead: {path.parent}"
        raise PathProblem(f"{path}: is a file", hint)
    if not _is_case(path):
        raise PathProblem(f"{path}: not a case directory (no case.json)", f"expected {what}")


def check_exists(path: Path) -> None:
    """Any existing file or folder (cases, folders of cases, files of cases)."""
    if not path.exists():
        raise _missing(path, "case directories, folders holding cases, or files of cases")


def check_folder(path: Path) -> None:
    """An existing folder."""
    if not path.exists():
        raise _missing(path, "a folder")
    if not path.is_dir():
        raise PathProblem(f"{path}: is a file", "expected a folder")


def check_file(path: Path) -> None:
    """An existing file."""
    if not path.exists():
        raise _missing(path, "a file")
    if path.is_dir():
        raise PathProblem(f"{path}: is a folder", "expected a file")


def check_out_folder(path: Path) -> None:
    """A folder to create the case in: may be missing (it is created), must not be a file
    nor have a file above it, nor be or lie inside a case directory."""
    check_folder_to_write(path, "the folder to create the case in")


def check_folder_to_write(path: Path, what: str) -> None:
    """The refusal of :func:`~..core.statedir.out_folder_problem`, if any."""
    from ..core.statedir import out_folder_problem

    problem = out_folder_problem(path, what)
    if problem is not None:
        raise PathProblem(*problem)


def check_out_file(path: Path) -> None:
    """A file to write: may be missing, must not be a folder, nor inside a case directory
    (a case holds only the files of its format; one more makes it invalid), nor below a
    file (its missing folders are created), nor ``-``: an option that writes standard output
    itself does so when it is left out, and one writing a file would create a file named
    ``-`` (:func:`check_out_file_or_stdout` takes ``-`` as standard output)."""
    if str(path) == "-":
        raise PathProblem(
            "-: this option writes a file, not standard output",
            "give the path of a file to write (leave the option out where the command "
            "prints to standard output without it)",
        )
    if path.is_dir():
        raise PathProblem(f"{path}: is a folder", "expected the path of a file to write")
    check_not_in_case(path)


def check_out_file_or_stdout(path: Path) -> None:
    """As :func:`check_out_file`, with ``-`` taken as standard output."""
    if str(path) != "-":
        check_out_file(path)


def check_baseline(path: Path) -> None:
    """``--baseline FILE``, which ``run`` and ``baseline prune`` read and ``baseline update``
    writes: not inside a case. A path that is there but not a regular file (a folder) is the
    command's ``baseline_invalid``, with a hint for reading or writing (harness/baseline/file.py
    ``refuse_not_a_file``)."""
    check_not_in_case(path)


def check_not_in_case(path: Path) -> None:
    """Not inside a case directory (a case holds only the files of its format), nor below a
    file (missing folders are created, a file cannot be)."""
    from ..core.statedir import INSIDE_CASE_HINT, blocking_file, case_around

    case = case_around(Path(os.path.abspath(path.parent)))
    if case is not None:
        raise PathProblem(f"{path}: is inside the case directory {case}", INSIDE_CASE_HINT)
    d = blocking_file(path.parent)
    if d is not None:
        raise PathProblem(
            f"{path}: {d} is a file, not a folder",
            "pass a path in a folder (missing folders are created)",
        )


def check_not_input(out: Path | None, inputs: list[Path], what: str = "input") -> None:
    """Refuse an output that is one of the command's input files (the same file, also
    through a symlink or another spelling of its path): writing it would destroy the input
    before or while it is read."""
    if out is None:
        return
    for path in inputs:
        try:
            same = os.path.samefile(out, path)
        except OSError:
            continue
        if same:
            raise PathProblem(
                f"{out}: is the {what} file {path}",
                f"write the output to another path: writing {out} would replace the {what}",
            )


def checked(check: Check) -> Callable[[Any], Any]:
    """A typer callback applying ``check`` to a path, a list of paths, or None."""

    def callback(value: Any) -> Any:
        if value is None:
            return value
        for path in value if isinstance(value, list | tuple) else [value]:
            check(Path(path))
        return value

    return callback
