"""The ``uuid``/``parentUuid`` tree of a Claude Code transcript (spec/importers.md section 2,
items 5 and 7): a few bytes per record, built by the first pass of
:class:`~threads_cases.importers.claude_code.ClaudeCodeSource`, and the branches a fork
drops (:func:`dropped`)."""

from __future__ import annotations

from array import array
from typing import Any

from .claude_mapping import classify_user

#: node flags: a real user message, a sidechain line
REAL = 1
SIDE = 2


class Tree:
    """The ``uuid``/``parentUuid`` links of the records, a few bytes per record. A record
    with no parent hangs off its ``logicalParentUuid`` (a compaction boundary)."""

    def __init__(self) -> None:
        #: uuid -> the node of the last record holding it, in file order
        self.index: dict[str, int] = {}
        self.record = array("l")
        self.parent = array("l")
        self.flags = bytearray()
        self.lines = array("l")  # per node: its line number
        self.kinds: list[str] = []  # per node: its line type
        self._late: list[tuple[int, str]] = []  # parents named before they appear

    def add(self, idx: int, lineno: int, obj: dict[str, Any], t: Any, side: bool) -> None:
        """Add record ``idx`` at line ``lineno`` (``t``: its type, ``side``: whether it is a
        sidechain line). Call :meth:`repeats` first for a uuid already seen."""
        uid = obj.get("uuid")
        if not isinstance(uid, str) or not uid:
            return
        node = len(self.record)
        self.index[uid] = node
        self.record.append(idx)
        self.lines.append(lineno)
        self.kinds.append(str(t))
        parent = obj.get("parentUuid")
        if not isinstance(parent, str):
            parent = obj.get("logicalParentUuid")
        p = -1
        if isinstance(parent, str):
            p = self.index.get(parent, -1)
            if p < 0:
                self._late.append((node, parent))
        self.parent.append(p)
        flags = SIDE if side else 0
        if t == "user" and classify_user(obj) in ("real", "command"):
            flags |= REAL
        self.flags.append(flags)

    def repeats(self, obj: dict[str, Any], t: Any, times: array[int], idx: int) -> int | None:
        """The node of an earlier record whose copy record ``idx`` is (the same uuid, type and
        time: a resumed session copies lines of the earlier file), else None. A uuid reused
        with other content is no copy: both records are kept (:meth:`add` then makes the
        later one the owner of the uuid, so the records naming it as parent attach to it)."""
        uid = obj.get("uuid")
        node = self.index.get(uid) if isinstance(uid, str) else None
        if node is None:
            return None
        if self.kinds[node] == str(t) and times[self.record[node]] == times[idx]:
            return node
        return -1 - node  # reused: minus one minus the earlier node

    def link(self) -> None:
        for node, parent in self._late:
            self.parent[node] = self.index.get(parent, -1)


def dropped(forks: dict[int, list[int]], parent: array[int], target: int | None) -> bytearray:
    """Per node, whether it is on a branch not followed: at each fork (``forks``: parent ->
    its real-user children) the child on the path to ``target``, else the one whose subtree
    holds the newest node, is followed."""
    n = len(parent)
    newest = array("l", range(n))
    for i in range(n - 1, -1, -1):
        p = parent[i]
        if p >= 0 and newest[i] > newest[p]:
            newest[p] = newest[i]
    on_path: set[int] = set()
    if target is not None:
        i = target
        while i >= 0 and i not in on_path:
            on_path.add(i)
            i = parent[i]
    dropped = bytearray(n)
    for children in forks.values():
        keep = next((c for c in children if c in on_path), None)
        if keep is None:
            keep = max(children, key=lambda c: newest[c])
        for c in children:
            if c != keep:
                dropped[c] = 1
    for i in range(n):
        p = parent[i]
        if p >= 0 and p < i and dropped[p]:
            dropped[i] = 1
    return dropped
