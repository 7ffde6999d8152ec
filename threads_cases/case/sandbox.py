"""The sandbox as a case sees it (spec/replay.md section 2, spec/thread-log.md "sandbox paths"):
the protocol every sandbox provider implements and the rules a sandbox path follows.

A sandbox provider is anything with this small protocol (:class:`SandboxProvider`)::

    portable: bool        # True when a case needs no provider to replay (in-memory files)
    blocks_egress: bool   # True when the sandbox can refuse every network access
    read(path) -> bytes             raises FileNotFoundError
    write(path, data: bytes) -> None
    delete(path) -> None            raises FileNotFoundError
    list(prefix) -> list[str]       sorted relative POSIX paths starting with prefix
    snapshot() -> object            an opaque token
    restore(token) -> None

Paths are relative POSIX paths (spec/thread-log.md, "sandbox paths"); :func:`check_path`
refuses anything that could leave the sandbox with ``CaseError("invalid_request")``.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Protocol, runtime_checkable

from ..core.errors import CaseError
from ..core.texts import quote

_SEGMENT = re.compile(r"[^/\\\x00-\x1f]+")
_DEVICE = re.compile(r"^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)$", re.I)


def is_device_name(name: str) -> bool:
    """True for a Windows device name (CON, NUL, COM1, ...) in any case, with any extension."""
    stem = name.split(".", 1)[0].rstrip(" ")
    return bool(_DEVICE.match(stem))


def check_path(path: str) -> str:
    """Return ``path`` if it is a safe relative POSIX sandbox path.

    Refuses (``CaseError("invalid_request")``) absolute paths, ``.`` and ``..`` segments,
    empty segments, backslashes, NUL and other control characters, and Windows device names.
    """
    if not isinstance(path, str) or not path or len(path) > 4096:
        raise CaseError("invalid_request", f"sandbox path {quote(path)} is empty or too long")
    for seg in path.split("/"):
        if not _SEGMENT.fullmatch(seg) or seg in (".", ".."):
            raise CaseError(
                "invalid_request",
                f"sandbox path {quote(path)} is not a relative POSIX path inside the sandbox",
            )
        if is_device_name(seg):
            raise CaseError("invalid_request", f"sandbox path {quote(path)} names a device ({seg})")
    return path


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@runtime_checkable
class SandboxProvider(Protocol):
    """The protocol every sandbox implements (see the module docstring)."""

    portable: bool
    blocks_egress: bool

    def read(self, path: str) -> bytes: ...
    def write(self, path: str, data: bytes) -> None: ...
    def delete(self, path: str) -> None: ...
    def list(self, prefix: str = "") -> list[str]: ...
    def snapshot(self) -> Any: ...
    def restore(self, token: Any) -> None: ...
