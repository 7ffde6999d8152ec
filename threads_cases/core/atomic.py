"""Files written atomically (a temporary file beside the target, renamed over it) get the
permissions any other file would: a new one ``0o666`` less the umask, as :func:`open` creates
it (never ``tempfile.mkstemp``'s ``0o600``: a baseline, a report or a case is meant to be
shared and committed), a rewritten one the mode the file had."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO


def create_beside(target: Path) -> tuple[IO[bytes], Path]:
    """A new temporary file in ``target``'s folder, open for binary writing (``O_EXCL``: never
    an existing file or a symbolic link), with :func:`keep_mode` already applied. The caller
    closes it and renames it over ``target``, or removes it."""
    tmp = target.with_name(f".{target.name}.{os.urandom(4).hex()}.tmp")
    fh = open(tmp, "xb")  # noqa: SIM115 - the caller closes it
    try:
        keep_mode(tmp, target)
    except BaseException:
        fh.close()
        tmp.unlink(missing_ok=True)
        raise
    return fh, tmp


def keep_mode(tmp: Path, target: Path) -> None:
    """Give ``tmp`` the permission bits of ``target`` when it exists (a rewrite keeps the
    file's mode); a new file keeps what :func:`open` gave it under the umask."""
    with contextlib.suppress(FileNotFoundError):
        os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))


@contextlib.contextmanager
def replacing(target: Path, *, fsync: bool = False) -> Iterator[IO[bytes]]:
    """A file from :func:`create_beside` to write ``target``'s new bytes into; when the block
    ends without an exception it is closed and renamed over ``target`` (with ``fsync``: its
    bytes flushed to disk first and the folder's entry after, best effort for the folder), else
    removed and ``target`` left as it was. Raises ``OSError``."""
    fh, tmp = create_beside(target)
    try:
        with fh:
            yield fh
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if fsync:
        fsync_dir(target.parent)


def fsync_dir(folder: Path) -> None:
    """Make a rename in ``folder`` durable: best effort (a folder cannot be opened on Windows)."""
    try:
        dfd = os.open(folder if str(folder) else ".", os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


def write_atomic(target: Path, data: bytes, *, fsync: bool = False) -> None:
    """Write ``data`` to ``target`` through :func:`replacing`: a reader sees the old file or
    the new one, never half of it. Raises ``OSError``."""
    with replacing(target, fsync=fsync) as fh:
        fh.write(data)
