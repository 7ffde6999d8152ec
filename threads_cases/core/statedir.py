"""The project's folder, and where the CLI keeps what a run leaves behind (spec/reports.md
section 2.2, spec/driver-protocol.md 5.3): one rule finds the folder whose settings a run
reads, whose default baseline it uses and where it keeps ``.threads-cases/`` (with
``last-report.jsonl``, ``last-conformance.jsonl`` and ``last-live.jsonl``).

The *project's folder* is the nearest folder, from the current one upward, that holds
``threads-cases.toml``, a ``pyproject.toml`` with a ``[tool.threads-cases]`` table, or
``.git``; a ``pyproject.toml`` without that table does not stop the search (a package of a
larger project). When no folder up to the root matches, it is the current folder.

From inside a case (it or a folder above holds ``case.json``) the search starts above the
case, and without a match it is the folder holding the case: a case holds only the files of
its format, and a file written there makes ``validate`` refuse it (an unknown file, a stale
fingerprint).
"""

from __future__ import annotations

import os
from pathlib import Path

STATE = ".threads-cases"
SETTINGS_FILE = "threads-cases.toml"
PYPROJECT = "pyproject.toml"


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


def has_settings_table(pyproject: Path) -> bool:
    """Whether ``pyproject`` holds a ``[tool.threads-cases]`` table. A file that is not TOML
    counts (reading the settings then reports why), so it never hides a broken table."""
    try:
        text = pyproject.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return pyproject.is_file()
    if "threads-cases" not in text:
        return False
    import tomllib  # only for a file that names the tool (start-up)

    try:
        tool = tomllib.loads(text).get("tool")
    except tomllib.TOMLDecodeError:
        return True
    return isinstance(tool, dict) and "threads-cases" in tool


def is_project(folder: Path) -> bool:
    """Whether ``folder`` ends the search for the project's folder (module docstring)."""
    try:
        if (folder / SETTINGS_FILE).is_file() or os.path.lexists(folder / ".git"):
            return True
        return has_settings_table(folder / PYPROJECT)
    except OSError:
        return False


def project_home(cwd: Path | None = None) -> Path:
    """The project's folder seen from ``cwd`` (default the current folder), as the module
    docstring says; ``cwd`` itself (as given) when it is the answer."""
    here = Path.cwd() if cwd is None else cwd
    absolute = here.absolute()
    case = case_around(absolute)
    start = absolute if case is None else case.parent
    for d in (start, *start.parents):
        if is_project(d):
            return here if d == absolute else d
    return here if case is None else start


def state_path(name: str, cwd: Path | None = None) -> Path:
    """``.threads-cases/<name>``: relative to the current folder when the project's folder is
    the current one, else a relative path to the project's folder (:func:`project_home`)."""
    here = Path.cwd() if cwd is None else cwd
    home = project_home(here)
    if home == here:
        return Path(STATE) / name
    try:
        return Path(os.path.relpath(home / STATE / name, here))
    except ValueError:  # another drive on Windows
        return home / STATE / name


#: The hint of a refused output inside a case (CLI outputs, a save's ``dir``).
INSIDE_CASE_HINT = (
    "write it outside the case: a case holds only the files of its format, and any other "
    "file makes it invalid"
)


def out_folder_problem(path: str | os.PathLike[str], what: str) -> tuple[str, str] | None:
    """Why ``path`` cannot be a folder to write in, as ``(message, hint)``, or None: it is, or
    lies inside, a case directory (it or a folder above holds ``case.json``), or it or a
    folder above exists and is not a folder. ``what`` names the folder in the hint. The
    checks are lexical on the normalized absolute path (TypeScript ``checkOutFolder`` says
    the same words)."""
    absolute = Path(os.path.abspath(path))
    case = case_around(absolute)
    if case is not None:
        where = "is the case directory" if case == absolute else "is inside the case directory"
        return f"{path}: {where} {case}", INSIDE_CASE_HINT
    d = blocking_file(absolute)
    if d is None:
        return None
    at = "is a file" if d == absolute else f"{d} is a file"
    return f"{path}: {at}, not a folder", f"expected {what} (it is created when missing)"


def blocking_file(folder: Path) -> Path | None:
    """The first of ``folder`` and the folders above it that exists and is not a folder (a
    file stands where a missing folder would be created), or None."""
    for d in (folder, *folder.parents):
        if os.path.isdir(d):
            return None
        if os.path.exists(d):
            return d
    return None
