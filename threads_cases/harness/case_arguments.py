"""The arguments of :func:`~threads_cases.harness.runner.run_case` a caller can get wrong:
each is refused with ``CaseError("invalid_request")`` and a hint written for the API, never a
TypeError (as ts/src/case/save-arguments.ts does for saveCase)."""

from __future__ import annotations

import os
from typing import Any

from ..core.errors import CaseError


def check_arguments(path: Any, implementation: Any) -> None:
    """``invalid_request`` (hint for the API) for a ``path`` or ``implementation`` of a
    wrong type, which would otherwise surface as a TypeError from deep inside the run."""
    if not isinstance(path, str | os.PathLike):
        raise CaseError(
            "invalid_request",
            f"the case path must be a str or Path, not {type(path).__name__} {path!r:.40}",
            hint='pass the path of a case directory, such as run_case("cases/my-case")',
        )
    if not isinstance(implementation, str) and not callable(
        getattr(implementation, "request", None)
    ):
        raise CaseError(
            "invalid_request",
            "implementation must be a name or an Implementation, not "
            f"{type(implementation).__name__} {implementation!r:.40}",
            hint='pass implementation="threads-py", "threads-ts" or a configured name',
        )


def supply_calls(supply: dict[str, Any] | None) -> dict[str, Any] | None:
    """Accept a supply document ``{"calls": {...}}`` or its ``calls`` mapping; check it.
    Raises ``CaseError("invalid_request")`` for a wrong shape (spec/replay.md, "supply")."""
    if supply is None:
        return None
    if not isinstance(supply, dict):
        raise CaseError(
            "invalid_request",
            f"supply must be a dict, not {type(supply).__name__}",
            hint='pass supply={"calls": {...}} (spec/replay.md, "supply"), or leave it out',
        )
    from ..reference.replay import check_supply

    doc = supply if set(supply) == {"calls"} else {"calls": supply}
    return check_supply(doc, source="supply")
