"""Read-only JSON values and a read-only view of a log, handed out instead of deep copies.

:func:`freeze` turns a JSON value into one whose objects and arrays refuse to change
(``TypeError``); they are still ``dict`` and ``list`` instances, so they compare equal to,
serialise like and pass every ``isinstance`` check of the plain values. ``copy.deepcopy`` of
a frozen value gives plain, mutable ``dict`` and ``list`` values again.

:class:`EventsView` is what :attr:`threads_cases.Thread.events` returns: the events of the
log at the time of the call, frozen one by one on first access (so ``thread.events[-1]`` costs
one event, not a copy of the log).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from typing import Any, NoReturn, SupportsIndex, overload

_HINT = "a thread's events are read-only; copy.deepcopy() them for a mutable copy"


def _refuse(*_args: Any, **_kwargs: Any) -> NoReturn:
    raise TypeError(_HINT)


class FrozenDict(dict[str, Any]):
    """A JSON object that refuses to change."""

    __slots__ = ()
    __setitem__ = __delitem__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse
    __ior__ = _refuse

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return {k: copy.deepcopy(v, memo) for k, v in self.items()}

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (dict(self),))


class FrozenList(list[Any]):
    """A JSON array that refuses to change."""

    __slots__ = ()
    __setitem__ = __delitem__ = _refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse
    __iadd__ = __imul__ = _refuse

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return [copy.deepcopy(v, memo) for v in self]

    def __copy__(self) -> list[Any]:
        return list(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (list(self),))


def freeze(value: Any) -> Any:
    """A read-only copy of a JSON value (objects and arrays frozen all the way down)."""
    if isinstance(value, dict):
        return (
            value
            if type(value) is FrozenDict
            else FrozenDict((k, freeze(v)) for k, v in value.items())
        )
    if isinstance(value, list):
        return value if type(value) is FrozenList else FrozenList(freeze(v) for v in value)
    return value


class EventsView(Sequence[dict[str, Any]]):
    """The first ``length`` events of an append-only log, read-only.

    Indexing gives a frozen event (a ``dict`` that refuses changes); a slice gives a list of
    them; the view compares equal to any sequence of equal events. ``frozen`` is a cache of
    already frozen events shared by the views of one log.
    """

    __slots__ = ("_events", "_frozen", "_length")

    def __init__(
        self, events: Sequence[dict[str, Any]], frozen: list[dict[str, Any]], length: int
    ) -> None:
        self._events = events
        self._frozen = frozen
        self._length = length

    def __len__(self) -> int:
        return self._length

    def _at(self, i: int) -> dict[str, Any]:
        frozen = self._frozen
        while len(frozen) <= i:
            frozen.append(freeze(self._events[len(frozen)]))
        return frozen[i]

    @overload
    def __getitem__(self, index: SupportsIndex) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...
    def __getitem__(self, index: SupportsIndex | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            return [self._at(i) for i in range(*index.indices(self._length))]
        i = index.__index__()
        if i < 0:
            i += self._length
        if not 0 <= i < self._length:
            raise IndexError("event index out of range")
        return self._at(i)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for i in range(self._length):
            yield self._at(i)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"EventsView({list(self)!r})"

    def __deepcopy__(self, memo: dict[int, Any]) -> list[dict[str, Any]]:
        return [copy.deepcopy(ev, memo) for ev in self]
