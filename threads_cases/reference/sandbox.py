"""Sandboxes: where an agent's sandbox tools read and write files (spec/replay.md, section 2).

A sandbox provider is anything with the small protocol of
:class:`threads_cases.case.sandbox.SandboxProvider` (which also holds the sandbox path rules,
:func:`~threads_cases.case.sandbox.check_path`): :class:`FakeSandbox` keeps files in memory,
:class:`DirectorySandbox` in a folder.
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..case.sandbox import check_path
from ..core.errors import CaseError
from ..core.texts import quote


class NoSuchFile(FileNotFoundError):
    """A sandbox path that holds no file: the tool result is ``no such file: <path>``."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path


@dataclass(frozen=True)
class HashOnly:
    """A sandbox file known only by its sha256 (its bytes were never recorded)."""

    sha256: str


class ContentMissing(CaseError):
    """A replay read a hash-only file: ``sandbox_content_missing``, stop key
    ``sandbox:<path>`` (spec/replay.md 2.3)."""

    def __init__(self, path: str, sha: str) -> None:
        super().__init__(
            "sandbox_content_missing",
            f"the replay read {quote(path)}, which the case knows only by its sha256 {sha}",
            hint="save the case again with --sandbox DIR holding the file's bytes",
        )
        self.stop_key = f"sandbox:{path}"


class FakeSandbox:
    """In-memory files, no network at all: ``portable = True``, ``blocks_egress = True``.

    ``FakeSandbox({"notes.txt": b"..."})`` starts with those files (str values are UTF-8
    encoded). Snapshots are copies of the file table.
    """

    portable = True
    blocks_egress = True

    def __init__(
        self,
        files: dict[str, bytes | str] | None = None,
        *,
        hash_only: dict[str, str] | None = None,
    ) -> None:
        self._files: dict[str, bytes | HashOnly] = {}
        for p, sha in (hash_only or {}).items():
            self._files[check_path(p)] = HashOnly(sha)
        for p, data in (files or {}).items():
            self.write(p, data.encode() if isinstance(data, str) else data)

    def read(self, path: str) -> bytes:
        """The file's bytes; ``FileNotFoundError`` for no such file; a hash-only file raises
        :class:`ContentMissing` (``sandbox_content_missing``)."""
        check_path(path)
        try:
            data = self._files[path]
        except KeyError:
            raise FileNotFoundError(path) from None
        if isinstance(data, HashOnly):
            raise ContentMissing(path, data.sha256)
        return data

    def write(self, path: str, data: bytes) -> None:
        self._files[check_path(path)] = bytes(data)

    def delete(self, path: str) -> None:
        check_path(path)
        if path not in self._files:
            raise FileNotFoundError(path)
        del self._files[path]

    def list(self, prefix: str = "") -> list[str]:
        return sorted(p for p in self._files if p.startswith(prefix))

    def snapshot(self) -> dict[str, bytes | HashOnly]:
        return dict(self._files)

    def restore(self, token: dict[str, bytes | HashOnly]) -> None:
        """Back to the files of ``token``, a :meth:`snapshot`."""
        self._files = dict(token)

    @property
    def files(self) -> dict[str, bytes]:
        """A copy of every file whose bytes are known: ``{path: bytes}``."""
        return {p: d for p, d in self._files.items() if isinstance(d, bytes)}


class DirectorySandbox:
    """A real directory: ``portable = False``, ``blocks_egress = False``.

    Cases cannot be saved from it (``egress_policy_unsupported``): a replay must never reach
    the outside world and a real directory cannot promise that. Snapshots copy the tree to a
    temporary directory.
    """

    portable = False
    blocks_egress = False

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.root = Path(path).resolve()
        self.root.mkdir(parents=True, exist_ok=True)

    def _resolve(self, path: str) -> Path:
        target = (self.root / check_path(path)).resolve()
        if not target.is_relative_to(self.root):
            raise CaseError("invalid_request", f"sandbox path {quote(path)} leaves the sandbox")
        return target

    def read(self, path: str) -> bytes:
        """The bytes at ``path``. The resolved file is opened without following a symlink
        (one swapped in after resolving fails to open), and a file with more than one hard
        link is refused (``invalid_request``): it may be a link to a file outside the root."""
        target = self._resolve(path)
        fd = os.open(target, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError(errno.EISDIR, "is a directory", str(target))
            if st.st_nlink > 1:
                raise CaseError(
                    "invalid_request",
                    f"sandbox path {quote(path)} has {st.st_nlink} hard links; "
                    "the sandbox reads only files with one",
                )
            return fh.read()

    def write(self, path: str, data: bytes) -> None:
        """Write ``data`` at ``path`` into a new file renamed over the old one, so neither a
        symlink nor a hard link at ``path`` is written through."""
        target = self._resolve(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.write-{secrets.token_hex(4)}")
        try:
            with open(tmp, "xb") as fh:
                fh.write(data)
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)

    def delete(self, path: str) -> None:
        self._resolve(path).unlink()

    def list(self, prefix: str = "") -> list[str]:
        out = []
        for p in self.root.rglob("*"):
            if p.is_file() and not p.is_symlink():
                rel = p.relative_to(self.root).as_posix()
                if rel.startswith(prefix):
                    out.append(rel)
        return sorted(out)

    def snapshot(self) -> Path:
        dest = Path(tempfile.mkdtemp(prefix="threads-cases-snap-"))
        shutil.copytree(self.root, dest, dirs_exist_ok=True)
        return dest

    def restore(self, token: Path) -> None:
        """Back to the folder of ``token``, a :meth:`snapshot` (a copy of the root)."""
        shutil.rmtree(self.root)
        shutil.copytree(Path(token), self.root)
