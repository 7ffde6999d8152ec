"""Running many cases at once, deterministically (spec/reports.md 1.5, 1.6 and 3.2).

* :class:`DriverPool`: up to ``size`` driver processes of one implementation; each request
  goes to an idle one (a driver still answers one request at a time), so ``--jobs N`` runs
  up to N cases at once per implementation.
* :func:`run_work`: runs the work items on ``jobs`` threads per implementation (each
  implementation's cases started in work order) and returns the results in work order,
  whatever the timing. ``max_fail`` is exact: the results are
  those of a serial run that stops after the ``max_fail``-th failure.
* :func:`shard_of` / :func:`parse_shard`: which of N shards a case belongs to, by a hash of
  its directory name, so adding a case never moves another one.
"""

from __future__ import annotations

import hashlib
import os
import queue
import threading
from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ...core.errors import CaseError
from ...core.shapes import HelloAnswer
from ...protocol.client import MAX_RESTARTS, DriverImplementation, Implementation

if TYPE_CHECKING:  # the live turn's type only
    from ...reference.live import AskModel

T = TypeVar("T")


class DriverPool:
    """Up to ``size`` copies of a :class:`DriverImplementation`, started lazily, each serving
    one request at a time. Restarts are counted over the whole pool: past
    :data:`MAX_RESTARTS` every request is ``driver_unavailable``, as for one driver."""

    def __init__(self, first: DriverImplementation, size: int) -> None:
        self.first = first
        self.name = first.name
        self.dialect = first.dialect
        self.size = max(1, size)
        self.isolation = getattr(first, "isolation", "none")
        self.required = getattr(first, "required", False)
        self._members: list[DriverImplementation] = [first]
        self._restarts_offset = 0
        self._idle: queue.LifoQueue[DriverImplementation] = queue.LifoQueue()
        self._idle.put(first)
        self._lock = threading.Lock()

    @property
    def restarts(self) -> int:
        """Restarts over every driver of the pool."""
        return sum(m.restarts for m in self._members) + self._restarts_offset

    @restarts.setter
    def restarts(self, value: int) -> None:
        self._restarts_offset = value - sum(m.restarts for m in self._members)

    def _clone(self) -> DriverImplementation:
        f = self.first
        member = DriverImplementation(
            f.name,
            f.command,
            dialect=f.dialect,
            timeout=f.timeout,
            validate_protocol=f.validate_protocol,
            cwd=f.cwd,
            env=f.env,
            launcher=f.launcher,
        )
        self._members.append(member)
        return member

    def _checkout(self) -> DriverImplementation:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        with self._lock:
            if len(self._members) < self.size:
                return self._clone()
        return self._idle.get()

    def _call(self, fn: Callable[[DriverImplementation], T]) -> T:
        if self.restarts > MAX_RESTARTS:
            raise CaseError(
                "driver_unavailable", f"{self.name} was restarted {MAX_RESTARTS} times; giving up"
            )
        member = self._checkout()
        try:
            return fn(member)
        finally:
            self._idle.put(member)

    def hello(self) -> HelloAnswer:
        return self._call(lambda m: m.hello())

    def request(
        self, message: dict[str, Any], on_model_call: AskModel | None = None
    ) -> dict[str, Any]:
        if on_model_call is None:
            return self._call(lambda m: m.request(message))
        return self._call(lambda m: m.request(message, on_model_call))

    def exchange_line(self, line: bytes) -> Any:
        return self._call(lambda m: m.exchange_line(line))

    def close(self) -> None:
        for m in self._members:
            m.close()


