"""``threads-cases init``: set a repository up for reviewing cases (idempotent).

:func:`init_project` makes sure that

- ``.gitattributes`` maps the case files under ``CASES/`` to the ``threads-cases`` diff driver
  (``CASES/**/*.json diff=threads-cases`` and the same for ``*.jsonl``);
- ``.gitignore`` holds ``**/.threads-cases/*`` (where ``run`` keeps its last report, in
  whatever folder it ran from) and ``!**/.threads-cases/baseline.json`` (the expected
  failures, to commit); an earlier ``init``'s top-level-only lines are rewritten so;
- the clone's git config runs ``threads-cases diff --git-driver`` for that driver
  (``git config diff.threads-cases.command``), when ``ROOT`` is inside a git work tree.

A folder name git's pattern syntax treats specially (a space, a quote, ``*?[\\``, a
leading ``#`` or ``!``) is escaped, and the pattern C-quoted when it holds a space, a quote
or a control character (gitattributes(5)), so that git matches exactly that folder.

It returns one :class:`Step` per item, ``done`` (changed now) or ``present`` (already so) or
``skipped`` (no git work tree / git missing, with the command to run later). Running it twice
changes nothing the second time. Raises ``CaseError("io_error")`` when a file cannot be
written, or, before writing anything, when ``.gitattributes`` or ``.gitignore`` is a
symbolic link or not a regular file (:func:`check_regular`: never written through, never
opened blocking), or when ``ROOT`` is in a repository git cannot read (a
corrupt ``.git/config``...; the message holds git's first line).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import CaseError

DRIVER = "threads-cases"
DRIVER_COMMAND = "threads-cases diff --git-driver"


@dataclass(frozen=True)
class Step:
    """What :func:`init_project` did for one item: ``done``, ``present`` or ``skipped``."""

    item: str
    status: str
    detail: str = ""


#: What ``.gitignore`` gets: the run's files, but not the baseline, which is committed
#: (spec/replay.md section 12; git cannot re-include a file of an ignored folder, hence ``/*``).
#: ``**/``: a run from a subfolder keeps its report there (core.statedir), and an anchored
#: ``.threads-cases/*`` only covered the top level.
IGNORE = ["**/.threads-cases/*", "!**/.threads-cases/baseline.json"]
#: an earlier ``init``'s lines -> today's: ``.threads-cases/`` hid the whole folder, baseline
#: included; ``.threads-cases/*`` and its ``!`` line covered the top level only
_OLD_IGNORE = {
    ".threads-cases/": IGNORE[0],
    ".threads-cases/*": IGNORE[0],
    "!.threads-cases/baseline.json": IGNORE[1],
}


#: never follow a link, never wait on a FIFO (0 where the system has no such flag)
_SAFE = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def check_regular(path: Path) -> None:
    """Refuse, before anything is written, a ``path`` that exists and is a symbolic link or
    not a regular file (a folder, a FIFO, a device): init writes through neither
    (``CaseError("io_error")``, one line)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise CaseError("io_error", f"cannot read {path}: {exc.strerror}", file=str(path)) from None
    if stat.S_ISLNK(st.st_mode):
        what = "a symbolic link"
    elif not stat.S_ISREG(st.st_mode):
        what = "not a regular file"
    else:
        return
    raise CaseError(
        "io_error",
        f"it is {what}: init writes only to a regular file",
        file=str(path),
        hint=f"replace {path.name} with a regular file (or remove it), then run init again",
    )


def _open_regular(path: Path, flags: int) -> int:
    """``os.open`` without following a link or blocking on a FIFO, refused unless the file
    opened is regular (it may have changed since :func:`check_regular`)."""
    fd = os.open(path, flags | _SAFE, 0o666)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        check_regular(path)
        raise CaseError("io_error", f"{path} is not a regular file", file=str(path))
    return fd


def _read_text(path: Path) -> str:
    """The UTF-8 text of ``path``, "" when it does not exist."""
    try:
        fd = _open_regular(path, os.O_RDONLY)
    except FileNotFoundError:
        return ""
    with os.fdopen(fd, "rb") as fh:
        return fh.read().decode("utf-8")


def _write_text(path: Path, text: str, flags: int) -> None:
    fd = _open_regular(path, os.O_WRONLY | os.O_CREAT | flags)
    with os.fdopen(fd, "wb") as fh:
        fh.write(text.encode("utf-8"))


def _unignore_baseline(path: Path) -> bool:
    """Rewrite an earlier ``init``'s ignore lines (:data:`_OLD_IGNORE`) as today's; True when
    rewritten."""
    try:
        text = _read_text(path)
        lines = text.splitlines(keepends=True)
        new = [_OLD_IGNORE[ln.strip()] + "\n" if ln.strip() in _OLD_IGNORE else ln for ln in lines]
        if new == lines:
            return False
        _write_text(path, "".join(new), os.O_TRUNC)
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "it is not UTF-8"
        raise CaseError("io_error", f"cannot rewrite {path}: {why}", file=str(path)) from None
    return True


def _ensure_lines(path: Path, lines: list[str], header: str) -> bool:
    """Append the missing ``lines`` to ``path`` (created when absent); True when written."""
    try:
        text = _read_text(path)
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "it is not UTF-8"
        raise CaseError("io_error", f"cannot read {path}: {why}", file=str(path)) from None
    present = {line.strip() for line in text.splitlines()}
    missing = [line for line in lines if line not in present]
    if not missing:
        return False
    prefix = "" if not text or text.endswith("\n") else "\n"
    block = prefix + ("\n" if text else "") + f"# {header}\n" + "\n".join(missing) + "\n"
    try:
        _write_text(path, block, os.O_APPEND)
    except OSError as exc:
        raise CaseError(
            "io_error", f"cannot write {path}: {exc.strerror}", file=str(path)
        ) from None
    return True


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str] | None:
    git = shutil.which("git")
    if git is None:
        return None
    return subprocess.run([git, "-C", str(root), *args], capture_output=True, text=True)


