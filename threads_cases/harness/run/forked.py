"""A suite's cases split over forked harness processes (``--jobs N``, spec/reports.md 1.5).

With threads, the harness process loads and checks every case itself
(:func:`~threads_cases.case.loader.inspect_case`: the walk, the reads, the schema checks;
the state comparison), on one core, however many drivers answer: a 2-core machine ran 1,000
small cases only about 1.2x faster with ``--jobs 2``. Here each of ``jobs`` worker
processes, forked from the harness once the cases are found, opens its own copy of every
implementation (in process, or its own driver process) and runs whole cases, every
implementation of a case one after the other (the case is read once, :mod:`.opened`); the
parent only hands out cases and merges the results in work order. The report is the one a
serial run gives, modulo timings: results are placed by their index in the work, and
``max_fail`` trims them as :func:`.pool.run_work` does.

A worker's results come back pickled through a pipe. A worker that dies (killed, out of
memory) gives ``error`` (``internal_error``) for the case it was running, another worker
takes the one it held beside, and the run goes on.
Only implementations that can be reopened in a worker fork (:func:`reopen`); anything else
(a caller's own object) runs on threads, as before.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import selectors
import struct
import sys
import warnings
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Generic, TypeVar

from ...protocol.client import DriverImplementation, Implementation
from .pool import pooled, run_work

T = TypeVar("T")
R = TypeVar("R")

#: cases a worker holds at once: one running, one waiting, so it never waits for the parent
AHEAD = 2
_LEN = struct.Struct("!Q")


def can_fork(impls: Sequence[Implementation]) -> bool:
    """Whether ``impls`` can run in forked workers: on Linux (macOS forks, but a fork of a
    process that loaded its system frameworks may crash, so multiprocessing spawns there)
    and each can be reopened."""
    return sys.platform.startswith("linux") and all(_reopenable(i) for i in impls)


def _reopenable(impl: Implementation) -> bool:
    """A driver (reopened as a new one), in process, or one that cannot run here (both
    stateless: the fork's copy is the worker's own)."""
    from ...protocol.server import PythonImplementation
    from .registry import UnavailableImplementation

    return type(impl) is DriverImplementation or isinstance(
        impl, (PythonImplementation, UnavailableImplementation)
    )


def reopen(impl: Implementation) -> Implementation:
    """A copy of ``impl`` for a worker: a driver gets a process of its own (the parent's,
    if started, is never used by a worker); an in-process one is the worker's own copy."""
    if type(impl) is not DriverImplementation:
        return impl  # in process: the fork gave the worker its own
    f = impl
    copy = DriverImplementation(
        f.name,
        f.command,
        dialect=f.dialect,
        timeout=f.timeout,
        validate_protocol=f.validate_protocol,
        cwd=f.cwd,
        env=f.env,
        required=f.required,
        launcher=f.launcher,
        pass_env=f.pass_env,
    )
    if hasattr(f, "isolation"):
        copy.isolation = f.isolation  # type: ignore[attr-defined]
    return copy


def _write(fd: int, data: bytes) -> None:
    view = memoryview(_LEN.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def _read_exact(fd: int, n: int) -> bytes | None:
    chunks, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _read(fd: int) -> bytes | None:
    head = _read_exact(fd, _LEN.size)
    return None if head is None else _read_exact(fd, _LEN.unpack(head)[0])


def _worker(
    jobs_fd: int, out_fd: int, groups: Sequence[Sequence[T]], run: Callable[[T], R]
) -> None:
    """A worker's loop: read a group's index, run its items, send their results; it ends
    when the parent closes the job pipe."""
    while True:
        got = _read(jobs_fd)
        if got is None:
            return
        index = int(got)
        _write(out_fd, pickle.dumps((index, [run(item) for item in groups[index]]), protocol=5))


class _Worker:
    """The parent's end of one worker: its pid, its pipes, the groups it holds."""

    def __init__(self, pid: int, jobs_fd: int, out_fd: int) -> None:
        self.pid, self.jobs_fd, self.out_fd = pid, jobs_fd, out_fd
        self.held: list[int] = []

    def stop(self) -> None:
        """Close the job pipe: the worker finishes what it holds and ends."""
        if self.jobs_fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.jobs_fd)
            self.jobs_fd = -1

    def end(self) -> None:
        """Close both pipes and wait for the process."""
        self.stop()
        if self.out_fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.out_fd)
            self.out_fd = -1
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)


