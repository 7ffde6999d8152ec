"""Where the CLI keeps what a run leaves behind (spec/reports.md section 2.2): the folder
``.threads-cases/`` with ``last-report.jsonl``, ``last-conformance.jsonl`` and
``last-live.jsonl``.

It is the one in the current folder, unless the current folder is a case or inside one (it or
a folder above holds ``case.json``): a case holds only the files of its format, and a file
written there makes ``validate`` refuse it (an unknown file, a stale fingerprint). From inside
a case the folder is the one of the project around it: the nearest folder above the case that
holds ``pyproject.toml``, ``threads-cases.toml`` or ``.git`` (where ``init`` writes the
``.gitignore`` rule ``**/.threads-cases/*``), else the folder holding the case.
"""

from __future__ import annotations

import os
from pathlib import Path

STATE = ".threads-cases"
#: what marks the folder of a project, looking up from a case
PROJECT_MARKERS = ("pyproject.toml", "threads-cases.toml", ".git")


def case_around(folder: Path) -> Path | None:
    """The case ``folder`` is or is inside (the nearest folder up holding ``case.json``),
    or None."""
    for d in (folder, *folder.parents):
        try:
            if (d / "case.json").is_file():
                return d
        except OSError:
            return None
    return None


def state_home(cwd: Path | None = None) -> Path:
    """The folder that holds ``.threads-cases/`` (see the module docstring); ``cwd`` defaults
    to the current folder."""
    here = Path.cwd() if cwd is None else cwd
    case = case_around(here.absolute())
    if case is None:
        return here
    for d in case.parents:
        if any(os.path.lexists(d / m) for m in PROJECT_MARKERS):
            return d
    return case.parent


def state_path(name: str, cwd: Path | None = None) -> Path:
    """``.threads-cases/<name>``: relative to the current folder as before when it is not
    inside a case, else a path to the project's folder (:func:`state_home`)."""
    here = Path.cwd() if cwd is None else cwd
    home = state_home(here)
    if home == here:
        return Path(STATE) / name
    try:
        return Path(os.path.relpath(home / STATE / name, here))
    except ValueError:  # another drive on Windows
        return home / STATE / name