def _git_probe(root: Path) -> subprocess.CompletedProcess[str] | None:
    """``git rev-parse --is-inside-work-tree`` in ``root`` (None without git). Raises
    ``CaseError("io_error")`` with git's first line of complaint when git cannot read the
    repository (a corrupt config, dubious ownership...): that is not "no git work tree"."""
    inside = _git(root, "rev-parse", "--is-inside-work-tree")
    if inside is None or "not a git repository" in inside.stderr:
        return inside
    said = [ln for ln in inside.stderr.splitlines() if ln.strip()]
    if inside.returncode != 0 or (said and said[0].startswith(("error:", "fatal:"))):
        first = said[0] if said else f"git exited with status {inside.returncode}"
        raise CaseError(
            "io_error",
            f"git could not read the repository of {root.resolve()}: {first}",
            hint="fix what git names (`git status` shows it too), then run init again",
        )
    return inside


def _git_config(root: Path, inside: subprocess.CompletedProcess[str] | None) -> Step:
    item = f"git config diff.{DRIVER}.command"
    later = f'run `git config diff.{DRIVER}.command "{DRIVER_COMMAND}"` in the clone'
    if inside is None or inside.returncode != 0 or inside.stdout.strip() != "true":
        why = "git is not installed" if inside is None else "not a git work tree"
        return Step(item, "skipped", f"{why}; {later}")
    current = _git(root, "config", "--get", f"diff.{DRIVER}.command")
    if current is not None and current.stdout.strip() == DRIVER_COMMAND:
        return Step(item, "present")
    done = _git(root, "config", f"diff.{DRIVER}.command", DRIVER_COMMAND)
    if done is None or done.returncode != 0:
        return Step(item, "skipped", f"git config failed; {later}")
    return Step(item, "done", DRIVER_COMMAND)


def cases_pattern_root(root: Path, cases: str) -> str:
    """``cases`` as the path relative to ``root`` that .gitattributes patterns use (POSIX,
    no leading or trailing slash, ``.`` for ``root`` itself).

    Raises ``CaseError("invalid_request")`` when it leads outside ``root``: git matches
    .gitattributes patterns only against paths inside the repository, so a pattern for
    ``/tmp/x`` or ``../x`` would never apply."""
    top = root.resolve()
    target = (Path(cases) if Path(cases).is_absolute() else top / cases).resolve()
    if not target.is_relative_to(top):
        raise CaseError(
            "invalid_request",
            f"--cases {cases} is outside the repository {top}",
            hint="pass the folder of cases relative to the repository's top folder, "
            "e.g. --cases cases, or run init in the repository holding the cases",
        )
    return target.relative_to(top).as_posix() or "."


#: C-style escapes of a quoted gitattributes pattern
_C_ESCAPES = {"\\": "\\\\", '"': '\\"', "\t": "\\t", "\n": "\\n", "\r": "\\r"}


def attribute_pattern(folder: str, tail: str) -> str:
    """The .gitattributes pattern of ``folder/tail`` (``folder`` a relative POSIX path,
    ``tail`` like ``**/*.json``) that git matches against exactly that folder: its glob
    characters and a leading ``#`` or ``!`` escaped with a backslash, and the whole pattern
    C-quoted when it holds whitespace, a quote or a control character (git splits an
    attributes line at whitespace)."""
    escaped = "".join(
        "\\" + ch if ch in "\\*?[" or (i == 0 and ch in "#!") else ch for i, ch in enumerate(folder)
    )
    pattern = f"{escaped}/{tail}"
    if not any(ch.isspace() or ch == '"' or not ch.isprintable() for ch in pattern):
        return pattern
    body = "".join(  # git unquotes octal escapes as bytes: a character's UTF-8 bytes
        _C_ESCAPES.get(ch, ch if ch.isprintable() else "".join(f"\\{b:03o}" for b in ch.encode()))
        for ch in pattern
    )
    return f'"{body}"'


def init_project(root: Path, cases: str = "cases") -> list[Step]:
    """Set ``root`` up for cases under ``root/cases`` (see the module docstring); refuses a
    ``cases`` outside ``root`` (:func:`cases_pattern_root`), and a repository git cannot
    read before writing anything."""
    cases = cases_pattern_root(root, cases)
    for name in (".gitattributes", ".gitignore"):  # both, before anything is written
        check_regular(root / name)
    inside = _git_probe(root)
    attributes = [
        (f"**/{glob}" if cases == "." else attribute_pattern(cases, f"**/{glob}"))
        + f" diff={DRIVER}"
        for glob in ("*.json", "*.jsonl")
    ]
    steps = []
    wrote = _ensure_lines(
        root / ".gitattributes", attributes, "threads-cases: semantic diffs of case files"
    )
    steps.append(Step(".gitattributes", "done" if wrote else "present", ", ".join(attributes)))
    moved = _unignore_baseline(root / ".gitignore")
    wrote = _ensure_lines(
        root / ".gitignore", IGNORE, "threads-cases: the last run's report, not the baseline"
    )
    steps.append(Step(".gitignore", "done" if wrote or moved else "present", ", ".join(IGNORE)))
    steps.append(_git_config(root, inside))
    return steps
