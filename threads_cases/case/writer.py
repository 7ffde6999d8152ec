"""The one atomic case writer and the case lock (spec/case-format.md section 6).

:func:`write_case_dir` is the only way a case directory is written: ``save``, ``fmt``,
``import ... --save`` and the TypeScript writer (``writeCaseDir``) all write through it or its
mirror, under the same lock.

The lock (section 6.5) is a directory ``<dir>/.<name>.lock`` made with ``mkdir`` (atomic on
every system, in every language: Node has no ``flock``), holding ``owner.json``
``{"pid": int, "host": str, "token": str}``. A writer that finds the lock waits for it; a
lock whose owner process is gone (same host, the pid no longer runs) or that has no owner
file after :data:`ORPHAN_SECONDS` is *stale*: it is taken over by renaming it aside
(``.<name>.lock.stale-<token>``, atomic: one taker wins) and removing it. After
:data:`LOCK_WAIT_SECONDS` of waiting the write is refused with ``io_error``.

Importable on every platform: nothing here needs ``fcntl``; ``renameat2`` is looked up at run
time and the directory ``fsync`` is skipped where directories cannot be opened (Windows).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import json
import os
import shutil
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from secrets import token_hex

from ..core.errors import CaseError
from .directory import check_case_name, read_case_files
from .layout import check_case_paths
from .wording import OVERWRITE_HINT

#: How long a writer waits for the lock of a case before ``io_error``.
LOCK_WAIT_SECONDS = 120.0
#: A lock directory without an owner file for this long is stale (its maker died between
#: ``mkdir`` and writing the owner file).
ORPHAN_SECONDS = 5.0
_RENAME_EXCHANGE = 2


# --------------------------------------------------------------------------- the lock


def _alive(pid: int) -> bool:
    if os.name == "nt":  # no harmless liveness probe without extra libraries: assume alive
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _owner(lock: Path) -> dict[str, object] | None:
    try:
        owner = json.loads((lock / "owner.json").read_bytes())
    except (OSError, ValueError):
        return None
    return owner if isinstance(owner, dict) else None


def _stale(lock: Path) -> str | None:
    """The token of the lock when its owner is gone (module docstring), else None; ``""`` for
    an orphan lock without an owner file."""
    owner = _owner(lock)
    if owner is None:
        if (lock / "owner.json").exists():
            return None  # being written: judged on the next look
        try:
            age = time.time() - lock.stat().st_mtime
        except OSError:
            return None  # released meanwhile
        return "" if age > ORPHAN_SECONDS else None
    pid = owner.get("pid")
    if owner.get("host") != socket.gethostname() or not isinstance(pid, int) or _alive(pid):
        return None
    return str(owner.get("token", ""))


def _take_over(lock: Path, token: str) -> None:
    """Move a stale lock aside and remove it. Renaming is atomic, so one taker wins; a taker
    that moved a lock other than the stale one it judged (a new writer took the lock in
    between) puts it back."""
    aside = lock.with_name(f"{lock.name}.stale-{token_hex(4)}")
    try:
        os.rename(lock, aside)
    except OSError:
        return  # another writer took it over first
    owner = _owner(aside)
    if owner is not None and str(owner.get("token", "")) != token:
        with contextlib.suppress(OSError):
            os.rename(aside, lock)
        return
    shutil.rmtree(aside, ignore_errors=True)


@contextlib.contextmanager
def case_lock(directory: Path, name: str) -> Iterator[None]:
    """Hold the lock of the case ``directory/name`` (module docstring). Raises
    ``CaseError("io_error")`` after :data:`LOCK_WAIT_SECONDS`."""
    lock = directory / f".{name}.lock"
    token = token_hex(8)
    owner = json.dumps({"host": socket.gethostname(), "pid": os.getpid(), "token": token})
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    pause = 0.002
    while True:
        try:
            lock.mkdir()
            break
        except FileExistsError:
            stale = _stale(lock)
            if stale is not None:
                _take_over(lock, stale)
                continue
            if time.monotonic() > deadline:
                raise CaseError(
                    "io_error",
                    f"the case {name} is locked by another writer ({lock} exists)",
                    file=str(lock),
                    hint="wait for the other save to finish; remove the folder if no save runs",
                ) from None
            time.sleep(pause)
            pause = min(pause * 2, 0.05)
    try:
        (lock / "owner.json").write_text(owner)
        yield
    finally:
        shutil.rmtree(lock, ignore_errors=True)


# --------------------------------------------------------------------------- writing


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths with renameat2(RENAME_EXCHANGE); False if unsupported."""
    libc_name = ctypes.util.find_library("c")
    if not libc_name:
        return False
    libc = ctypes.CDLL(libc_name, use_errno=True)
    fn = getattr(libc, "renameat2", None)
    if fn is None:
        return False
    at_fdcwd = -100
    rc = fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(a))