#: Cases each parallel job must have before the default ``--jobs`` adds it. Another job is
#: another driver process: its start-up (about 0.3 s of CPU for threads-py, 2026-12-01) is the
#: CPU of about 40 cases, and handing cases between threads costs about 4% per case, so a job
#: with fewer cases than this makes the run cost more CPU than it saves in wall time.
CASES_PER_JOB = 400


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask, else the CPU count)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def default_jobs(cases: int, implementations: Sequence[Any]) -> int:
    """The ``--jobs`` a run gets when none is given (spec/reports.md 1.5): 1 unless some
    implementation runs as a driver process and the suite has :data:`CASES_PER_JOB` cases
    for each job, and never more than :func:`available_cpus`. In-process implementations
    run on one thread: their threads share one interpreter, so more buy nothing."""
    if not any(isinstance(i, (DriverImplementation, DriverPool)) for i in implementations):
        return 1
    return max(1, min(available_cpus(), cases // CASES_PER_JOB))


def pooled(impl: Implementation, size: int) -> Implementation:
    """``impl`` as a :class:`DriverPool` of ``size`` when it is a driver and ``size`` > 1;
    anything else (in-process ``threads-py``, fakes) is returned as it is."""
    if size > 1 and isinstance(impl, DriverImplementation):
        return DriverPool(impl, size)
    return impl


def run_work(
    work: Sequence[T],
    run: Callable[[T], Any],
    *,
    workers: int,
    failed: Callable[[Any], bool],
    max_fail: int | None = None,
    on_result: Callable[[Any], None] | None = None,
    lane: Callable[[T], Hashable] | None = None,
) -> list[Any | None]:
    """``run(item)`` for every item on ``workers`` threads; results in work order.

    With ``lane``, items of one lane (for the runner: one implementation) run on ``workers``
    threads of their own, the lanes side by side: at most ``workers`` items of a lane at once,
    started in work order (with ``workers=1``, one after the other in work order, so a driver
    sees its cases in the order of the report). Without it, all items share ``workers``
    threads. Items start in order. With ``max_fail`` an item does not start once ``max_fail``
    failures are known among the items before it, and the results after the
    ``max_fail``-th failure in work order are dropped (``None``): exactly what a serial run
    returns, whatever ``workers`` is."""
    results: list[Any | None] = [None] * len(work)
    failed_at: list[int] = []
    lock = threading.Lock()

    def one(index: int) -> None:
        with lock:
            if max_fail is not None and sum(f < index for f in failed_at) >= max_fail:
                return
        r = run(work[index])
        with lock:
            if failed(r):
                failed_at.append(index)
            results[index] = r
        if on_result is not None:
            on_result(r)

    lanes: dict[Hashable, list[int]] = {}
    for k, item in enumerate(work):
        lanes.setdefault(None if lane is None else lane(item), []).append(k)
    if workers <= 1 and len(lanes) <= 1:
        for k in range(len(work)):
            one(k)
    else:
        from concurrent.futures import ThreadPoolExecutor  # with logging: a run that needs it

        pools = [ThreadPoolExecutor(max_workers=max(1, workers)) for _ in lanes]
        try:
            futures = [
                p.submit(one, k) for p, ks in zip(pools, lanes.values(), strict=True) for k in ks
            ]
            for f in futures:
                f.result()
        finally:
            for p in pools:
                p.shutdown(wait=True)
    if max_fail is not None:
        seen = 0
        for k, r in enumerate(results):
            if r is not None and failed(r):
                seen += 1
                if seen >= max_fail:
                    results[k + 1 :] = [None] * (len(results) - k - 1)
                    break
    return results


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` -> ``(K, N)`` with 1 <= K <= N. Raises ``CaseError("invalid_request")``."""
    k, sep, n = text.partition("/")
    if not (sep and k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise CaseError(
            "invalid_request",
            f"--shard must be K/N with 1 <= K <= N, not {text!r}",
            hint="for example --shard 1/4 ... --shard 4/4 across four CI machines",
        )
    return int(k), int(n)


def shard_of(name: str, count: int) -> int:
    """The shard (1..count) of the case whose directory is named ``name``: the first 8
    bytes of the sha256 of its UTF-8 name, as a big-endian integer, modulo ``count``, plus 1.
    Adding or removing a case never moves another."""
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1