def _fork_worker(
    groups: Sequence[Sequence[T]],
    open_worker: Callable[[], tuple[Callable[[T], R], Callable[[], None]]],
    siblings: Sequence[_Worker],
) -> _Worker:
    """Fork one worker: it closes the pipes of the workers forked before it (so that the
    parent sees the end of each worker's pipe when that worker ends), opens its
    implementations and serves groups until its job pipe closes."""
    jobs_r, jobs_w = os.pipe()
    out_r, out_w = os.pipe()
    with warnings.catch_warnings():
        # 3.12+ warns when the process has threads (a progress bar's): the worker touches
        # none of their state, only its own pipes and implementations
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the worker; its results are what the tests compare
        status = 0
        try:
            for fd in (*(f for s in siblings for f in (s.jobs_fd, s.out_fd)), jobs_w, out_r):
                if fd >= 0:
                    os.close(fd)
            run, close = open_worker()
            try:
                _worker(jobs_r, out_w, groups, run)
            finally:
                close()
        except BaseException:
            status = 1
        finally:
            os._exit(status)
    os.close(jobs_r)
    os.close(out_w)
    return _Worker(pid, jobs_w, out_r)


class _Dispatch(Generic[T, R]):
    """The parent's side of :func:`run_forked`: which group goes to which worker next."""

    def __init__(
        self,
        groups: Sequence[Sequence[T]],
        lost: Callable[[T], R],
        on_results: Callable[[int, list[R]], bool],
    ) -> None:
        self.groups, self.lost, self.on_results = groups, lost, on_results
        self.following = 0  # the next group never handed out
        self.going = True  # False once on_results said so
        self.again: list[int] = []  # groups a dead worker held but had not started

    def _next(self) -> int | None:
        if self.again:
            return self.again[0]
        if self.going and self.following < len(self.groups):
            return self.following
        return None

    def hand(self, w: _Worker) -> None:
        """Give ``w`` groups up to :data:`AHEAD`; close its job pipe when none are left."""
        while w.jobs_fd >= 0 and len(w.held) < AHEAD:
            index = self._next()
            if index is None:
                break
            try:
                _write(w.jobs_fd, str(index).encode())
            except OSError:  # it died: its pipe's end tells the loop
                w.stop()
                return
            w.held.append(index)
            if self.again:
                self.again.pop(0)
            else:
                self.following += 1
        if self._next() is None:
            w.stop()

    def done(self, w: _Worker, index: int, results: list[R]) -> None:
        w.held.remove(index)
        self.going = self.on_results(index, results) and self.going

    def ended(self, w: _Worker) -> None:
        """``w`` ended; had it died, the group it was running (its first: it runs them in
        order) is lost and the others it held go to another worker."""
        if w.held:
            first = w.held[0]
            self.done(w, first, [self.lost(x) for x in self.groups[first]])
            self.again[:0] = w.held
            w.held.clear()

    def unrun(self) -> None:
        """Every worker is gone: what no worker ran is lost (every worker died first)."""
        for index in [*self.again, *range(self.following, len(self.groups))]:
            if self.going or index in self.again:
                self.done_lost(index)

    def done_lost(self, index: int) -> None:
        got = [self.lost(x) for x in self.groups[index]]
        self.going = self.on_results(index, got) and self.going


def run_forked(
    groups: Sequence[Sequence[T]],
    open_worker: Callable[[], tuple[Callable[[T], R], Callable[[], None]]],
    *,
    workers: int,
    lost: Callable[[T], R],
    on_results: Callable[[int, list[R]], bool],
) -> None:
    """Run each group of items in one of ``workers`` forked processes, groups handed out in
    order, :data:`AHEAD` at a time. ``open_worker()`` runs in each worker: it returns
    ``(run, close)``, ``run(item)`` giving the item's result (never raising; picklable) and
    ``close()`` called when the worker ends. ``on_results(index, results)`` runs in the
    parent as each group's results arrive (in any order); once it returns False no further
    group is handed out. A worker that dies gives ``lost(item)`` for each item of the group
    it was running; the groups it held beside go to another worker."""
    pool: list[_Worker] = []
    sel = selectors.DefaultSelector()
    plan = _Dispatch(groups, lost, on_results)
    # what exists now is the workers' inherited memory: out of the cyclic collector's sight,
    # so that a worker's collections do not write to (and copy) every page of it
    gc.freeze()
    try:
        for _ in range(max(1, min(workers, len(groups)))):
            w = _fork_worker(groups, open_worker, pool)
            pool.append(w)
            sel.register(w.out_fd, selectors.EVENT_READ, w)
            plan.hand(w)
        while sel.get_map():
            for key, _ in sel.select():
                w = key.data
                got = _read(w.out_fd)
                if got is None:
                    sel.unregister(w.out_fd)
                    plan.ended(w)
                    w.end()
                    for other in pool:  # another worker takes what is left
                        plan.hand(other)
                    if plan.again:  # every other worker had finished: a new one takes it
                        pool.append(_fork_worker(groups, open_worker, pool))
                        sel.register(pool[-1].out_fd, selectors.EVENT_READ, pool[-1])
                        plan.hand(pool[-1])
                    continue
                index, results = pickle.loads(got)
                plan.done(w, index, results)
                plan.hand(w)
        plan.unrun()
    finally:
        gc.unfreeze()
        sel.close()
        for w in pool:
            w.end()


