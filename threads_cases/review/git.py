"""The files of a case as committed at a git revision (``diff --git``).

Reason codes: ``git_unavailable`` (no git, or outside a work tree), ``invalid_request`` (an
unknown revision, a path that is not a case in it), ``io_error`` (``git show`` failed).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from ..core.errors import CaseError

# --------------------------------------------------------------------------- git


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=60, check=False)
    except FileNotFoundError:
        raise CaseError(
            "git_unavailable",
            "git is not installed",
            hint="install git, or compare two case directories",
        ) from None


def one_case_refusal(folder: Path, inner: list[str], rev: str) -> CaseError:
    """``diff --git REV FOLDER`` on a folder of cases: ``invalid_request``, ``diff takes one
    case; give FOLDER/NAME``, naming up to three of the cases under it (spec/reports.md 8)."""
    shown = ", ".join(str(folder / n) for n in inner[:3]) + (", ..." if len(inner) > 3 else "")
    return CaseError(
        "invalid_request",
        f"a folder of {len(inner)} case(s), not a case: diff takes one case; give {folder}/NAME",
        file=str(folder),
        hint=f"for example: threads-cases diff --git {rev} {folder / inner[0]} (cases: {shown})",
    )


def folder_cases(folder: Path) -> list[str]:
    """The cases under ``folder`` of the work tree (relative POSIX paths of the folders
    holding a ``case.json``), when ``folder`` is a folder that is not a case itself."""
    if not folder.is_dir() or (folder / "case.json").exists():
        return []
    return sorted(p.parent.relative_to(folder).as_posix() for p in folder.rglob("case.json"))


def git_case_files(rev: str, case_path: Path, *, absent_ok: bool = False) -> dict[str, bytes]:
    """Every file of the case at ``case_path`` as committed at ``rev`` (``git show
    REV:path``). Raises ``CaseError("git_unavailable")`` outside a git work tree (or without
    git) and ``CaseError("invalid_request")`` for an unknown revision or a case path that is
    not in it (with ``absent_ok``, a path ``rev`` has no file under gives ``{}``: a case
    added since)."""
    folder = case_path if case_path.is_dir() else case_path.parent
    while not folder.is_dir() and folder != folder.parent:  # a case deleted since rev
        folder = folder.parent
    if not folder.is_dir():
        folder = Path.cwd()
    top = _git(["rev-parse", "--show-toplevel"], folder)
    if top.returncode != 0:
        raise CaseError(
            "git_unavailable",
            "not in a git work tree",
            file=str(case_path),
            hint="run inside a git repository, or compare two case directories",
        )
    root = Path(top.stdout.decode().strip())
    if rev.startswith("-"):
        raise CaseError("invalid_request", f"{rev!r} is not a revision")
    if _git(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], root).returncode != 0:
        raise CaseError(
            "invalid_request",
            f"unknown revision {rev!r}",
            hint="pass a commit, branch or tag, e.g. HEAD or HEAD~1",
        )
    try:
        rel = case_path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        raise CaseError(
            "git_unavailable", f"outside the git work tree {root}", file=str(case_path)
        ) from None
    listing = _git(["ls-tree", "-r", "-z", "--name-only", "--full-tree", rev, "--", rel], root)
    names = [n.decode() for n in listing.stdout.split(b"\0") if n]
    prefix = rel.rstrip("/") + "/"
    names = [n for n in names if n.startswith(prefix)]
    inner = [n[len(prefix) : -len("/case.json")] for n in names if n.endswith("/case.json")]
    if f"{prefix}case.json" not in names and inner:  # a folder of cases, not a case
        raise one_case_refusal(case_path, sorted(inner), rev)
    if absent_ok and listing.returncode == 0 and not names:
        return {}
    if listing.returncode != 0 or not names:
        raise CaseError(
            "invalid_request",
            f"not a case directory in {rev}",
            file=str(case_path),
            hint="check the path and the revision (git ls-tree REV -- PATH)",
        )
    files: dict[str, bytes] = {}
    for n in names:
        shown = _git(["show", f"{rev}:{n}"], root)
        if shown.returncode != 0:
            raise CaseError(
                "io_error",
                f"git show {rev}:{n} failed: {shown.stderr.decode(errors='replace').strip()}",
            )
        files[n[len(prefix) :]] = shown.stdout
    if "case.json" not in files:
        raise CaseError("invalid_request", f"no case.json in {rev}", file=str(case_path))
    return files
