"""``--agent`` and ``--app-dir``: the user's own agent, for every command that replays cases
(``run``, ``accept``, ``save``, ``coverage``, ``baseline update`` and ``prune``;
spec/replay.md 8.2). Parsing only: :func:`threads_cases.harness.run.agent_setup.agent_refs`
decides which implementation replays which agent, and nothing of the user's code is
imported here (a driver imports it when the first case replays)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from ..reference.agent_ref import AgentRef

#: ``--agent REF`` (repeatable)
AgentOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--agent",
        help="Replay your own agent instead of the recorded one: module:attribute for "
        "threads-py, ./file.mjs#export for threads-ts, or IMPL=REF for any implementation "
        "(repeatable; default: agent in threads-cases.toml or [tool.threads-cases]).",
    ),
]
#: ``--app-dir DIR`` (repeatable)
AppDirOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--app-dir",
        help="A folder the agent's module is imported from (repeatable; default: the "
        "current folder, or app-dir under [tool.threads-cases]).",
    ),
]


def agents_of(agent: list[str] | None, app_dir: list[Path] | None) -> dict[str, AgentRef]:
    """The agent of each implementation: the options, else the settings (``{}`` for none).
    Raises ``CaseError("invalid_request")`` for a malformed option or setting."""
    from ..harness.run.agent_setup import agent_refs
    from ..harness.run.registry import configured

    return agent_refs(agent, [str(d) for d in app_dir or []], known=configured())