def forked_work(
    work: Sequence[T],
    group_of: Callable[[T], Hashable],
    open_worker: Callable[[], tuple[Callable[[T], R], Callable[[], None]]],
    *,
    workers: int,
    lost: Callable[[T], R],
    failed: Callable[[R], bool],
    after: Callable[[R], R] = lambda r: r,
    max_fail: int | None = None,
    on_result: Callable[[R], None] | None = None,
) -> list[R | None]:
    """:func:`.pool.run_work` over forked workers: consecutive items of one group (for the
    runner: the runs of one case) go to one worker together, and the results come back in
    work order. ``on_result`` runs in the parent, as results arrive. With ``max_fail`` no
    group is handed out once that many failures are known (every group handed out before
    comes earlier in the work), and the results after the ``max_fail``-th failure in work
    order are dropped (``None``): what a serial run returns, whatever ``workers`` is.
    ``after(result)`` runs in the parent on each result as it arrives (the baseline's
    judgement), before ``failed`` and ``on_result`` see it."""
    starts: list[int] = []
    groups: list[list[T]] = []
    for k, item in enumerate(work):
        key = group_of(item)
        if not groups or group_of(groups[-1][0]) != key:
            starts.append(k)
            groups.append([])
        groups[-1].append(item)
    results: list[R | None] = [None] * len(work)
    failures = 0

    def arrived(index: int, got: list[R]) -> bool:
        nonlocal failures
        for k, r in enumerate(got):
            r = after(r)
            results[starts[index] + k] = r
            failures += failed(r)
            if on_result is not None:
                on_result(r)
        return max_fail is None or failures < max_fail

    run_forked(groups, open_worker, workers=workers, lost=lost, on_results=arrived)
    if max_fail is not None:
        seen = 0
        for k, r in enumerate(results):
            if r is not None and failed(r):
                seen += 1
                if seen >= max_fail:
                    results[k + 1 :] = [None] * (len(results) - k - 1)
                    break
    return results


def in_workers(
    items: Sequence[tuple[Any, int]],
    impls: list[Implementation],
    run: Callable[[tuple[Any, int]], R],
    *,
    workers: int,
    lost: Callable[[tuple[Any, int]], R],
    failed: Callable[[R], bool],
    after: Callable[[R], R],
    max_fail: int | None,
    on_result: Callable[[R], None] | None,
    in_worker: Callable[[R], R] = lambda r: r,
) -> list[R | None]:
    """The runner's ``(case path, implementation slot)`` items on ``workers`` processes:
    :func:`forked_work` grouped by case, each worker replacing ``impls`` (its own copy of
    the list, which ``run`` reads) with implementations of its own (:func:`reopen`) and
    closing them when it ends. ``in_worker(result)`` runs in the worker on each result
    before it is sent (the runner encodes its report line there: :mod:`.encoded`)."""

    def open_worker() -> tuple[Callable[[tuple[Any, int]], R], Callable[[], None]]:
        impls[:] = [reopen(i) for i in impls]

        def close() -> None:
            for impl in impls:
                impl.close()

        return lambda item: in_worker(run(item)), close

    return forked_work(
        items,
        lambda item: item[0],
        open_worker,
        workers=workers,
        lost=lost,
        failed=failed,
        after=after,
        max_fail=max_fail,
        on_result=on_result,
    )


def run_items(
    items: list[tuple[Any, int]],
    impls: list[Implementation],
    unjudged: Callable[[tuple[Any, int]], R],
    judged: Callable[[R], R],
    *,
    lost: Callable[[tuple[Any, int]], R],
    jobs: int,
    live: bool,
    failed: Callable[[R], bool],
    max_fail: int | None,
    on_result: Callable[[R], None] | None,
    in_worker: Callable[[R], R] = lambda r: r,
) -> list[R | None]:
    """Every ``(case, implementation slot)`` run, in work order: in ``jobs`` forked workers
    when ``jobs`` > 1, the run is not ``live`` and :func:`can_fork` (each loading, checking
    and replaying its cases), else on threads (:func:`.pool.run_work`). ``unjudged(item)``
    runs a case (in the worker), ``judged`` applies the baseline (in this process),
    ``lost(item)`` is the error of a run whose worker died; ``in_worker(result)`` runs in
    the worker on each result (:func:`in_workers`), never on threads. On threads, ``impls`` are
    replaced in place by driver pools (:func:`.pool.pooled`: a driver answers one request
    at a time)."""
    if jobs > 1 and not live and can_fork(impls):
        return in_workers(
            items,
            impls,
            unjudged,
            workers=jobs,
            lost=lost,
            failed=failed,
            after=judged,
            max_fail=max_fail,
            on_result=on_result,
            in_worker=in_worker,
        )
    impls[:] = [pooled(i, jobs) for i in impls]
    return run_work(
        items,
        lambda item: judged(unjudged(item)),
        # a live run is serial: its budgets stop exactly, in a stable order; otherwise each
        # implementation gets ``jobs`` threads and sees its cases in work order
        workers=1 if live else jobs,
        lane=None if live else (lambda item: item[1]),
        failed=failed,
        max_fail=max_fail,
        on_result=on_result,
    )
