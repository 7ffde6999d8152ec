"""Report lines encoded where the case ran: a forked worker (:mod:`.forked`) writes the
canonical JSON of each result it sends (spec/reports.md 1.5), so that the parent, which
merges the results of every worker on one core, does not encode them all itself.

The parent uses a worker's bytes only for a line that is exactly the one the worker encoded:
each result carries ``(stamp, canonical)``, where ``stamp`` is orjson's bytes of the line
(keys in their order, no passthrough types: a different value, type or order gives other
bytes), and :func:`line_encoder` answers a line whose orjson bytes equal a stamp with that
stamp's canonical bytes; any other line (the header, the footer, a result the baseline
judged in the parent, one whose encoding a worker could not write) is encoded as before by
:func:`~threads_cases.core.canonical.canonical_line`, with its refusals. The report is the
same bytes whatever ``--jobs`` (tests/test_forked_workers.py compares them)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import orjson

from ...core.canonical import canonical_line
from ...core.errors import CaseError

if TYPE_CHECKING:
    from .runner import CaseResult

#: dataclasses, datetimes and subclasses of JSON types are refused (never stamped): a line
#: holding one is encoded, and refused, by ``canonical_line`` as before
_STRICT = (
    orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)


def _stamp(line: Mapping[str, Any]) -> bytes | None:
    """orjson's bytes of ``line``, or None when orjson refuses it."""
    try:
        return orjson.dumps(line, option=_STRICT)
    except (orjson.JSONEncodeError, TypeError):
        return None


def encode_result(result: CaseResult) -> CaseResult:
    """``result`` with its report line encoded (``result.encoded``), in the worker that ran
    it; a line that cannot be written canonically is left to the parent, which refuses it
    (``unsafe_value``) as a serial run does."""
    line = result.to_json()
    stamp = _stamp(line)
    if stamp is not None:
        try:
            result.encoded = (stamp, canonical_line(line))
        except CaseError:
            result.encoded = None
    return result


def line_encoder(results: Iterable[CaseResult]) -> Callable[[Mapping[str, Any]], bytes]:
    """A function giving the canonical bytes (no LF) of a report line: a worker's bytes for a
    line equal to one it encoded (among ``results``), else ``canonical_line(line)``."""
    known = {r.encoded[0]: r.encoded[1] for r in results if r.encoded is not None}

    def encode(line: Mapping[str, Any]) -> bytes:
        if known:
            stamp = _stamp(line)
            if stamp is not None and stamp in known:
                return known[stamp]
        return canonical_line(line)

    return encode
