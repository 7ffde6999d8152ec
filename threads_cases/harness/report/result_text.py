"""A result as plain text (spec/reports.md 7): the lines a failing pytest item, a GitHub
annotation and ``str(CaseResult)`` show — the baseline entry, the message, what differs in
the user's agent, the first divergence and each failing or warning check."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..live.said import panel_lines

if TYPE_CHECKING:
    from ..run.runner import CaseResult


def baseline_text(r: CaseResult) -> str:
    """``xfail: <reason> (<issue>)`` for an xfail, from its ``baseline`` record."""
    b = r.baseline or {"reason": ""}
    check = f" [{b['check']}]" if "check" in b else ""
    issue = f" ({b['issue']})" if "issue" in b else ""
    return f"{r.verdict}{check}: {b['reason']}{issue}"


def stale_text(r: CaseResult) -> str:
    """The line of an xpass's message naming the stale entry and how to remove it."""
    for line in r.message.splitlines():
        if line.startswith("stale baseline entry"):
            return line
    return baseline_text(r)


def agent_line(r: CaseResult) -> str | None:
    """``agent: <change>; <change>`` when the run replayed the user's own agent and it
    differs from the recorded one (spec/replay.md 8.5), else None."""
    if not r.agent_changes:
        return None
    return "agent: " + "; ".join(r.agent_changes)


def describe(r: CaseResult) -> str:
    """Plain-text detail of a result: what differs in the agent, the first divergence, each
    failing or warning check, with differences."""
    lines = []
    if r.baseline is not None:
        lines.append(baseline_text(r))
    if r.message:
        lines.append(r.message)
    agent = agent_line(r)
    if agent:
        lines.append(agent)
    if r.divergence:
        lines.append(f"first divergence: {r.divergence['summary']}")
    lines.extend(panel_lines(r.live_replies))  # what a live model said (live/said.py)
    if r.repeat is not None:
        from .repeat_view import rate_text

        lines.append(f"repeat: {rate_text(r.repeat)}")
    for c in r.checks:
        if c.result in ("fail", "warn"):
            lines.append(f"[{c.code or c.id}] {c.id}: {c.detail}")
            for d in c.differences[:20]:
                lines.append(f"    {d.render()}")
            if len(c.differences) > 20:
                lines.append(f"    ... {len(c.differences) - 20} more")
    return "\n".join(lines)
