"""The case directory: its files, fingerprint, atomic write and loading (spec/case-format.md).

A case is a directory ``<dir>/<name>/``::

    case.json                   {format: 1, name, input, expect {must, expect}, at,
                                 external_effects, implementations, portable,
                                 agent {name, model, system_sha256, tools}, fingerprint,
                                 created_with {tool, version}}
    log.<impl>.jsonl            the log up to and including ``at``, in each dialect
    expected.<impl>.json        the state that log reduces to, in that dialect
    model.json                  {format: 1,
                                 replies: [{request_sha256, message, stop_reason, usage}]}
    stubs.json                  {format: 1, calls: [{tool, input, result: {content, is_error}}]}
    sandbox.json                {format: 1, reads: [{path, sha256, artifact}]}
    artifacts/<sha256 hex>      bytes the log and sandbox.json refer to

Every file is canonical (spec/strict-json.md), so the same turn always gives the same bytes.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import fcntl
import hashlib
import os
import re
import secrets
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import CaseError
from ..core.strictjson import canonical_document, read_json_file
from ..core.texts import quote
from ..reference.sandbox import is_device_name

CASE_FORMAT = 1
DEFAULT_IMPLEMENTATIONS = ("threads-py", "threads-ts")
_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")


def is_hex64(text: str) -> bool:
    """Whether ``text`` is 64 lower-case hex digits: a sha256, and the only name an artifact
    file may have (case-format.md 3.7)."""
    return _HEX64.fullmatch(text) is not None


_HEX64 = re.compile(r"[0-9a-f]{64}")


def check_case_name(name: Any) -> str:
    """Return ``name`` if it is a valid case name (spec/case-format.md, section 1).

    1 to 64 of letters, digits, ``.``, ``_``, ``-``; not ``.`` or ``..`` nor any other name
    starting with ``.`` (hidden; reserved for a save's temporary directories); no Windows device
    name (CON, NUL, COM1, ...) in any case or with any extension. Raises
    ``CaseError("invalid_request")``.
    """
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise CaseError(
            "invalid_request",
            f"case name {quote(name)} must be 1-64 letters, digits, '.', '_' or '-'",
        )
    if set(name) == {"."}:
        raise CaseError("invalid_request", f"case name {quote(name)} is not a directory name")
    if name.startswith("."):
        # hidden names are where a save keeps its temporary directories (.<name>.tmp-*,
        # .<name>.old-*), and discover() skips hidden folders: such a case could be deleted
        # by another save and would never run
        raise CaseError("invalid_request", f"case name {quote(name)} must not start with '.'")
    if is_device_name(name):
        raise CaseError("invalid_request", f"case name {quote(name)} is a Windows device name")
    return name


@dataclass(frozen=True)
class CaseExpectation:
    """``must``: matchers that each match some replayed event, in any order; ``expect``:
    matchers that match replayed events as an ordered subsequence (spec/matchers.md)."""

    must: list[dict[str, Any]] = field(default_factory=list)
    expect: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"must": list(self.must), "expect": list(self.expect)}


def fingerprint(files: dict[str, bytes]) -> str:
    """``"sha256:<hex>"`` over every file of a case (spec/case-format.md, section 4).

    ``files`` maps relative POSIX paths to bytes, ``case.json`` given *without* its
    ``fingerprint`` key. The digest is the sha256 of the lines ``<sha256 hex>  <path>\\n``,
    sorted by path.
    """
    lines = sorted(
        (path.encode("utf-8"), hashlib.sha256(data).hexdigest()) for path, data in files.items()
    )
    text = b"".join(h.encode() + b"  " + p + b"\n" for p, h in lines)
    return "sha256:" + hashlib.sha256(text).hexdigest()


def finish_case_files(meta: dict[str, Any], files: dict[str, bytes]) -> dict[str, bytes]:
    """Add ``case.json`` (with its fingerprint) to ``files``; returns the complete set."""
    meta = {k: v for k, v in meta.items() if k != "fingerprint"}
    body = dict(files)
    body["case.json"] = canonical_document(meta)
    fp = fingerprint(body)
    body["case.json"] = canonical_document({**meta, "fingerprint": fp})
    return body


def read_case_files(path: Path) -> dict[str, bytes]:
    """Every regular file under a case directory: ``{relative posix path: bytes}``.

    Raises ``CaseError("case_invalid")`` for a symlink or special file inside the case.
    """
    out: dict[str, bytes] = {}
    for p in sorted(path.rglob("*")):
        rel = p.relative_to(path).as_posix()
        if p.is_symlink():
            raise CaseError("case_invalid", "symlinks are not allowed inside a case", file=str(p))
        if p.is_dir():
            continue
        if not p.is_file():
            raise CaseError("case_invalid", "only regular files are allowed in a case", file=str(p))
        out[rel] = p.read_bytes()
    return out


def computed_fingerprint(files: dict[str, bytes]) -> str | None:
    """The fingerprint a case's files should carry (``None`` if case.json is unreadable)."""
    import orjson

    try:
        meta = orjson.loads(files["case.json"])
    except (KeyError, orjson.JSONDecodeError):
        return None
    if not isinstance(meta, dict):
        return None
    body = dict(files)
    body["case.json"] = canonical_document({k: v for k, v in meta.items() if k != "fingerprint"})
    return fingerprint(body)


# --------------------------------------------------------------------------- atomic write

_RENAME_EXCHANGE = 2


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
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """An exclusive lock on ``directory`` itself (flock), held while a case in it is saved."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _cleanup_strays(directory: Path, name: str, target: Path) -> None:
    """Remove what an interrupted save of ``name`` left; put an old case back if a
    non-atomic swap was interrupted between its two renames."""
    olds = sorted(directory.glob(f".{name}.old-*"))
    if not target.exists() and olds:
        os.rename(olds[0], target)
        olds = olds[1:]
    for p in [*directory.glob(f".{name}.tmp-*"), *olds]:
        shutil.rmtree(p, ignore_errors=True)


def write_case_dir(
    directory: Path,
    name: str,
    files: dict[str, bytes],
    *,
    overwrite: bool,
    verify: Callable[[Path], None] | None = None,
) -> str:
    """Write a case atomically to ``directory/name`` (spec/case-format.md, section 5).

    Returns ``"created"``, ``"unchanged"`` (identical bytes already there) or ``"replaced"``.
    Raises ``CaseError("case_exists")`` when a different case is there and ``overwrite`` is
    false. The case is built beside the target, fsynced, then renamed (or atomically
    exchanged) into place; an interrupted save leaves the old case or the new one.
    ``verify(path)`` is called on the complete temporary directory before it is moved into
    place (and on an identical existing case); whatever it raises is raised after the
    temporary directory is removed, so nothing is written (case-format.md 6.1 step 6).
    """
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / name
    with _locked(directory):
        _cleanup_strays(directory, name, target)
        if target.is_symlink() or (target.exists() and not target.is_dir()):
            raise CaseError(
                "case_exists", f"{target} exists and is not a case directory", file=str(target)
            )
        if target.exists():
            try:
                existing = read_case_files(target)
            except CaseError:
                existing = {}
            if existing == files:
                if verify is not None:
                    verify(target)
                return "unchanged"
            if not overwrite:
                raise CaseError(
                    "case_exists",
                    f"a different case is already at {target}",
                    file=str(target),
                    hint="pass --overwrite (overwrite=True) to replace it",
                )
        tmp = directory / f".{name}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
        tmp.mkdir()
        for rel in sorted(files):
            dest = tmp / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            with open(dest, "wb") as fh:
                fh.write(files[rel])
                fh.flush()
                os.fsync(fh.fileno())
            _crash_point()
        for d in sorted({(tmp / rel).parent for rel in files}, reverse=True):
            _fsync_dir(d)
        _crash_point()
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
            old = directory / f".{name}.old-{os.getpid()}-{secrets.token_hex(4)}"
            os.rename(target, old)
            _crash_point()
            os.rename(tmp, target)
            _fsync_dir(directory)
            shutil.rmtree(old)
        return "replaced"


# --------------------------------------------------------------------------- loading


@dataclass(frozen=True)
class Case:
    """A case directory read from disk: ``meta`` is case.json, the rest are file paths."""

    path: Path
    meta: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.meta["name"])

    @property
    def implementations(self) -> list[str]:
        return list(self.meta["implementations"])

    def log_path(self, impl: str) -> Path:
        return self.path / f"log.{impl}.jsonl"

    def read(self, name: str) -> Any:
        """Read a JSON file of the case strictly (``case_invalid`` with the file on error)."""
        return read_json_file(self.path / name, code="case_invalid")

    def artifact(self, artifact_id: str) -> bytes | None:
        """The bytes of ``artifacts/<hex>``, or None when missing. Only 64 lower-case hex
        digits name an artifact: anything else (``..``, ``/``, ...) is None, never a path
        outside the case."""
        hexname = artifact_id.removeprefix("sha256:") if isinstance(artifact_id, str) else ""
        if not is_hex64(hexname):
            return None
        p = self.path / "artifacts" / hexname
        return p.read_bytes() if p.is_file() and not p.is_symlink() else None


def load_case(path: str | os.PathLike[str]) -> Case:
    """Read and schema-check ``case.json`` of a case directory.

    Raises ``CaseError("case_invalid")`` (a missing or broken case.json, a schema problem
    with its JSON pointer) or ``CaseError("format_unsupported")`` (a format other than 1).
    """
    from ..core.schemas import schema_problems

    p = Path(path)
    if not (p / "case.json").is_file():
        raise CaseError("case_invalid", "not a case directory: case.json is missing", file=str(p))
    meta = read_json_file(p / "case.json", code="case_invalid")
    if isinstance(meta, dict) and meta.get("format") != CASE_FORMAT and "format" in meta:
        raise CaseError(
            "format_unsupported",
            f"case format {quote(meta.get('format'))} is not supported "
            f"(this version reads {CASE_FORMAT})",
            file=str(p / "case.json"),
            pointer="/format",
            hint="upgrade threads-cases, or re-save the case",
        )
    problems = schema_problems(meta, "case.schema.json")
    if problems:
        pointer, message = problems[0]
        raise CaseError(
            "case_invalid", f"schema: {message}", file=str(p / "case.json"), pointer=pointer
        )
    try:
        check_case_name(meta["name"])  # the schema allows "..", "CON", ...
    except CaseError as err:
        raise CaseError(
            "case_invalid", err.message, file=str(p / "case.json"), pointer="/name"
        ) from None
    return Case(p, meta)
