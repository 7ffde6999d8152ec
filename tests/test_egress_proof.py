"""The egress proof (spec/replay.md 9.1): a listener on 127.0.0.1, and cases whose tool
``probe`` tries to reach it in every way we know of, replayed by both implementations'
drivers (tests/drivers/egress_driver.py and .mjs) under ``netns`` and under ``guard``; the
Python one under ``netns`` both under the launcher and as a sealed fork of the harness
(protocol/forked_driver.py: how ``run`` starts threads-py's driver).

Every attempt is waited for, never slept past: each driver appends ``how<TAB>outcome`` to a
file when an attempt is over (it raised, its connection closed, its request failed, its child
exited), and a replay set whose attempts do not all end there fails, so a test cannot pass
because an attempt had not been made yet. Under ``netns`` nothing reaches the listener, in
either implementation. Under ``guard`` the
in-process attempts are refused with ``egress_blocked``; the exceptions are listed in
:data:`GUARD_GAPS` (and in spec/replay.md 9.1): a thread the tool starts itself does not run
on the replay's behalf, so the Python guard does not see it.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import START_MS, ts_built

from threads_cases.case.directory import CaseExpectation
from threads_cases.harness.run.isolation import netns_command, wrap_command
from threads_cases.protocol.client import DriverImplementation
from threads_cases.protocol.forked_driver import fork_seal_works
from threads_cases.reference.agent import BUILTIN_TOOLS, AgentSpec, ToolSpec
from threads_cases.reference.model import ScriptedModel, text_reply, tool_reply
from threads_cases.reference.runtime import Clock
from threads_cases.reference.sandbox import FakeSandbox
from threads_cases.reference.thread import Thread

DRIVERS = Path(__file__).parent / "drivers"
HAS_CURL = shutil.which("curl") is not None
HAS_NSENTER = shutil.which("nsenter") is not None
IS_ROOT = os.geteuid() == 0
PY_PROBES = ["socket", "urllib", "asyncio", "udp", "getaddrinfo", "child", "system", "thread"]
PY_PROBES += ["setns"] + (["curl"] if HAS_CURL else []) + (["nsenter"] if HAS_NSENTER else [])
PY_PROBES += ["mp_spawn", "mp_forkserver", "fork_execv", "fork_exec", "reload"]
TS_PROBES = ["net", "fetch", "dns", "child"] + (["curl"] if HAS_CURL else [])
TS_PROBES += ["empty_path", "resolver", "resolver_promises", "child_class", "binding"]
TS_PROBES += ["nsenter"] if HAS_NSENTER else []
#: attempts the in-process guard does not refuse (they reach the listener under guard)
GUARD_GAPS = {"threads-py": {"thread"}, "threads-ts": set()}
#: joining the parent's namespace takes CAP_SYS_ADMIN over it: root outside a namespace only
NEEDS_ROOT = {"setns", "nsenter"}
#: refused in a forked child, which the replay's process does not see: nothing arrives, the
#: tool sees the child fail, and the replay goes on (spec/replay.md 9.1)
IN_FORKED_CHILD = {"fork_execv"}


class Listener:
    """TCP and UDP on one 127.0.0.1 port; ``got`` holds the first bytes of each arrival."""

    def __init__(self) -> None:
        self.tcp = socket.socket()
        self.tcp.bind(("127.0.0.1", 0))
        self.port = self.tcp.getsockname()[1]
        self.tcp.listen(64)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", self.port))
        self.got: list[bytes] = []
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._accept, daemon=True),
            threading.Thread(target=self._datagrams, daemon=True),
        ]
        for t in self._threads:
            t.start()

    def _accept(self) -> None:
        self.tcp.settimeout(0.2)
        while not self._stop.is_set():
            try:
                conn, _ = self.tcp.accept()
            except OSError:
                continue
            threading.Thread(target=self._read, args=(conn,), daemon=True).start()

    def _read(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            try:
                self.got.append(conn.recv(256))
            except OSError:
                self.got.append(b"")

    def _datagrams(self) -> None:
        self.udp.settimeout(0.2)
        while not self._stop.is_set():
            try:
                self.got.append(self.udp.recv(256))
            except OSError:
                continue

    def reached(self, how: str) -> bool:
        return any(how.encode() in g for g in self.got)

    def arrives(self, how: str) -> bool:
        """Whether ``how`` arrives, waiting up to 20 s (a loaded machine is slow)."""
        for _ in range(200):
            if self.reached(how):
                return True
            time.sleep(0.1)
        return False

    def close(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join()
        self.tcp.close()
        self.udp.close()


@pytest.fixture(scope="module")
def listener() -> Iterator[Listener]:
    out = Listener()
    yield out
    out.close()


@pytest.fixture(scope="module")
def probe_cases(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One saved case per probe: the model calls ``probe({"how": <name>})`` then ends."""
    root = tmp_path_factory.mktemp("egress") / "cases"
    tool = ToolSpec(
        "probe",
        "Try to reach the network.",
        {"type": "object", "properties": {"how": {"type": "string"}}, "required": ["how"]},
        "sandbox",
        "read",
        lambda ctx, inp: "tried",
    )
    agent = AgentSpec("egress-agent", "model-e", "Probe.", (*BUILTIN_TOOLS.values(), tool))
    for how in sorted(set(PY_PROBES) | set(TS_PROBES)):
        t = Thread.create(
            agent=agent, sandbox=FakeSandbox({}), thread_id=f"t-{how}", clock=Clock(START_MS, 3)
        )
        t.run_turn("warm up", ScriptedModel([text_reply("ok")]))
        at = t.events[-1]["event_id"]
        out = t.run_turn(
            f"probe {how}",
            ScriptedModel([tool_reply(("tu_1", "probe", {"how": how})), text_reply("done")]),
        )
        assert out.status == "completed"
        expect = CaseExpectation(must=[{"type": "turn_completed"}], expect=[])
        saved = t.save_case(how, at=at, expect=expect, dir=root)
        assert saved.ok, saved.error
    return root


