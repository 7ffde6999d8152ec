"""What differs between the agent a case was recorded with and the agent a run replayed
(spec/replay.md 8.5, spec/reports.md 7.5).

A run with the user's own agent (``--agent``) first says in one line what differs, then shows
the first divergence as every run does. The recorded agent is the one the case's model
replies were recorded for: the model, system prompt and tools of the first request record
of ``model.json`` (case-format.md 3.4), which ``accept`` rewrites; a case without request
records falls back to the agent of the prefix state. :func:`agent_changes` lists, in this
order and each only when it applies::

    name "a" -> "b"
    model "a" -> "b"
    system prompt changed
    tools added: "x", "y"
    tools removed: "z"
    tools changed: "t" (description, input_schema)
    tools reordered

Names are written as canonical JSON (``json(x)``, replay.md "Texts"); a tool's changed parts
are the keys of ``{description, input_schema, kind, effect}`` whose canonical JSON differs,
in that order, each compared when both sides hold it (a request record holds a tool's
``name``, ``description`` and ``input_schema`` only).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...core.canonical import canonical_line
from ...core.texts import quote

TOOL_PARTS = ("description", "input_schema", "kind", "effect")


def recorded_agent(
    records: Sequence[dict[str, Any] | None], prefix_agent: dict[str, Any] | None
) -> dict[str, Any] | None:
    """The agent the case's replies were recorded for: ``{model, system, tools}`` of the
    first request record (with the prefix agent's ``name``), else the prefix agent."""
    first = records[0] if records else None
    if first is None:
        return prefix_agent
    name = (prefix_agent or {}).get("name", "")
    return {
        "name": name,
        "model": first["model"],
        "system": first["system"],
        "tools": first["tools"],
    }


def _same(a: Any, b: Any) -> bool:
    return canonical_line(a) == canonical_line(b)


def _names(names: Sequence[str]) -> str:
    return ", ".join(quote(n) for n in names)


def agent_changes(recorded: dict[str, Any] | None, replayed: dict[str, Any]) -> list[str]:
    """The differences of ``replayed`` from ``recorded`` (module docstring), empty when the
    two agents ask the model the same way. ``recorded`` None (no agent known) gives none.
    The ``name`` is compared only when ``recorded`` holds one."""
    if recorded is None:
        return []
    out: list[str] = []
    for key, label in (("name", "name"), ("model", "model")):
        if key == "name" and not recorded.get("name"):
            continue
        if recorded.get(key) != replayed.get(key):
            out.append(f"{label} {quote(recorded.get(key, ''))} -> {quote(replayed.get(key, ''))}")
    if recorded.get("system", "") != replayed.get("system", ""):
        out.append("system prompt changed")
    out.extend(_tool_changes(list(recorded.get("tools") or []), list(replayed.get("tools") or [])))
    return out


def _tool_changes(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[str]:
    before = {t.get("name"): t for t in old}
    after = {t.get("name"): t for t in new}
    out: list[str] = []
    added = [str(n) for n in after if n not in before]
    removed = [str(n) for n in before if n not in after]
    if added:
        out.append(f"tools added: {_names(added)}")
    if removed:
        out.append(f"tools removed: {_names(removed)}")
    changed = []
    for name, tool in after.items():
        if name in before:
            parts = [
                p
                for p in TOOL_PARTS
                if p in before[name] and p in tool and not _same(before[name][p], tool[p])
            ]
            if parts:
                changed.append(f"{quote(str(name))} ({', '.join(parts)})")
    if changed:
        out.append(f"tools changed: {', '.join(changed)}")
    kept_old = [n for n in before if n in after]
    kept_new = [n for n in after if n in before]
    if kept_old != kept_new:
        out.append("tools reordered")
    return out
