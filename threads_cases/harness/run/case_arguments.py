"""The arguments of :func:`~threads_cases.harness.run.runner.run_case` a caller can get wrong:
each is refused with ``CaseError("invalid_request")`` and a hint written for the API, never a
TypeError (as ts/src/case/save-arguments.ts does for saveCase)."""

from __future__ import annotations

import os
from typing import Any

from ...core.errors import CaseError


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
    from ...reference.replay import check_supply

    doc = supply if set(supply) == {"calls"} else {"calls": supply}
    return check_supply(doc, source="supply")


def split_agent(agent: Any, app_dir: Any) -> tuple[Any, Any]:
    """``run_case``'s ``agent`` as ``(AgentSpec or None, AgentRef or None)``: an
    :class:`~threads_cases.reference.agent.AgentSpec` runs in process; a reference string (or
    an :class:`~threads_cases.reference.agent_ref.AgentRef`) is loaded by the implementation,
    its imports found in ``app_dir`` (default: the current folder). ``invalid_request`` for
    any other type, or an ``app_dir`` that is not a folder."""
    from ...reference.agent import AgentSpec
    from ...reference.agent_ref import AgentRef

    if agent is None or isinstance(agent, AgentSpec):
        return agent, None
    if isinstance(agent, AgentRef):
        return None, agent
    if not isinstance(agent, str) or not agent:
        raise CaseError(
            "invalid_request",
            f"agent must be an AgentSpec or a reference string, not {type(agent).__name__}",
            hint='pass agent=AgentSpec(...), or agent="my_agent:agent" (threads-py) or '
            '"./agent.mjs#agent" (threads-ts)',
        )
    dirs = [app_dir] if isinstance(app_dir, str | os.PathLike) else list(app_dir or ["."])
    folders = []
    for d in dirs:
        if not os.path.isdir(d):
            raise CaseError(
                "invalid_request",
                "app_dir is not a folder",
                file=str(d),
                hint="pass the folders the agent's module is imported from, or leave it out",
            )
        folders.append(os.path.abspath(d))
    return None, AgentRef(agent, tuple(folders))
