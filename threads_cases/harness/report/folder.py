"""Where a report's case paths are read from (spec/reports.md 1.2 and 2.5): its header's
``cwd``, the absolute folder the run started from, so that ``run --last-failed`` and
``stale`` find the report's cases whichever folder they run from."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ...core.canonical import compact
from ...core.errors import CaseError
from .suite import REPORT_HINT, iter_report

__all__ = ["read_report_header", "report_bases", "run_folder"]


def read_report_header(
    path: str | os.PathLike[str],
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header and the result lines of a JSON Lines report (refusals: :func:`iter_report`)."""
    lines = iter_report(path)
    _, head = next(lines)
    return head, [v for _, v in lines if isinstance(v, dict) and v.get("kind") == "result"]


#: An absolute path on POSIX (``/...``) or Windows (``C:\...``, ``C:/...``, ``\\server\...``).
_ABSOLUTE = re.compile(r"(/|[A-Za-z]:[\\/]|\\\\)[^\x00]*\Z")


def run_folder(head: Mapping[str, Any], path: str | os.PathLike[str]) -> Path | None:
    """The folder a report's run started from (its header's ``cwd``), which its result lines'
    relative ``path`` values are read from (spec/reports.md 1.2 and 2.5); None when the report
    does not say (written before the header recorded it) or names a folder that is not here
    (a report from another machine): its paths are then read as before, from the current
    folder. A ``cwd`` that is not an absolute path is ``invalid_request``."""
    if "cwd" not in head:
        return None
    cwd = head["cwd"]
    if not isinstance(cwd, str) or not _ABSOLUTE.match(cwd):
        raise CaseError(
            "invalid_request",
            f"its header's cwd must be the absolute path of the folder the run started from, "
            f"not {compact(cwd)}",
            file=str(path),
            line=1,
            hint=REPORT_HINT,
        )
    try:
        folder = Path(cwd)
        return folder if folder.is_absolute() and folder.is_dir() else None
    except (OSError, ValueError):
        return None


def report_bases(
    head: Mapping[str, Any],
    path: str | os.PathLike[str],
    on_note: Callable[[str], None] | None = None,
) -> tuple[Path, ...]:
    """The folders a report's relative case paths are read from, in order: the one rule of
    ``run --last-failed`` and ``stale`` (spec/reports.md 2.5). The header's ``cwd`` alone
    when it is a folder here (:func:`run_folder`); else the current folder, then the
    project's folder (the one holding the report's ``.threads-cases/``, else
    :func:`~threads_cases.core.statedir.project_home`): a report written before ``cwd`` was
    recorded, merged from shards run from different folders, or from another machine. A
    ``cwd`` that is not here is said once through ``on_note``, not ignored silently."""
    from ...core.statedir import STATE, project_home

    folder = run_folder(head, path)
    if folder is not None:
        return (folder,)
    if "cwd" in head and on_note is not None:
        on_note(
            f"note: the folder the report's run started from ({head['cwd']}) is not on this "
            f"machine: reading {path}'s case paths from the current folder and the project's "
            "folder"
        )
    report = Path(path).absolute()
    home = report.parent.parent if report.parent.name == STATE else project_home()
    here = Path.cwd()
    return (here,) if home.resolve() == here.resolve() else (here, home.absolute())
