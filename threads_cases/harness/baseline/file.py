"""The baseline file: expected failures of a suite, per case, implementation and check
(spec/replay.md section 12, ``schemas/baseline.schema.json``).

A baseline is one strict JSON document, written canonically with its entries sorted so
that a diff shows only the entries that changed::

    {"format": 1, "entries": [
      {"case": "reads-notes", "implementation": "threads-ts", "check": "must[2]",
       "code": "must_unmatched", "reason": "the TS runtime drops tool results", "issue": "https://..."}
    ]}

``check`` (one check id of a result) and ``code`` (the reason code the failure must have)
narrow an entry; without them it lists any failure of the case on that implementation.
``reason`` is required; ``issue`` is an optional ``http(s)`` link.

Where a run finds the baseline (:func:`locate_baseline`): ``--baseline FILE``, else
``baseline = "..."`` under ``[tool.threads-cases]`` of pyproject.toml (or in
threads-cases.toml; relative to that file's folder), else ``.threads-cases/baseline.json``
when it exists, both in the project's folder
(:func:`~threads_cases.core.statedir.project_home`).

A conformance suite's ``skips/<impl>.json`` (spec/conformance.md section 4) holds the same
entries keyed by ``test``; :func:`read_skips` reads them as a :class:`Baseline`.

Errors: ``baseline_invalid`` (a file that is not strict JSON or breaks the schema, with its
JSON pointer; a path that is there but is not a regular file: a folder, a broken symlink, a
FIFO), ``invalid_request`` (a ``--baseline`` file or a configured one that does not
exist), ``io_error`` (the file cannot be written).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core.atomic import replacing
from ...core.canonical import canonical_document
from ...core.errors import CaseError
from ...core.schemas import schema_problems
from ...core.shapes import BaselineRecord
from ...core.statedir import project_home, state_path
from ...core.strictjson import read_json_file

FORMAT = 1
#: Where a project keeps its baseline when nothing else is configured.
DEFAULT_PATH = Path(".threads-cases") / "baseline.json"
#: The reason ``baseline update`` gives a new entry when no ``--reason`` is passed; a run
#: warns about every entry that still carries it.
TODO_REASON = "TODO: say why this fails"
PRUNE_COMMAND = "threads-cases baseline prune"


@dataclass(frozen=True)
class Entry:
    """One expected failure: ``case`` and ``implementation`` (as the report names them), an
    optional ``check`` id and reason ``code`` narrowing it, the ``reason`` and an ``issue``."""

    case: str
    implementation: str
    reason: str
    check: str | None = None
    code: str | None = None
    issue: str | None = None
    #: where the entry was read ("" for a new one): the file, for messages
    source: str = field(default="", compare=False)

    @property
    def key(self) -> tuple[str, str, str, str]:
        """The sort and identity key: case, implementation, check, code."""
        return (self.case, self.implementation, self.check or "", self.code or "")

    @property
    def label(self) -> str:
        """``reads-notes [threads-ts] must[2]`` (the check only when the entry names one)."""
        return f"{self.case} [{self.implementation}]" + (f" {self.check}" if self.check else "")

    def to_json(self) -> dict[str, str]:
        """The entry as the baseline file holds it."""
        out = {"case": self.case, "implementation": self.implementation, "reason": self.reason}
        for key in ("check", "code", "issue"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out

    def record(self) -> BaselineRecord:
        """The ``baseline`` member of a report's result line:
        ``{"reason", "issue"?, "check"?}`` (``$defs/baseline`` of report.schema.json)."""
        out: BaselineRecord = {"reason": self.reason}
        if self.issue is not None:
            out["issue"] = self.issue
        if self.check is not None:
            out["check"] = self.check
        return out


@dataclass(frozen=True)
class Baseline:
    """The entries of one baseline file (``path`` ``None`` for no file)."""

    path: Path | None
    entries: tuple[Entry, ...] = ()
    _index: dict[tuple[str, str], tuple[Entry, ...]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def __post_init__(self) -> None:
        index: dict[tuple[str, str], list[Entry]] = {}
        for e in self.entries:
            index.setdefault((e.case, e.implementation), []).append(e)
        self._index.update({k: tuple(v) for k, v in index.items()})

    def for_result(self, case: str, implementation: str) -> tuple[Entry, ...]:
        """The entries of one case on one implementation (in file order)."""
        return self._index.get((case, implementation), ())

    @property
    def todo(self) -> list[Entry]:
        """Entries whose reason is still :data:`TODO_REASON`'s placeholder."""
        return [e for e in self.entries if e.reason.startswith("TODO")]

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.entries)


