"""``fmt``: rewrite the JSON files of a case in canonical form and refresh its fingerprint
(spec/case-format.md 1.2); a format-1 ``case.json`` is upgraded to format 2 (1.3).

A case that does not validate (spec/case-format.md 8.2: a missing file, a schema error, a
log that does not read, an unknown file...) is refused whole: only a stale fingerprint and
files that are not canonical are what ``fmt`` fixes, and a fresh fingerprint stamped on a
broken case would hide that it was edited (:func:`unfixable_problems`).

Reason codes: ``case_invalid`` (not a case directory, case.json not an object, a ``.json``
file that is not strict JSON: the same code as ``run`` and ``validate``; any problem
``validate`` reports that fmt does not fix), ``log_invalid`` (a log line that is not strict
JSON), and the other codes of ``validate``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..case.directory import (
    case_json_kind,
    case_json_problem,
    fingerprint,
    upgraded_meta,
    walk_case,
)
from ..core.canonical import canonical_document
from ..core.errors import CaseError, Location, Problem
from ..core.strictjson import parse
from .files import canonical_bytes

# --------------------------------------------------------------------------- fmt


@dataclass
class FormatResult:
    """What ``fmt`` found in one case: ``changed`` maps each non-canonical file to its
    canonical bytes (``case.json`` also when only its fingerprint is stale); ``problems`` are
    files that could not be read strictly (nothing of the case is written then)."""

    path: Path
    changed: dict[str, bytes] = field(default_factory=dict)
    fingerprint_stale: bool = False
    #: case.json was format 1 and is written as format 2
    upgraded: bool = False
    problems: list[Problem] = field(default_factory=list)
    noncanonical: set[str] = field(default_factory=set)
    #: the whole formatted case (what write_formatted writes)
    files: dict[str, bytes] = field(default_factory=dict)

    def reason(self, rel: str) -> str:
        """Why ``rel`` changes: ``format 1 -> 2``, ``not canonical``, ``fingerprint stale``."""
        parts = []
        if rel == "case.json" and self.upgraded:
            parts.append("format 1 -> 2")
        if rel in self.noncanonical and not (rel == "case.json" and self.upgraded):
            parts.append("not canonical")
        if rel == "case.json" and self.fingerprint_stale:
            parts.append("fingerprint stale")
        return ", ".join(parts) or "not canonical"


def format_case(path: Path) -> FormatResult:
    """Canonical bytes for every ``.json``/``.jsonl`` file of a case (files under
    ``artifacts/`` and other files untouched) and ``case.json`` with a recomputed fingerprint.
    Writes nothing."""
    result = FormatResult(path)
    files, problems = walk_case(path)
    result.problems.extend(problems)
    new = dict(files)
    for rel, data in files.items():
        if rel.startswith("artifacts/") or not rel.endswith((".json", ".jsonl")):
            continue
        try:
            new[rel] = canonical_bytes(rel, data, str(path / rel))
        except CaseError as err:
            result.problems.append(err.problem())
    if result.problems:
        return result
    if "case.json" not in new:  # missing, or a folder, a symlink... (said as the loader says)
        result.problems.append(case_json_problem(path, case_json_kind(path) or "missing"))
        return result
    meta = parse(new["case.json"])
    if not isinstance(meta, dict):
        result.problems.append(
            Problem(
                "case_invalid",
                "case.json is not an object",
                Location(str(path / "case.json"), pointer=""),
            )
        )
        return result
    if meta.get("format") == 1:
        meta = upgraded_meta(meta)
        result.upgraded = True
        new["case.json"] = canonical_document(meta)
    body = dict(new)
    body["case.json"] = canonical_document({k: v for k, v in meta.items() if k != "fingerprint"})
    fp = fingerprint(body)
    result.fingerprint_stale = meta.get("fingerprint") != fp
    result.noncanonical = {rel for rel, b in new.items() if files.get(rel) != b}
    new["case.json"] = canonical_document({**meta, "fingerprint": fp})
    result.changed = {rel: b for rel, b in new.items() if files.get(rel) != b}
    result.files = new
    return result


def unfixable_problems(path: Path) -> list[Problem]:
    """What ``validate`` finds in a case that ``fmt`` does not fix: every problem but a stale
    fingerprint and a file that is not canonical. ``fmt`` formats a case only without any."""
    from .validate import fmt_fixes, validate_case

    return [p for p in validate_case(path) if not fmt_fixes(p)]


def write_formatted(result: FormatResult) -> None:
    """Write a formatted case with the one atomic writer, under the case lock
    (:func:`threads_cases.case.writer.write_case_dir`): the case is replaced whole, never
    left half formatted."""
    from ..case.writer import write_case_dir

    if result.changed:
        path = Path(os.path.abspath(result.path))  # "." names no folder to write beside
        write_case_dir(path.parent, path.name, result.files, overwrite=True, secrets="allow")


def case_dirs_for(paths: Iterable[Path]) -> tuple[list[Path], list[Path]]:
    """Case directories for ``fmt``'s arguments: a directory is searched (as ``run`` does);
    a file stands for the case holding it (its folder or the one above, for artifacts).
    Returns ``(cases, missing paths)``; files outside any case are ignored."""
    from ..case.discovery import discover

    found: set[Path] = set()
    missing: list[Path] = []
    for p in paths:
        if p.is_dir():
            found.update(discover([p]))
        elif p.is_file():
            for parent in (p.parent, p.parent.parent):
                if (parent / "case.json").is_file():
                    found.add(parent)
                    break
        else:
            missing.append(p)
    return sorted(found), missing
