"""A case's log reduced once and kept for the next request about the same case
(spec/driver-protocol.md 2.5, replay.md 2.1 step 1; issue 33).

A driver answers a run's ``reduce`` of ``<case>/log.<d>.jsonl`` and then its ``replay`` of
``<case>``: :func:`fold_case_log` reads and reduces the log for the first, and the case
loader (:func:`threads_cases.case.loader.open_case` with ``known=``) takes the events and the
reducer from it for the second when the case's log is the same bytes, so the log is folded
once. The reducer is only read or branched (``Case.fork``), never applied to again.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.dialects import Dialect
from ..core.errors import CaseError
from ..core.files import MAX_LOG_BYTES, read_regular
from ..core.log import inspect_log
from ..core.reducer import Reducer


@dataclass(frozen=True)
class ReducedLog:
    """``path`` (the log file), the ``data`` it held, its canonical ``events`` and the
    ``reducer`` they were folded into (its state: the log's)."""

    path: Path
    dialect: str
    data: bytes
    events: list[dict[str, Any]] = field(repr=False)
    reducer: Reducer = field(repr=False)


class NamedBytes(io.BytesIO):
    """A log held in memory, named by its path in error locations."""

    def __init__(self, data: bytes, name: str) -> None:
        super().__init__(data)
        self.name = name


def fold_case_log(path: str, dialect: Dialect) -> ReducedLog | None:
    """The log at ``path`` folded as the case loader folds it (step 7 of
    spec/case-format.md 8.1), when ``path`` is ``log.<dialect>.jsonl`` beside a
    ``case.json``, is a regular file and passes every check; else None (the caller reduces
    it as any log, and reports its refusal as it always did)."""
    p = Path(path)
    if p.name != f"log.{dialect.name}.jsonl" or not (p.parent / "case.json").is_file():
        return None
    try:  # what reduce_log would refuse (too large, not a regular file) it refuses below
        data = read_regular(p, code="log_invalid", limit=MAX_LOG_BYTES)
    except (CaseError, OSError):
        return None
    reducer = Reducer(copy_data=False)  # the events are this fold's own
    events, problems = inspect_log(NamedBytes(data, str(p)), dialect=dialect, reducer=reducer)
    if problems:
        return None
    return ReducedLog(p, dialect.name, data, events, reducer)


def reuse(known: ReducedLog | None, where: Path, dialect: str, data: bytes) -> ReducedLog | None:
    """``known`` when it is the fold of ``where`` in ``dialect`` holding ``data``, else None."""
    if known is None or known.dialect != dialect or known.data != data:
        return None
    return known if os.path.abspath(known.path) == os.path.abspath(where) else None