#: the bound on waiting for an attempt to end: it only catches one that never ends (a loaded
#: machine is slow; no test here judges speed)
SETTLE_SECONDS = 120.0


def wait_settled(path: Path, hows: list[str]) -> dict[str, str]:
    """``how -> outcome`` once every attempt of ``hows`` has a line in ``path`` (the drivers'
    ``$PROBE_SETTLED``); fails the test naming those that never ended."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        found = dict(line.split("\t", 1) for line in text.splitlines() if "\t" in line)
        missing = [how for how in hows if how not in found]
        if not missing:
            return {how: found[how] for how in hows}
        if time.monotonic() > deadline:
            pytest.fail(f"these attempts never happened or never ended: {missing} ({found})")
        time.sleep(0.05)


def _driver(
    name: str, mode: str, port: int, settled: Path, guard: str | None = None, fork: bool = False
) -> DriverImplementation:
    if name == "threads-py":
        command, dialect = [sys.executable, str(DRIVERS / "egress_driver.py")], "threads-py"
    else:
        node = shutil.which("node")
        if node is None or not ts_built():
            pytest.skip("the TypeScript driver is not built")
        command, dialect = [node, str(DRIVERS / "egress_driver.mjs")], "threads-ts"
    return DriverImplementation(
        name,
        # forked: no launcher at all, so a driver the fork did not seal would run unsealed
        # and the listener would see it (protocol/forked_driver.py)
        command if fork else wrap_command(command, mode),
        dialect=dialect,
        timeout=60,
        sealed_fork=fork,
        env={
            "PROBE_PORT": str(port),
            "PROBE_SETTLED": str(settled),
            "THREADS_CASES_ISOLATION": guard or mode,
        },
    )


def _replay_all(
    name: str,
    mode: str,
    listener: Listener,
    cases: Path,
    guard: str | None = None,
    fork: bool = False,
) -> dict[str, dict[str, Any]]:
    """Replay every probe case of ``name`` under ``mode`` (the driver's guard set by
    ``guard``, else by ``mode``), then wait, while the driver lives, until every attempt
    is over (node's asynchronous ones end after their replay); ``how -> {stop, result,
    settled}`` (``settled``: how the attempt ended, as the driver saw it)."""
    hows = PY_PROBES if name == "threads-py" else TS_PROBES
    out: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        settled = Path(tmp) / "settled.tsv"
        impl = _driver(name, mode, listener.port, settled, guard, fork)
        try:
            for how in hows:
                answer = impl.request({"cmd": "replay", "case": {"path": str(cases / how)}})
                events = answer["events"]
                results = [e["data"]["content"] for e in events if e["type"] == "tool_result"]
                out[how] = {"stop": answer["stop"], "result": results[0] if results else None}
            for how, outcome in wait_settled(settled, hows).items():
                out[how]["settled"] = outcome
        finally:
            impl.close()
    return out


@pytest.mark.parametrize("name", ["threads-py", "threads-ts"])
def test_under_none_every_probe_reaches_the_listener(
    name: str, listener: Listener, probe_cases: Path
) -> None:
    """The control: the probes do work, so the refusals above are the isolation's doing."""
    listener.got.clear()
    outcome = _replay_all(name, "none", listener, probe_cases)
    tried = [how for how in outcome if IS_ROOT or how not in NEEDS_ROOT]
    missed = [how for how in tried if not listener.arrives(how)]
    assert missed == [], (missed, outcome, listener.got)
    assert all(o["stop"] is None for o in outcome.values()), outcome