def _crash_point() -> None:
    """Fault injection for tests: ``THREADS_CASES_CRASH_AT=N`` kills the process with
    SIGKILL at the N-th write step of a save."""
    spec = os.environ.get("THREADS_CASES_CRASH_AT")
    if not spec:
        return
    _crash_point.count = getattr(_crash_point, "count", 0) + 1  # type: ignore[attr-defined]
    if _crash_point.count == int(spec):  # type: ignore[attr-defined]
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


def _fsync_dir(path: Path) -> None:
    if os.name == "nt":
        return  # directories cannot be opened for fsync there
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _cleanup_strays(directory: Path, name: str, target: Path) -> None:
    """Remove what an interrupted save of ``name`` left (under the lock, so no other writer
    of this case is running); put an old case back if a non-atomic swap was interrupted
    between its two renames."""
    olds = sorted(directory.glob(f".{name}.old-*"))
    if not target.exists() and olds:
        os.rename(olds[0], target)
        olds = olds[1:]
    stale_locks = directory.glob(f".{name}.lock.stale-*")
    for p in [*directory.glob(f".{name}.tmp-*"), *olds, *stale_locks]:
        shutil.rmtree(p, ignore_errors=True)


def _existing(target: Path, files: dict[str, bytes], overwrite: bool) -> str | None:
    """``"unchanged"`` when the same bytes are there; raise ``case_exists`` when a different
    case is there and ``overwrite`` is false; None otherwise."""
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise CaseError(
            "case_exists",
            f"{target} exists and is not a case directory",
            file=str(target),
            hint="move it away, or choose another name",  # overwriting never replaces it
        )
    if not target.exists():
        return None
    try:
        existing = read_case_files(target)
    except CaseError:
        existing = {}
    if existing == files:
        return "unchanged"
    if not overwrite:
        raise CaseError(
            "case_exists",
            f"a different case is already at {target}",
            file=str(target),
            hint=OVERWRITE_HINT,  # worded for the API; the CLI's: case/wording.py
        )
    return None


def _build(tmp: Path, files: dict[str, bytes]) -> None:
    tmp.mkdir()
    for rel in sorted(files):
        dest = tmp / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        with open(dest, "xb") as fh:
            fh.write(files[rel])
            fh.flush()
            os.fsync(fh.fileno())
        _crash_point()
    for d in sorted({(tmp / rel).parent for rel in files}, reverse=True):
        _fsync_dir(d)
    _crash_point()


def write_case_dir(
    directory: Path,
    name: str,
    files: dict[str, bytes],
    *,
    overwrite: bool,
    verify: Callable[[Path], None] | None = None,
    secrets: str = "refuse",
) -> str:
    """Write a case atomically to ``directory/name`` (spec/case-format.md, section 6).

    First the checks of 6.6, the same for every writer, before anything is written: the
    name (:func:`~.directory.check_case_name`), every file's path and every artifact's
    bytes against its sha256 (:func:`~.layout.check_case_paths`; ``invalid_request``),
    ``case_too_large``, and ``secret_detected`` unless ``secrets`` is ``"allow"`` (a caller
    that ran the save checks itself, or rewrites a case the user already has, passes
    ``"allow"``).

    Returns ``"created"``, ``"unchanged"`` (identical bytes already there) or ``"replaced"``.
    Raises ``CaseError("case_exists")`` when a different case is there and ``overwrite`` is
    false, ``CaseError("io_error")`` when the case stays locked. The case is built beside the
    target, fsynced, then renamed (or atomically exchanged) into place, under the case lock;
    an interrupted save leaves the old case or the new one. ``verify(path)`` is called on the
    complete temporary directory before it is moved into place (and on an identical existing
    case); whatever it raises is raised after the temporary directory is removed, so nothing
    is written (case-format.md 6.1 step 6).
    """
    from .save import check_case_files  # save writes through this module: not at import

    check_case_name(name)
    check_case_paths(files)
    check_case_files(files, secrets)
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / name
    with case_lock(directory, name):
        _cleanup_strays(directory, name, target)
        outcome = _existing(target, files, overwrite)
        if outcome is not None:
            if verify is not None:
                verify(target)
            return outcome
        tmp = directory / f".{name}.tmp-{os.getpid()}-{token_hex(4)}"
        _build(tmp, files)
        if verify is not None:
            try:
                verify(tmp)
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
        if not target.exists():
            os.rename(tmp, target)
            _fsync_dir(directory)
            return "created"
        if _exchange(tmp, target):
            _fsync_dir(directory)
            _crash_point()
            shutil.rmtree(tmp)
        else:
            old = directory / f".{name}.old-{os.getpid()}-{token_hex(4)}"
            os.rename(target, old)
            _crash_point()
            os.rename(tmp, target)
            _fsync_dir(directory)
            shutil.rmtree(old)
        return "replaced"
