"""``stale``: the cases whose recorded replies or stubs a run did not use (from a JSON
report's ``reply_unused`` / ``stub_unused`` checks)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# --------------------------------------------------------------------------- stale


UNUSED_CODES = ("reply_unused", "stub_unused")


def local_path(path: str, bases: Sequence[Path] = ()) -> str:
    """A report's case ``path`` as it reads from the current folder. ``bases`` are the
    folders it is read from, in order (:func:`threads_cases.harness.report.folder.report_bases`,
    spec/reports.md 2.5): the first where it is a case, else the first; the path is given as
    written when that folder is the current one (or none is given), else made relative to
    the current folder (absolute when it cannot be, another drive on Windows)."""
    if not bases or Path(path).is_absolute():
        return path
    folder = next((b for b in bases if (b / path / "case.json").is_file()), bases[0])
    here = Path.cwd()
    if folder.resolve() == here.resolve():
        return path
    full = folder / path
    try:
        return os.path.relpath(full, here)
    except ValueError:
        return str(full)


def stale_entries(
    results: list[dict[str, Any]], under: Path | None = None, bases: Sequence[Path] = ()
) -> list[dict[str, Any]]:
    """Cases whose recorded replies or stubs went unused in a report: one entry per case
    path, ``{"case", "path", "implementations", "codes", "details", "exists"}``, sorted by
    path; ``under`` keeps only cases inside that folder. ``bases`` are the folders the report's
    paths are read from (:func:`threads_cases.harness.report.folder.report_bases`); each is
    given as it reads from the current folder (:func:`local_path`)."""
    by_path: dict[str, dict[str, Any]] = {}
    root = under.resolve() if under is not None else None
    for r in results:
        checks = r.get("checks") if isinstance(r.get("checks"), list) else []
        assert isinstance(checks, list)
        hits = [c for c in checks if isinstance(c, dict) and c.get("code") in UNUSED_CODES]
        if not hits:
            continue
        path = local_path(str(r.get("path", "")), bases)
        if root is not None:
            try:
                Path(path).resolve().relative_to(root)
            except ValueError:
                continue
        entry = by_path.setdefault(
            path,
            {
                "case": r.get("case", ""),
                "path": path,
                "implementations": [],
                "codes": [],
                "details": [],
                "exists": (Path(path) / "case.json").is_file(),
            },
        )
        impl = r.get("implementation")
        if impl not in entry["implementations"]:
            entry["implementations"].append(impl)
        for c in hits:
            if c["code"] not in entry["codes"]:
                entry["codes"].append(c["code"])
            detail = f"[{impl}] {c.get('detail', '')}"
            if detail not in entry["details"]:
                entry["details"].append(detail)
    return [by_path[p] for p in sorted(by_path)]


def unchecked_cases(
    results: list[dict[str, Any]], under: Path, bases: Sequence[Path] = ()
) -> tuple[list[str], int]:
    """The cases under ``under`` (found as ``run`` finds them) that no result of a report
    checked, and how many it checked. A result checks its case when the replay ran: a verdict
    other than ``error`` and ``skip``. Report paths are as the run found them (relative to
    the folder it ran in), read from each of ``bases`` (the current folder when none is given),
    as ``run --last-failed`` reads them (spec/reports.md 2.5)."""
    from ..case.discovery import discover

    checked = {
        (base / str(r.get("path", ""))).resolve()
        for r in results
        if r.get("verdict") not in ("error", "skip")
        for base in bases or (Path.cwd(),)
    }
    cases = discover([under])
    missing = [str(c) for c in cases if c.resolve() not in checked]
    return missing, len(cases) - len(missing)