#: The warning code of a baseline entry naming an implementation that is not known.
UNKNOWN_IMPLEMENTATION = "baseline_implementation_unknown"


def unknown_implementation(baseline: Iterable[Entry], known: Iterable[str]) -> list[Entry]:
    """The entries naming an implementation not in ``known`` (the built-ins and the
    configured ones): no result ever has that implementation, so they can never match."""
    names = set(known)
    return [e for e in baseline if e.implementation not in names]


def unknown_implementation_warning(entry: Entry) -> str:
    """The one-line warning ``run`` prints for an entry :func:`unknown_implementation`
    found, naming the entry, its implementation and the command that removes it."""
    where = f"{entry.source}: " if entry.source else ""
    return (
        f"warning[{UNKNOWN_IMPLEMENTATION}]: {where}the entry {entry.label} names the "
        f"implementation {entry.implementation!r}, which is not known (threads-py, threads-ts "
        f"or one configured in the settings' implementations): it can never match; "
        f"`{PRUNE_COMMAND}` removes it"
    )


def _entries(
    doc: Any,
    path: Path,
    definition: str | None,
    key: str,
    test: str,
    implementation: str = "",
) -> list[Entry]:
    """The entries of a checked document (``doc[key]``, the case named by ``test``)."""
    problems = schema_problems(doc, "baseline.schema.json", definition)
    if problems:
        pointer, message = problems[0]
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        raise CaseError(
            "baseline_invalid",
            message + more,
            file=str(path),
            pointer=pointer,
            hint="see schemas/baseline.schema.json (spec/replay.md section 12)",
        )
    out = []
    seen: dict[tuple[str, str, str, str], int] = {}
    for i, item in enumerate(doc[key]):
        entry = Entry(
            item[test],
            item.get("implementation", implementation),
            item["reason"],
            item.get("check"),
            item.get("code"),
            item.get("issue"),
            str(path),
        )
        if entry.key in seen:
            raise CaseError(
                "baseline_invalid",
                f"the same entry as /{key}/{seen[entry.key]}",
                file=str(path),
                pointer=f"/{key}/{i}",
                hint="keep one entry per case, implementation, check and code",
            )
        seen[entry.key] = i
        out.append(entry)
    return out


#: The hints under a baseline path that is not a regular file, for a command that reads it
#: (``run``, ``baseline prune``) and for one that writes it (``baseline update``).
NOT_A_FILE_HINTS = {
    False: "a baseline is one JSON file (spec/replay.md section 12): name that file, or move "
    "this away (`threads-cases baseline update PATHS` writes a new one)",
    True: "`baseline update` writes the baseline as one JSON file at this path: move this "
    "away, or name another file with --baseline",
}


def _kind(path: Path) -> str | None:
    """What ``path`` is when it is there but not a regular file (after symlinks), else None."""
    if not os.path.lexists(path) or path.is_file():
        return None
    if path.is_dir():
        return "a folder"
    if path.is_symlink() and not path.exists():
        return "a broken symbolic link"
    return "not a regular file"


def refuse_not_a_file(path: str | os.PathLike[str], *, writing: bool = False) -> None:
    """Raise ``CaseError("baseline_invalid")`` naming ``path`` when it is there but is not a
    regular file (a folder, a broken symlink, a FIFO): a run must not read it as no baseline,
    nor ``baseline update`` fail late writing it. ``writing`` picks the hint."""
    kind = _kind(Path(path))
    if kind is not None:
        raise CaseError(
            "baseline_invalid",
            f"{kind}, not a baseline file",
            file=str(path),
            hint=NOT_A_FILE_HINTS[writing],
        )


