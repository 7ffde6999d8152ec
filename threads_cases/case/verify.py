"""What ``save`` checks about its own work (spec/case-format.md 5.10 and 5.11).

* :func:`acceptable` and :func:`replay_failed_hint`: which verdict of a freshly built case's
  replay lets ``save`` write it (``drifted`` only because of request hashes is accepted), and
  the hint of its ``replay_failed`` otherwise; the replay itself is the harness's
  (:func:`threads_cases.harness.run.verify.verify_case_dir`, handed to the save as its
  :data:`~threads_cases.case.verifier.Verifier`).
* :func:`request_mismatches` lists the ``model_requested`` events of a log whose
  ``request_sha256`` is not the hash of the request the reducer state before them asks for
  (spec/thread-log.md 3.4): a case saved from them drifts on every run.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..core.reducer import Reducer
from .wording import NO_VERIFY_HINT

#: reasons a freshly saved case may drift for and still be written
TOLERATED = frozenset({"request_diverged", "no_expectations"})


def acceptable(verdict: str, reasons: Iterable[str]) -> bool:
    """True for ``pass``, and for ``drifted`` whose reasons are all in :data:`TOLERATED`."""
    return verdict == "pass" or (verdict == "drifted" and set(reasons) <= TOLERATED)


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
    the cause's own remedy when it has one (:data:`CAUSE_HINTS`), else ``--no-verify``
    (worded for the API: :data:`~.wording.NO_VERIFY_HINT`)."""
    found = set(causes)
    for code, hint in CAUSE_HINTS.items():
        if code in found:
            return hint
    return NO_VERIFY_HINT


def request_mismatches(events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``[{"line", "event_id", "recorded", "computed"}]`` for each ``model_requested`` event
    whose ``request_sha256`` differs from the hash of the request built from the state just
    before it (``line`` is the 1-based line of the event in the log). ``events`` are checked
    canonical envelopes. Linear in the log's size: the hashes are kept incrementally
    (:class:`~threads_cases.core.request.RequestHasher`, spec/replay.md "Cost")."""
    from ..core.request import RequestHasher

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
