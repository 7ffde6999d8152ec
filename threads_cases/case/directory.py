"""The case directory: its files, fingerprint, atomic write and loading (spec/case-format.md).

A case is a directory ``<dir>/<name>/``::

    case.json                   {format: 2, name, input, expect {must, expect}, at,
                                 external_effects, dialects, portable,
                                 agent {name, model, system_sha256, tools}, fingerprint,
                                 created_with {tool, version}}
    log.<dialect>.jsonl         the log up to and including ``at``, in each listed dialect
    expected.<dialect>.json     the state that log reduces to, in that dialect
    model.json                  {format: 1,
                                 replies: [{request_sha256, message, stop_reason, usage}]}
    stubs.json                  {format: 1, calls: [{tool, input, result: {content, is_error}}]}
    sandbox.json                {format: 1, reads: [{path, sha256, artifact}]}
    artifacts/<sha256 hex>      bytes the log and sandbox.json refer to

Every file is canonical (spec/strict-json.md), so the same turn always gives the same bytes.
A format-1 ``case.json`` (the same, with the dialects under ``implementations``) is read as
format 2 (:func:`upgraded_meta`); every write of a case writes format 2 (case-format.md 1.3).
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.canonical import canonical_document
from ..core.errors import CaseError, Location, Problem
from ..core.files import MAX_CASE_BYTES, read_regular, recording_limit
from ..core.shapes import CaseMatchers, JsonObject
from ..core.texts import quote
from .once import read_case_json
from .sandbox import is_device_name

if TYPE_CHECKING:
    pass

#: The format of case.json this version writes; :data:`READ_FORMATS` are the ones it reads.
CASE_FORMAT = 2
READ_FORMATS = (1, 2)
#: The dialects a case is saved in unless told otherwise (case.json ``dialects``).
DEFAULT_DIALECTS = ("threads-py", "threads-ts")
#: The format of model.json, stubs.json and sandbox.json (unchanged by case format 2).
RECORDING_FORMAT = 1
_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")


def is_hex64(text: str) -> bool:
    """Whether ``text`` is 64 lower-case hex digits: a sha256, and the only name an artifact
    file may have (case-format.md 3.7)."""
    return _HEX64.fullmatch(text) is not None


_HEX64 = re.compile(r"[0-9a-f]{64}")


def check_case_name(name: Any) -> str:
    """Return ``name`` if it is a valid case name (spec/case-format.md, section 2).

    1 to 64 of ASCII letters, digits, ``.``, ``_``, ``-``; not ``.`` or ``..`` nor any other name
    starting with ``.`` (hidden; reserved for a save's temporary directories) or with ``-``
    (read as options by shell commands); no Windows device name (CON, NUL, COM1, ...) in any
    case or with any extension. Raises ``CaseError("invalid_request")``.
    """
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise CaseError(
            "invalid_request",
            f"case name {quote(name)} must be 1-64 ASCII letters, digits, '.', '_' or '-'",
        )
    if set(name) == {"."}:
        raise CaseError("invalid_request", f"case name {quote(name)} is not a directory name")
    if name.startswith("."):
        # hidden names are where a save keeps its temporary directories (.<name>.tmp-*,
        # .<name>.old-*), and discover() skips hidden folders: such a case could be deleted
        # by another save and would never run
        raise CaseError("invalid_request", f"case name {quote(name)} must not start with '.'")
    if name.startswith("-"):
        # a folder named -rf reads as options to rm, ls and threads-cases run alike
        raise CaseError("invalid_request", f"case name {quote(name)} must not start with '-'")
    if is_device_name(name):
        raise CaseError("invalid_request", f"case name {quote(name)} is a Windows device name")
    return name


@dataclass(frozen=True)
class CaseExpectation:
    """``must``: matchers that each match some replayed event, in any order; ``expect``:
    matchers that match replayed events as an ordered subsequence (spec/matchers.md)."""

    must: list[JsonObject] = field(default_factory=list)
    expect: list[JsonObject] = field(default_factory=list)

    def to_json(self) -> CaseMatchers:
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


def upgraded_meta(meta: Mapping[str, Any]) -> dict[str, Any]:
    """A format-1 ``case.json`` as format 2: ``implementations`` renamed ``dialects`` and
    ``format`` 2 (case-format.md 1.3); any other value is returned unchanged (a copy)."""
    if meta.get("format") != 1:
        return dict(meta)
    out = {k: v for k, v in meta.items() if k != "implementations"}
    out["format"] = CASE_FORMAT
    if "implementations" in meta:
        out["dialects"] = meta["implementations"]
    return out


def finish_case_files(meta: Mapping[str, Any], files: dict[str, bytes]) -> dict[str, bytes]:
    """Add ``case.json`` (with its fingerprint) to ``files``; returns the complete set. A
    format-1 ``meta`` is written as format 2 (:func:`upgraded_meta`)."""
    meta = {k: v for k, v in upgraded_meta(meta).items() if k != "fingerprint"}
    body = dict(files)
    body["case.json"] = canonical_document(meta)
    fp = fingerprint(body)
    body["case.json"] = canonical_document({**meta, "fingerprint": fp})
    return body


def walk_case(path: Path, *, strict: bool = False) -> tuple[dict[str, bytes], list[Problem]]:
    """Every regular file under ``path`` (``{posix relative path: bytes}``) and a
    ``case_invalid`` problem for each symlink or special file (which is skipped and never
    read), or ``case_too_large`` past the case limit. Each file is read within bounds
    (spec/case-format.md 8.4): opened without blocking or following links, its size checked
    before reading. ``strict=True`` raises the first problem instead, for the commands that
    show or compare a case and cannot leave a file out."""
    files: dict[str, bytes] = {}
    problems: list[Problem] = []
    budget = MAX_CASE_BYTES
    for p in sorted(path.rglob("*")):
        rel = p.relative_to(path).as_posix()
        if p.is_symlink():
            problems.append(
                Problem("case_invalid", "symlinks are not allowed inside a case", Location(str(p)))
            )
        elif p.is_dir():
            continue
        else:
            try:
                read = read_case_json if rel == "case.json" else read_regular
                data = read(
                    p,
                    code="case_invalid",
                    limit=recording_limit(rel, budget),
                    limit_code="case_too_large",
                    special_code="case_invalid",
                    follow_symlinks=False,
                )
            except CaseError as err:
                problems.append(Problem(err.code, err.message, Location(str(p))))
                continue
            budget -= len(data)
            files[rel] = data
    if strict and problems:
        first = problems[0]
        raise CaseError(first.code, first.message, file=first.location.file)
    return files, problems


def read_case_files(path: Path) -> dict[str, bytes]:
    """Every regular file under a case directory: ``{relative posix path: bytes}``.

    Raises ``CaseError("case_invalid")`` for a symlink or special file inside the case.
    """
    files, problems = walk_case(path)
    if problems:
        first = problems[0]
        raise CaseError(first.code, first.message, file=first.location.file)
    return files


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


# --------------------------------------------------------------------------- loading


def _peek_case_json(path: str | os.PathLike[str]) -> Any:
    """case.json of the case directory ``path`` read cheaply: a regular file (not a
    symlink) within the case size limit, strict JSON, nothing schema-checked; ``None``
    when that fails (loading the case tells why)."""
    from ..core.strictjson import parse

    try:
        where = Path(path) / "case.json"
        if where.is_symlink():
            return None
        data = read_case_json(where, code="case_invalid", limit=MAX_CASE_BYTES)
        return parse(data, code="case_invalid", file=str(where))
    except (CaseError, OSError):
        return None


def peek_case_name(path: str | os.PathLike[str]) -> str | None:
    """The name case.json gives the case directory ``path``, read cheaply for listing cases
    (the pytest plugin collects with it): only case.json is read (:func:`_peek_case_json`)
    and its ``name`` checked as a case name (:func:`check_case_name`). ``None`` when that
    fails; loading the case (:func:`threads_cases.case.loader.inspect_case`) tells why."""
    value = _peek_case_json(path)
    if not isinstance(value, dict):
        return None
    try:
        return check_case_name(value.get("name"))
    except CaseError:
        return None


def peek_case_dialects(path: str | os.PathLike[str]) -> list[str] | None:
    """The dialects case.json of ``path`` lists (``dialects``; ``implementations`` in
    format 1), read as cheaply as :func:`peek_case_name`; ``None`` when case.json cannot be
    read or holds no list of strings there (loading the case tells why)."""
    value = _peek_case_json(path)
    if not isinstance(value, dict):
        return None
    found = value.get("dialects", value.get("implementations"))
    if not isinstance(found, list) or not all(isinstance(d, str) for d in found):
        return None
    return list(found)


def shared_name_groups(
    cases: Sequence[str | os.PathLike[str]], known: Mapping[str, str | None] | None = None
) -> list[tuple[str, list[str]]]:
    """Each name (from case.json, :func:`peek_case_name`) that two or more of ``cases``
    share, with every path that holds it, by name. ``known`` maps ``str(case)`` to the name
    :func:`peek_case_name` gave it already (where the case ran: the forked workers of a run,
    harness/run/forked.py): those cases are not read again."""
    by_name: dict[str, list[str]] = {}
    for case in cases:
        key = str(case)
        name = known[key] if known is not None and key in known else peek_case_name(case)
        if name is not None:
            by_name.setdefault(name, []).append(str(case))
    return [(name, paths) for name, paths in sorted(by_name.items()) if len(paths) > 1]


def shared_name_message(name: str, paths: Sequence[str]) -> str:
    """What the warning about a shared name says (without its ``warning: ``)."""
    return (
        f"the cases {', '.join(paths)} share the name {name!r} (case.json `name`); "
        "reports and the baseline key cases by name: give each its own"
    )


def shared_names(
    cases: Sequence[str | os.PathLike[str]], known: Mapping[str, str | None] | None = None
) -> list[str]:
    """A warning for each name (from case.json, :func:`peek_case_name`) that two or more of
    ``cases`` share, naming every path that holds it: reports, ``--last-failed`` and the
    baseline key results by case name, so such cases stand for one another. ``known``: the
    names already peeked, as for :func:`shared_name_groups`."""
    return [
        f"warning: {shared_name_message(name, paths)}"
        for name, paths in shared_name_groups(cases, known)
    ]


#: The hint under a case.json that is there but not a regular file (a folder, a symlink...).
CASE_JSON_NOT_A_FILE_HINT = (
    "case.json must be a regular file holding the case's metadata (spec/case-format.md): "
    "replace it with one"
)


#: keys whose presence together (without ``format``) mark an upstream threads conformance case
UPSTREAM_CASE_KEYS = ("kind", "family", "clock")
UPSTREAM_CASE_MESSAGE = (
    "this is a conformance case of the upstream threads runtime (its case.json has kind, "
    "family and clock), not a threads-cases case"
)
UPSTREAM_CASE_HINT = (
    "run it with the threads runtime's own conformance suite; threads-cases runs the cases "
    "`threads-cases save` writes (spec/case-format.md 8.1)"
)


def is_upstream_case(path: Path) -> bool:
    """Whether ``path/case.json`` (a regular file of at most 1 MiB, strict JSON) is an object
    with ``kind``, ``family`` and ``clock`` and no ``format``: an upstream threads
    conformance case (case-format.md 8.1)."""
    from ..core.strictjson import parse

    try:
        value = parse(read_case_json(path / "case.json", code="case_invalid", limit=1 << 20))
    except (CaseError, OSError):
        return False  # reported by the usual checks
    return (
        isinstance(value, dict)
        and "format" not in value
        and all(k in value for k in UPSTREAM_CASE_KEYS)
    )


def case_json_kind(path: Path, *, upstream: bool = False) -> str | None:
    """What ``path/case.json`` is when it is not a regular file: ``missing``, ``folder``,
    ``symlink`` (a loop or not: no symlink is allowed inside a case), ``FIFO``, ``socket``
    or ``device``; None for a regular file. With ``upstream``, ``"upstream"`` for a regular
    file that is an upstream threads conformance case (:func:`is_upstream_case`). Raises
    OSError for a path too long."""
    try:
        mode = os.lstat(path / "case.json").st_mode
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP):
            return "missing"
        raise
    if stat.S_ISREG(mode):
        return "upstream" if upstream and is_upstream_case(path) else None
    if stat.S_ISDIR(mode):
        return "folder"
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "device"


#: A case path that does not exist, as the command line refuses it (case-format.md 7)
NO_SUCH_PATH = "no such file or folder"
NO_SUCH_HINT = "expected a case directory (a folder holding case.json)"


def case_json_problem(path: Path, kind: str) -> Problem:
    """The ``case_invalid`` problem of a case directory whose case.json is ``kind``
    (:func:`case_json_kind`), at the directory: "missing" is not a case directory;
    "upstream" (at case.json) is a conformance case of the threads runtime; anything else
    says what is there instead of a file. A ``path`` that does not exist is
    ``invalid_request`` ``no such file or folder``, in the command line's words."""
    if kind == "missing" and not os.path.lexists(path):
        return Problem("invalid_request", NO_SUCH_PATH, Location(str(path)), hint=NO_SUCH_HINT)
    if kind == "missing":
        return Problem(
            "case_invalid", "not a case directory: case.json is missing", Location(str(path))
        )
    if kind == "upstream":  # one line, not a schema problem per key it lacks
        where = Location(str(path / "case.json"))
        return Problem("case_invalid", UPSTREAM_CASE_MESSAGE, where, hint=UPSTREAM_CASE_HINT)
    return Problem(
        "case_invalid",
        f"case.json is a {kind}, not a file",
        Location(str(path)),
        hint=CASE_JSON_NOT_A_FILE_HINT,
    )
