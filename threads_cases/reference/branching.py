"""Structure a forked thread shares with its parent: the log prefix and the event ids.

A fork used to deep-copy the parent's log up to the fork point and reduce it again, so its
cost grew with the thread (issue 20). A :class:`SharedLog` instead keeps a reference to the
parent's log and the length of the shared prefix, and an :class:`IdIndex` keeps a reference
to the parent's ids with the cut-off positions that say which of them the fork sees. Both
rely on the parent's log being append-only: what a child shares never changes.

Chains of forks of forks are flattened once they are :data:`MAX_DEPTH` links deep, so a
lookup costs at most that many steps (the flattening costs one pass over the prefix, paid
once every :data:`MAX_DEPTH` nested forks).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import islice
from typing import Any, SupportsIndex, overload

#: the longest chain of shared prefixes or id indexes before it is flattened
MAX_DEPTH = 8

Event = dict[str, Any]


class SharedLog(Sequence[Event]):
    """An append-only log: ``base[:n]`` (shared, never changed) followed by its own events.

    ``SharedLog()`` is an empty log; ``log.branch(n)`` is a new log sharing the first ``n``
    events of ``log`` (O(1), or one pass over them when the chain is flattened).
    """

    __slots__ = ("_base", "_depth", "_n", "_tail")

    def __init__(self, events: Sequence[Event] = ()) -> None:
        self._base: SharedLog | None = None
        self._n = 0
        self._tail: list[Event] = list(events)
        self._depth = 0

    def branch(self, n: int) -> SharedLog:
        """A new log whose first ``n`` events are this log's first ``n`` (shared)."""
        base: SharedLog = self
        while base._base is not None and n <= base._n:  # the prefix lies wholly in the base
            base = base._base
        child = SharedLog()
        if base._depth + 1 > MAX_DEPTH:
            child._tail = list(islice(iter(base), n))
            return child
        child._base, child._n, child._depth = base, n, base._depth + 1
        return child

    def append(self, event: Event) -> None:
        self._tail.append(event)

    def __len__(self) -> int:
        return self._n + len(self._tail)

    def _at(self, i: int) -> Event:
        log = self
        while i < log._n:
            log = log._base  # type: ignore[assignment]
        return log._tail[i - log._n]

    @overload
    def __getitem__(self, index: SupportsIndex) -> Event: ...
    @overload
    def __getitem__(self, index: slice) -> list[Event]: ...
    def __getitem__(self, index: SupportsIndex | slice) -> Event | list[Event]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step == 1 and start >= self._n:
                return self._tail[start - self._n : max(start, stop) - self._n]
            if step == 1:
                return list(islice(iter(self), start, max(start, stop)))
            return [self._at(i) for i in range(start, stop, step)]
        i = index.__index__()
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("event index out of range")
        return self._at(i)

    def __iter__(self) -> Iterator[Event]:
        if self._base is not None:
            yield from islice(iter(self._base), self._n)
        yield from self._tail

    def __repr__(self) -> str:
        return f"SharedLog({list(self)!r})"


class IdIndex:
    """The event ids a thread must not reuse, each with its position in the log.

    A fork takes every id its parent had taken when the fork was made (``clash`` cut-off:
    the parent's length then; spec/thread-log.md 9.2), its parent's own and those the parent
    took from its own parent in turn, and can find by id the events of the shared prefix
    (``found`` cut-off: the prefix length). Positions in a shared prefix are the same along
    the chain, so a look-up honours every cut-off on the way; a taken id honours only the
    cut-off of the link below it (an ancestor's id past the prefix is at a position of the
    ancestor's log, which the cut-offs further down do not measure).
    """

    __slots__ = ("_cut_clash", "_cut_found", "_depth", "_own", "_parent")

    def __init__(self, positions: dict[str, int] | None = None) -> None:
        self._own: dict[str, int] = positions or {}
        self._parent: IdIndex | None = None
        self._cut_clash = self._cut_found = 0
        self._depth = 0

    def branch(self, clash: int, found: int) -> IdIndex:
        """A child index: the ids here at positions below ``clash`` are taken, those below
        ``found`` are in the child's log."""
        child = IdIndex()
        if self._depth + 1 > MAX_DEPTH:
            # flattened: the parent's ids past ``found`` stay (taken), and position() of one
            # of them is refused by the caller's check that the log holds it there
            child._own = dict(self._entries(clash))
            return child
        child._parent, child._cut_clash, child._cut_found = self, clash, found
        child._depth = self._depth + 1
        return child

    def _entries(self, cut: int) -> Iterator[tuple[str, int]]:
        """Every (id, position) this index sees with position below ``cut``."""
        if self._parent is not None:
            yield from self._parent._entries(self._cut_clash)
        yield from ((k, p) for k, p in self._own.items() if p < cut)

    def add(self, event_id: str, position: int) -> None:
        self._own[event_id] = position

    def __contains__(self, event_id: str) -> bool:
        return self._find(event_id, clash=True) is not None

    def position(self, event_id: str) -> int | None:
        """The position of ``event_id`` in this thread's log, or None (the caller checks the
        log holds that id there: an id taken by a refused recording points nowhere)."""
        return self._find(event_id, clash=False)

    def _find(self, event_id: str, *, clash: bool) -> int | None:
        """The position of ``event_id`` walking up the parents: for a clash check, each
        parent's ids below the ``_cut_clash`` of the link below it; for a look-up, below
        every ``_cut_found`` on the way (the shared prefix)."""
        index: IdIndex | None = self
        cut = -1
        while index is not None:
            p = index._own.get(event_id)
            if p is not None and (cut < 0 or p < cut):
                return p
            if clash:
                cut = index._cut_clash
            else:
                cut = index._cut_found if cut < 0 else min(cut, index._cut_found)
            index = index._parent
        return None
