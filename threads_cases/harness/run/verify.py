"""The replay ``save`` runs before it writes a case (spec/case-format.md 5.10): the case
directory replayed in process on the Python reference implementation exactly as ``run``
would, refused with ``replay_failed`` when the verdict would not be ``pass`` (the rule of
:func:`threads_cases.case.verify.acceptable`), naming the check that failed and the nearest
event. This is the :data:`~threads_cases.case.verifier.Verifier` the API layer hands a save.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...case.verify import TOLERATED, acceptable, replay_failed_hint
from ...core.errors import CaseError


def _describe_event(ev: dict[str, Any] | None) -> str:
    if not ev:
        return ""
    return f"; nearest event: seq {ev.get('seq')} {ev.get('type')}"


def verify_case_dir(path: Path, dialects: Sequence[str], agent: Any = None) -> None:
    """Run the case directory ``path`` on ``threads-py`` in process (with the log of the first
    of ``dialects`` when ``threads-py`` is not listed), replaying ``agent`` when given: the
    agent the thread was recorded with (an ``AgentSpec``, whose sandbox handlers a custom
    tool needs) or a reference to the user's agent (``"module:attribute"``, ``--agent``).

    Raises ``CaseError("replay_failed")`` naming the first failing check (its id, reason
    code and detail) and the nearest replayed event when there is one, or the error that
    kept the case from running (``handler_missing`` for a custom sandbox tool replayed
    without its agent).
    """
    from ...protocol.server import PythonImplementation
    from .case_arguments import split_agent
    from .runner import run_one

    spec, ref = split_agent(agent, ())
    impl = PythonImplementation(spec)
    if impl.dialect not in dialects:
        impl.dialect = dialects[0]
    result = run_one(path, impl, agent=ref)
    if acceptable(result.verdict, result.reasons):
        return
    bad = [c for c in result.checks if c.result == "fail"] or [
        c for c in result.checks if c.result == "warn" and c.code not in TOLERATED
    ]
    if bad:
        check = bad[0]
        what = f"check {check.id} ({check.code or check.result}): {check.detail}"
        what += _describe_event(check.nearest_event)
        if check.id == "stop" and result.stop:
            what += f" (stop key {result.stop.get('stop_key')})"
    else:  # could not run: the error's own line, without its repeated code
        shown = result.message.removeprefix(
            f"error[{result.reasons[0]}]: " if result.reasons else ""
        )
        what = f"{', '.join(result.reasons)}: {shown}"
    causes = {c.code for c in bad} | set(result.reasons)
    raise CaseError(
        "replay_failed",
        f"the case would give {result.verdict} on its first run: {what}",
        hint=replay_failed_hint(causes),
    )
