"""Finding the cases of a run: the case directories under the paths given, selected by
name (``-k``), refused when a path does not exist or nothing is found (spec/reports.md 5)."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..core.errors import CaseError
from .directory import peek_case_name
from .once import discovered

#: The hint of the refusal when no case is found (``run``, the pytest plugin).
NO_CASES_HINT = "pass a directory holding case directories (each with a case.json), or check -k"


def discover(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Case directories under ``paths`` (a case directory is one holding case.json, named
    directly of any kind as ``validate CASE`` counts it), sorted, skipping hidden folders
    (temporary saves)."""
    names = [os.fspath(p) for p in paths]  # within a run: found once (case/once.py)
    return discovered(("discover", os.getcwd(), *names), lambda: _discover(names))


def _discover(paths: list[str]) -> list[Path]:
    return sorted(set(_found(paths)))


def has_cases(paths: Iterable[str | os.PathLike[str]]) -> bool:
    """Whether :func:`discover` would find a case under ``paths``: the same rules, stopping
    at the first case (the pytest plugin's "no cases found" check; pytest walks the folders
    itself)."""
    return next(_found([os.fspath(p) for p in paths]), None) is not None


def _found(paths: list[str]) -> Iterator[Path]:
    for p in map(Path, paths):
        if p.name == "case.json" and p.is_file():
            p = p.parent  # the case.json of a case stands for the case
        if os.path.lexists(p / "case.json"):  # of any kind: a case that is case_invalid
            yield p  # when it is not a regular file (a folder, a symlink loop...)
            continue
        if p.is_dir():
            for c in p.rglob("case.json"):
                rel = c.parent.relative_to(p)
                if not any(part.startswith(".") for part in rel.parts):
                    yield c.parent


def suite_cases(paths: list[str | os.PathLike[str]], pattern: str | None) -> list[Path]:
    """The case directories under ``paths`` whose names match ``pattern``. Raises
    ``CaseError("invalid_request")`` for a path that does not exist or is a file other than
    case.json, and when no case is found."""
    for p in map(Path, paths):
        if not p.exists():
            raise CaseError(
                "invalid_request",
                "does not exist",
                file=str(p),
                hint="pass case directories, or folders holding them",
            )
        if p.is_file() and p.name != "case.json":
            raise CaseError(
                "invalid_request",
                "is a file, not a case directory",
                file=str(p),
                hint="pass the folder holding case.json (a log is "
                "saved as a case with `threads-cases save`)",
            )
    cases = discover(paths)
    if pattern:
        cases = [
            c
            for c in cases
            if _selected(c.name, pattern) or _selected(peek_case_name(c) or "", pattern)
        ]
    if not cases:
        raise CaseError(
            "invalid_request",
            "no cases found",
            hint=NO_CASES_HINT,
        )
    return cases


def _selected(name: str, pattern: str) -> bool:
    if any(ch in pattern for ch in "*?["):
        return fnmatch.fnmatchcase(name, pattern)
    return pattern in name
