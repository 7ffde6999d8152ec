"""Reading files within bounds (spec/case-format.md, "Reading files").

Every file the tool reads goes through :func:`open_regular` or :func:`read_regular`, which:

* open without blocking (a FIFO never hangs the reader) and, inside a case, without following
  a symbolic link (``follow_symlinks=False``: ``O_NOFOLLOW``), so the file checked is the file
  read;
* refuse anything but a regular file (FIFOs, sockets, character and block devices such as
  ``/dev/zero``) with ``special_code`` (``invalid_request`` for a path the user named,
  ``case_invalid`` inside a case);
* check the size with ``fstat`` *before* reading, and read at most ``limit + 1`` bytes, so a
  2 GB sparse file is refused at once with ``limit_code`` and a file that grows while it is
  read cannot exceed the bound;
* turn a path component over 255 bytes (``ENAMETOOLONG``) into ``invalid_request``.

Limits: :data:`MAX_LOG_BYTES` for a thread log or a transcript that is streamed,
:data:`MAX_CASE_BYTES` (512 MiB) for a case and anything in it, :data:`MAX_RECORDING_BYTES`
(32 MiB) and :data:`MAX_RECORDING_ENTRIES` (100,000) for each recording of a case.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import IO

from .errors import CaseError

#: A thread log or an agent transcript larger than this is refused before it is read.
MAX_LOG_BYTES = 1536 * 1024 * 1024

#: A case (all its files together), and so any one file of it, an artifact or a JSON file
#: read whole, is at most this size (``case_too_large``).
MAX_CASE_BYTES = 512 * 1024 * 1024

#: A recording of a case (``model.json``, ``stubs.json``, ``sandbox.json``) is at most this
#: size, and holds at most :data:`MAX_RECORDING_ENTRIES` replies, calls or reads
#: (``case_too_large``; spec/case-format.md 8.4): a case is one turn, and these bounds keep
#: reading one within a few hundred MiB of memory whatever the file holds.
MAX_RECORDING_BYTES = 32 * 1024 * 1024
MAX_RECORDING_ENTRIES = 100_000
#: The list of entries each recording holds.
RECORDING_LISTS = {"model.json": "replies", "stubs.json": "calls", "sandbox.json": "reads"}


def check_recording_entries(name: str, value: object, file: str | None = None) -> None:
    """Raise ``case_too_large`` when the recording ``name`` (a parsed ``model.json``,
    ``stubs.json`` or ``sandbox.json``) holds more than :data:`MAX_RECORDING_ENTRIES`
    entries (spec/case-format.md 8.4)."""
    key = RECORDING_LISTS.get(name)
    entries = value.get(key) if key is not None and isinstance(value, dict) else None
    if isinstance(entries, list) and len(entries) > MAX_RECORDING_ENTRIES:
        raise CaseError(
            "case_too_large",
            f"{len(entries)} {key}, over the limit of {MAX_RECORDING_ENTRIES}",
            file=file,
            pointer=f"/{key}",
        )


def check_recording_bytes(name: str, data: bytes) -> None:
    """Raise ``case_too_large`` when the encoded recording ``name`` is over
    :data:`MAX_RECORDING_BYTES` (spec/case-format.md 8.4)."""
    if name in RECORDING_LISTS and len(data) > MAX_RECORDING_BYTES:
        raise CaseError(
            "case_too_large",
            f"{name} would hold {len(data)} bytes; at most {MAX_RECORDING_BYTES} (32 MiB)",
            hint="save a turn with fewer or smaller model calls",
        )


def recording_limit(rel: str, budget: int) -> int:
    """The most bytes the case file ``rel`` may hold when ``budget`` bytes of the case are
    left: :data:`MAX_RECORDING_BYTES` for a recording, else the budget."""
    return min(budget, MAX_RECORDING_BYTES) if rel in RECORDING_LISTS else budget


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def _path_error(exc: OSError, path: str, code: str, follow_symlinks: bool) -> CaseError:
    if exc.errno == errno.ENAMETOOLONG:
        return CaseError(
            "invalid_request",
            "a path component is longer than 255 bytes",
            file=path[:200] + ("..." if len(path) > 200 else ""),
            hint="use a shorter file or directory name",
        )
    if exc.errno == errno.ELOOP and not follow_symlinks:
        return CaseError(code, "symbolic links are not allowed here", file=path)
    return CaseError(code, f"cannot read file: {exc.strerror}", file=path)


def open_regular(
    path: str | os.PathLike[str],
    *,
    code: str,
    limit: int,
    limit_code: str | None = None,
    special_code: str = "invalid_request",
    follow_symlinks: bool = True,
    buffering: int = -1,
) -> IO[bytes]:
    """Open a regular file for binary reading after checking its kind and size.

    ``code`` is raised when the file cannot be opened, ``special_code`` when it is not a
    regular file, ``limit_code`` (default ``code``) when it holds more than ``limit`` bytes.
    ``buffering`` is the read buffer's size (as :func:`open`'s). The caller closes the
    returned stream.
    """
    name = os.fspath(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
        if not hasattr(os, "O_NOFOLLOW") and Path(name).is_symlink():
            raise CaseError(code, "symbolic links are not allowed here", file=name)
    try:
        fd = os.open(name, flags)
    except OSError as exc:
        raise _path_error(exc, name, code, follow_symlinks) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise CaseError(
                special_code,
                f"{_kind(st.st_mode)}, not a regular file",
                file=name,
                hint="give the path of a regular file",
            )
        if st.st_size > limit:
            raise CaseError(
                limit_code or code,
                f"{st.st_size} bytes, over the limit of {limit} bytes",
                file=name,
            )
        if flags & getattr(os, "O_NONBLOCK", 0):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb", buffering=buffering)
    except BaseException:
        os.close(fd)
        raise


def read_regular(
    path: str | os.PathLike[str],
    *,
    code: str,
    limit: int,
    limit_code: str | None = None,
    special_code: str = "invalid_request",
    follow_symlinks: bool = True,
) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (see :func:`open_regular`)."""
    with open_regular(
        path,
        code=code,
        limit=limit,
        limit_code=limit_code,
        special_code=special_code,
        follow_symlinks=follow_symlinks,
    ) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise CaseError(
            limit_code or code,
            f"more than {limit} bytes (the file grew while it was read)",
            file=os.fspath(path),
        )
    return data