#: how a driver is started under netns: under the launcher, or (threads-py) as a sealed fork
NETNS_STARTS = [
    pytest.param("threads-py", False, id="threads-py"),
    pytest.param("threads-ts", False, id="threads-ts"),
    pytest.param(
        "threads-py",
        True,
        id="threads-py-forked",
        marks=pytest.mark.skipif(not fork_seal_works(), reason="a fork cannot be sealed here"),
    ),
]


@pytest.mark.skipif(netns_command() is None, reason="no tool can create a network namespace")
@pytest.mark.parametrize(("name", "fork"), NETNS_STARTS)
def test_under_netns_nothing_reaches_the_listener(
    name: str, fork: bool, listener: Listener, probe_cases: Path
) -> None:
    listener.got.clear()
    outcome = _replay_all(name, "netns", listener, probe_cases, fork=fork)
    reached = [how for how in outcome if listener.reached(how)]
    assert reached == [], (reached, outcome)
    for how, o in outcome.items():
        if how in GUARD_GAPS[name] or how in {"setns"} | IN_FORKED_CHILD:
            # the guard does not see it; the kernel refuses it (no stop, the tool saw an error)
            assert o["stop"] is None and "raised" in str(o["result"]), (how, o)
        else:
            assert o["stop"] is not None and o["stop"]["code"] == "egress_blocked", (how, o)


@pytest.mark.parametrize("name", ["threads-py", "threads-ts"])
def test_under_guard_in_process_attempts_are_refused_and_the_gaps_are_known(
    name: str, listener: Listener, probe_cases: Path
) -> None:
    listener.got.clear()
    outcome = _replay_all(name, "guard", listener, probe_cases)
    for how, o in outcome.items():
        if how in GUARD_GAPS[name]:
            assert o["stop"] is None and listener.arrives(how), (how, o, listener.got)
            continue
        if how == "setns" and not IS_ROOT:  # refused by the kernel before any connect
            assert o["stop"] is None and "raised PermissionError" in o["result"], o
            continue
        if how in IN_FORKED_CHILD:  # refused in the child: nothing arrives, no stop here
            assert o["stop"] is None and "refused" in o["result"], o
            assert not listener.reached(how), (how, listener.got)
            continue
        assert not listener.reached(how), (how, listener.got)
        stop = o["stop"]
        assert stop is not None and stop["code"] == "egress_blocked", (how, o)
        assert stop["stop_key"] == "egress"
        assert "was blocked during a replay" in stop["message"]
        # the target is named: the port, the host looked up, or the child's argv
        named = (str(listener.port), "localhost", "[", f"{how}.example", 'reload of "socket"')
        named += ('network access to "<unknown>"',) if how == "binding" else ()
        assert any(t in stop["message"] for t in named), stop


@pytest.mark.skipif(netns_command() is None, reason="no tool can create a network namespace")
@pytest.mark.parametrize(("name", "fork"), NETNS_STARTS)
def test_under_netns_with_the_guard_off_the_kernel_alone_holds_even_as_root(
    name: str, fork: bool, listener: Listener, probe_cases: Path
) -> None:
    """The seal without the guard (replay.md 9.1): every probe runs unrefused inside the
    namespace, ``setns`` into the harness's network namespace and ``nsenter -t $PPID -n``
    included (CI runs as root), and still nothing arrives."""
    listener.got.clear()
    outcome = _replay_all(name, "netns", listener, probe_cases, guard="none", fork=fork)
    assert all(o["stop"] is None for o in outcome.values()), outcome
    if "setns" in outcome:
        assert "raised PermissionError" in outcome["setns"]["result"], outcome["setns"]
    reached = [how for how in outcome if listener.reached(how)]
    assert reached == [], (reached, outcome, listener.got)
