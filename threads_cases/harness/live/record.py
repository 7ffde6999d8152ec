"""What a live run leaves for ``accept --from-live`` (spec/replay.md 11.8): one line per
live result in ``.threads-cases/last-live.jsonl``::

    {"path", "implementation", "verdict", "reasons", "stop",
     "live": {model?, system?, allow_write?},      # the replay request's ``live`` object
     "replies": [<reply>, ...]}                    # every reply the turn got, in call order

Nothing of the provider's key or settings is kept: only what the turn saw.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ...core.errors import CaseError
from ...core.statedir import state_path
from ...core.strictjson import iter_jsonl
from ..run.runner import SuiteResult
from .desk import LiveOptions

#: its name in the folder of core.statedir (never inside a case)
LAST_LIVE = "last-live.jsonl"


def live_records(suite: SuiteResult, options: LiveOptions) -> list[dict[str, Any]]:
    """The lines for every live result of ``suite`` (see the module docstring)."""
    return [
        {
            "path": r.path,
            "implementation": r.implementation,
            "verdict": r.verdict,
            "reasons": r.reasons,
            "stop": r.stop,
            "live": options.request_body(),
            "replies": [x["reply"] for x in r.live_replies],
        }
        for r in suite.results
        if r.live_replies is not None
    ]


def write_live_records(lines: list[dict[str, Any]], path: Path | None = None) -> None:
    """Write the lines canonically and atomically (to ``path``, by default
    ``.threads-cases/last-live.jsonl`` outside any case)."""
    from ..report.suite import write_jsonl

    write_jsonl(lines, state_path(LAST_LIVE) if path is None else path)


def find_live_record(case: Path, implementation: str, path: Path | None = None) -> dict[str, Any]:
    """The last live run's line for ``case`` on ``implementation`` (in ``path``, by default
    the one :func:`write_live_records` writes). Raises ``CaseError("invalid_request")`` when
    there is none (run it with ``--live`` first)."""
    path = state_path(LAST_LIVE) if path is None else path
    if path.is_file():
        want = os.path.realpath(case)
        for _, line in iter_jsonl(path, code="json_invalid"):
            if (
                isinstance(line, dict)
                and line.get("implementation") == implementation
                and os.path.realpath(str(line.get("path", ""))) == want
            ):
                return line
    raise CaseError(
        "invalid_request",
        f"the last live run ({path}) holds no live result of {case} on {implementation}",
        hint=f"run it first: threads-cases run {case} --live --impl {implementation} ...",
    )
