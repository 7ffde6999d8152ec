"""Each case of a suite opened once (:func:`~threads_cases.case.loader.inspect_case`) for all
the implementations it runs on, and dropped after the last of them (spec/reports.md 1.3)."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, TypeVar

from ...case.loader import Case, inspect_case
from ...core.errors import Problem

#: a case as ``inspect_case`` found it: the case (None when unreadable) and its problems
Inspected = tuple[Case | None, list[Problem]]


#: what a run of a case gives (a ``CaseResult``: anything with a ``duration_ms``)
class _Timed(Protocol):
    duration_ms: float


R = TypeVar("R", bound=_Timed)


class OpenedCases:
    """Each case opened once for all the implementations it runs on, and dropped after the
    last of them (thread-safe: ``jobs`` runs cases at once). The time spent opening a case
    counts in the ``duration_ms`` of the result that opened it (spec/reports.md 1.3)."""

    def __init__(self, paths: list[Path]) -> None:
        self._left = Counter(paths)
        self._cases: dict[Path, Inspected] = {}
        self._locks = {c: threading.Lock() for c in self._left}
        self._lock = threading.Lock()

    def run(self, path: Path, body: Callable[[Inspected], R]) -> R:
        started, opening_ms = time.perf_counter(), 0.0
        with self._locks[path]:
            if path not in self._cases:
                self._cases[path] = inspect_case(path)
                opening_ms = (time.perf_counter() - started) * 1000
            opened = self._cases[path]
        try:
            result = body(opened)
            result.duration_ms += opening_ms
            return result
        finally:
            with self._lock:
                self._left[path] -= 1
                if self._left[path] == 0:
                    self._cases.pop(path, None)
