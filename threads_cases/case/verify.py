"""What ``save`` checks about its own work (spec/case-format.md 5.10 and 5.11).

* :func:`verify_case_dir` replays a freshly built case directory in process on the Python
  reference implementation exactly as ``run`` would, and refuses it with ``replay_failed``
  when the verdict would not be ``pass`` (``drifted`` only because of request hashes is
  accepted), naming the check that failed and the nearest event.
* :func:`request_mismatches` lists the ``model_requested`` events of a log whose
  ``request_sha256`` is not the hash of the request the reducer state before them asks for
  (spec/thread-log.md 3.4): a case saved from them drifts on every run.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..core.errors import REASON_HINTS, CaseError
from ..core.reducer import Reducer

#: reasons a freshly saved case may drift for and still be written
TOLERATED = frozenset({"request_diverged", "no_expectations"})


def acceptable(verdict: str, reasons: Iterable[str]) -> bool:
    """True for ``pass``, and for ``drifted`` whose reasons are all in :data:`TOLERATED`."""
    return verdict == "pass" or (verdict == "drifted" and set(reasons) <= TOLERATED)


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
    from ..harness.run.case_arguments import split_agent
    from ..harness.run.runner import run_one
    from ..protocol.implementations import PythonImplementation

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


#: The hint of ``replay_failed`` when the failure has a remedy other than ``--no-verify``.
CAUSE_HINTS: dict[str, str] = {
    "sandbox_content_missing": "save with --sandbox DIR holding the files as they were when "
    "the turn ran (the log knows some only by their sha256)",
    "handler_missing": "save with --agent module:attribute naming the agent that holds the "
    "tool's handler (thread.save_case uses the thread's own agent), or --no-verify",
    "agent_unavailable": "fix the --agent reference (module:attribute, found from the "
    "current folder or --app-dir), or save with --no-verify",
}


def replay_failed_hint(causes: Iterable[str | None]) -> str:
    """The hint of a ``replay_failed`` whose failing checks and reasons have ``causes`` codes:
    the cause's own remedy when it has one (:data:`CAUSE_HINTS`), else ``--no-verify``."""
    found = set(causes)
    for code, hint in CAUSE_HINTS.items():
        if code in found:
            return hint
    return REASON_HINTS["replay_failed"]


def request_mismatches(events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``[{"line", "event_id", "recorded", "computed"}]`` for each ``model_requested`` event
    whose ``request_sha256`` differs from the hash of the request built from the state just
    before it (``line`` is the 1-based line of the event in the log). ``events`` are checked
    canonical envelopes. Linear in the log's size: the hashes are kept incrementally
    (:class:`~threads_cases.reference.request.RequestHasher`, spec/replay.md "Cost")."""
    from ..reference.request import RequestHasher

    out: list[dict[str, Any]] = []
    reducer = Reducer()
    hasher = RequestHasher()
    for i, ev in enumerate(events):
        if ev["type"] == "model_requested":
            computed = hasher.sha256(reducer.state)
            recorded = ev["data"]["request_sha256"]
            if computed != recorded:
                out.append(
                    {
                        "line": i + 1,
                        "event_id": ev["event_id"],
                        "recorded": recorded,
                        "computed": computed,
                    }
                )
        reducer.apply(ev)
    return out
