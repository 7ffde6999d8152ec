"""The in-process egress guard (threads_cases/reference/egress.py, spec/replay.md 9.1):
refuses only the replay's own calls, is installed once with a reference count, and leaves
the process exactly as it found it after stacked and concurrent replays."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from threads_cases.core.strictjson import read_json_file
from threads_cases.harness.run.runner import run_case
from threads_cases.reference.agent import AgentSpec, ToolContext
from threads_cases.reference.egress import EgressBlocked, block_egress, guard_installed

CopyCase = Callable[[str], Path]
ORIGINALS = {
    "connect": socket.socket.connect,
    "connect_ex": socket.socket.connect_ex,
    "sendto": socket.socket.sendto,
    "create_connection": socket.create_connection,
    "getaddrinfo": socket.getaddrinfo,
    "gethostbyname": socket.gethostbyname,
    "execute_child": subprocess.Popen._execute_child,  # type: ignore[attr-defined]
    "system": os.system,
    "execv": os.execv,
    "execve": os.execve,
}


def current() -> dict[str, Any]:
    return {
        "connect": socket.socket.connect,
        "connect_ex": socket.socket.connect_ex,
        "sendto": socket.socket.sendto,
        "create_connection": socket.create_connection,
        "getaddrinfo": socket.getaddrinfo,
        "gethostbyname": socket.gethostbyname,
        "execute_child": subprocess.Popen._execute_child,  # type: ignore[attr-defined]
        "system": os.system,
        "execv": os.execv,
        "execve": os.execve,
    }


@pytest.fixture
def listener() -> Iterator[tuple[int, list[bytes]]]:
    """A TCP server on 127.0.0.1 that accepts and records the first bytes of each client."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    got: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    got.append(conn.recv(64))
                except OSError:
                    got.append(b"")

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield srv.getsockname()[1], got
    stop.set()
    t.join()
    srv.close()


def reach(port: int, payload: bytes = b"hi") -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(payload)


def test_every_way_out_is_refused_inside_and_restored_after() -> None:
    with block_egress() as attempts:
        assert guard_installed()
        tries: list[Callable[[], Any]] = [
            lambda: socket.socket().connect(("127.0.0.1", 9)),
            lambda: socket.create_connection(("example.org", 80)),
            lambda: socket.getaddrinfo("example.org", 443),
            lambda: socket.gethostbyname("example.org"),
            lambda: subprocess.run(["true"], check=False),
            lambda: os.system("true"),
            lambda: os.execv("/bin/true", ["/bin/true"]),
            lambda: os.execlp("true", "true"),
            lambda: os.posix_spawn("/bin/true", ["/bin/true"], {}),
        ]
        for attempt in tries:
            with pytest.raises(EgressBlocked):
                attempt()
    assert len(attempts) == len(tries)
    assert all(a.code == "egress_blocked" and a.stop_key == "egress" for a in attempts)
    # targets are canonical JSON (spec/replay.md 9.1), never Python's repr()
    messages = [a.message.removesuffix(" was blocked during a replay") for a in attempts]
    assert messages[:6] == [
        'network access to "127.0.0.1:9"',
        'network access to "example.org:80"',
        'the name lookup of "example.org"',
        'the name lookup of "example.org"',
        'the child process ["true"]',
        'the child process "true"',
    ]
    assert messages[6] == 'the child process ["/bin/true"]'
    assert not guard_installed()
    assert current() == ORIGINALS
    assert subprocess.run(["true"], check=False).returncode == 0


def test_stacked_blocks_keep_the_guard_until_the_last_ends() -> None:
    with block_egress() as outer:
        with block_egress() as inner, pytest.raises(EgressBlocked):
            socket.gethostbyname("example.org")
        assert guard_installed()
        with pytest.raises(EgressBlocked):
            socket.gethostbyname("example.org")
    assert (len(outer), len(inner)) == (1, 1)  # each attempt counts for its own replay
    assert not guard_installed() and current() == ORIGINALS


def test_another_thread_is_never_refused_while_a_replay_runs(
    listener: tuple[int, list[bytes]],
) -> None:
    port, got = listener
    inside = threading.Event()
    done = threading.Event()
    seen: list[list[EgressBlocked]] = []

    def replay() -> None:
        with block_egress() as attempts:
            seen.append(attempts)
            inside.set()
            done.wait(10)

    t = threading.Thread(target=replay)
    t.start()
    assert inside.wait(10)
    try:
        reach(port, b"other-thread")  # a live server fixture, a metrics exporter...
        assert subprocess.run([sys.executable, "-c", "pass"], check=False).returncode == 0
    finally:
        done.set()
        t.join()
    assert seen == [[]]  # nothing was counted against the replay
    for _ in range(100):  # the server thread records what it received
        if b"other-thread" in got:
            break
        threading.Event().wait(0.05)
    assert b"other-thread" in got


def _agent(case: Path, handler: Callable[[ToolContext, dict[str, Any]], Any]) -> AgentSpec:
    recorded = read_json_file(case / "expected.threads-py.json")["agent"]
    return AgentSpec.from_json(recorded, {"read_file": handler})


def test_eight_threads_of_overlapping_replays_leave_the_process_able_to_connect(
    conformance_case: CopyCase, listener: tuple[int, list[bytes]]
) -> None:
    port, got = listener
    path = conformance_case("reads-notes")
    barrier = threading.Barrier(8)
    verdicts: list[tuple[str, list[str]]] = []
    lock = threading.Lock()

    def worker(n: int) -> None:
        barrier.wait()
        for round_ in range(6):
            bad = (n + round_) % 2 == 0

            def read_file(ctx: ToolContext, inp: dict[str, Any], bad: bool = bad) -> str:
                if bad:
                    with contextlib.suppress(EgressBlocked):  # swallowed: the replay still fails
                        reach(port, b"replay")
                return ctx.read(inp["path"]).decode()

            r = run_case(path, agent=_agent(path, read_file))
            with lock:
                verdicts.append((("bad" if bad else "good"), [r.verdict, *r.reasons]))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(verdicts) == 48
    for kind, outcome in verdicts:
        assert outcome[:2] == (["fail", "egress_blocked"] if kind == "bad" else ["pass"]), kind
    assert not guard_installed() and current() == ORIGINALS
    assert b"replay" not in got  # no replay reached the listener
    reach(port, b"after")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(b"x", ("127.0.0.1", port))
    assert socket.getaddrinfo("127.0.0.1", port)