def read_baseline(path: str | os.PathLike[str]) -> Baseline:
    """Read and check a baseline file. Raises ``CaseError("baseline_invalid")`` (with the
    file and JSON pointer) for a file that is not strict JSON, breaks the schema or repeats an
    entry, and for a path that is not a regular file (:func:`refuse_not_a_file`)."""
    p = Path(path)
    refuse_not_a_file(p)
    doc = read_json_file(p, code="baseline_invalid")
    return Baseline(p, tuple(_entries(doc, p, None, "entries", "case")))


def read_skips(path: str | os.PathLike[str], implementation: str) -> Baseline:
    """A conformance suite's ``skips/<impl>.json`` as the baseline of ``implementation``
    (an absent file: no entries). Raises ``CaseError("baseline_invalid")`` as
    :func:`read_baseline` does."""
    p = Path(path)
    if not p.is_file():
        return Baseline(None)
    doc = read_json_file(p, code="baseline_invalid")
    return Baseline(p, tuple(_entries(doc, p, "skips", "skips", "test", implementation)))


def baseline_document(entries: Iterable[Entry]) -> bytes:
    """The canonical bytes of a baseline holding ``entries``: sorted by case,
    implementation, check and code, one key per line."""
    ordered = sorted(entries, key=lambda e: e.key)
    return canonical_document({"format": FORMAT, "entries": [e.to_json() for e in ordered]})


def write_baseline(path: str | os.PathLike[str], entries: Iterable[Entry]) -> bool:
    """Write ``entries`` to ``path`` canonically and atomically (a temporary file in the same
    folder, flushed to disk, then renamed over the target: a reader sees the old file or the
    new one). Returns False when the file already held exactly these bytes (nothing is
    written). Raises ``CaseError("io_error")`` when it cannot be written."""
    p = Path(path)
    data = baseline_document(entries)
    try:
        if p.is_file() and p.read_bytes() == data:
            return False
        p.parent.mkdir(parents=True, exist_ok=True)
        with replacing(p, fsync=True) as fh:  # the umask's mode, or the file's (never 0600)
            fh.write(data)
    except OSError as exc:
        raise CaseError(
            "io_error",
            f"cannot write the baseline: {exc.strerror or exc}",
            file=str(p),
            hint="check that the folder exists and is writable",
        ) from None
    return True


def configured_baseline(start: Path | None = None) -> Path | None:
    """``baseline = "..."`` under ``[tool.threads-cases]`` (or in threads-cases.toml),
    relative to that file's folder; ``None`` when not set. Raises
    ``CaseError("invalid_request")`` for a value that is not a non-empty string."""
    from ..run.settings import settings_table

    src, table = settings_table(start)
    value = table.get("baseline")
    return None if value is None else src.parent / value


def locate_baseline(explicit: Path | None = None, start: Path | None = None) -> Path:
    """The baseline file a run uses: ``explicit`` (``--baseline``), else the configured one
    (:func:`configured_baseline`), else :data:`DEFAULT_PATH` in the project's folder seen
    from ``start`` (default the current folder; never inside a case:
    :func:`~threads_cases.core.statedir.project_home`), where the settings are read too.
    The path may not exist (``baseline update`` creates it)."""
    if explicit is not None:
        return explicit
    configured = configured_baseline(start)
    if configured is not None:
        return configured
    if start is None:  # relative to the current folder, for messages
        return state_path(DEFAULT_PATH.name)
    return project_home(start) / DEFAULT_PATH


def load_baseline(explicit: Path | None = None, start: Path | None = None) -> Baseline:
    """The baseline of a run: the located file read, or no entries when the default file does
    not exist. A ``--baseline`` file or a configured one that does not exist is refused with
    ``CaseError("invalid_request")``; a malformed one, or any of them that is there but is not
    a regular file (a folder...), with ``baseline_invalid``."""
    path = locate_baseline(explicit, start)
    if os.path.lexists(path):
        return read_baseline(path)
    named = explicit is not None or configured_baseline(start) is not None
    if named:
        raise CaseError(
            "invalid_request",
            "no baseline file here",
            file=str(path),
            hint="create it with `threads-cases baseline update PATHS` (or fix the path)",
        )
    return Baseline(None)
