"""The Python driver with a sandbox tool ``probe`` that tries to leave the process, for the
egress proof (tests/test_egress_proof.py).

    PROBE_PORT=<port> python egress_driver.py

Serves threads-py as ``python -m threads_cases.protocol.driver`` does, except that every
agent rebuilt from a log gets this ``probe`` handler. ``probe({"how": H})`` makes one
attempt to send the bytes ``H`` to 127.0.0.1:PROBE_PORT (TCP, or UDP for ``udp``) and
returns ``tried`` or what the attempt raised. The listener tells whether it got through.

Every attempt here is over when ``probe`` returns (a child is waited for); it then appends
the line ``H<TAB>outcome`` to the file ``$PROBE_SETTLED``, so the test knows the attempt
was made before it looks at the listener.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import socket
import subprocess
import sys
import threading
import urllib.request
from typing import Any

from threads_cases.protocol.driver import main
from threads_cases.reference import agent as agent_module

PORT = int(os.environ.get("PROBE_PORT", "0"))
HOST = "127.0.0.1"
CHILD = (
    f"import socket,sys; s=socket.create_connection(('127.0.0.1', {PORT}), timeout=3); "
    "s.sendall(sys.argv[1].encode()); s.close()"
)


def _tcp(payload: bytes, host: str = HOST) -> None:
    with socket.socket() as s:
        s.settimeout(3)
        s.connect((host, PORT))
        s.sendall(payload)


async def _asyncio() -> None:
    _reader, writer = await asyncio.wait_for(asyncio.open_connection(HOST, PORT), 3)
    writer.write(b"asyncio")
    await writer.drain()
    writer.close()


def _thread() -> None:
    errors: list[BaseException] = []

    def go() -> None:
        try:
            _tcp(b"thread")
        except BaseException as exc:
            errors.append(exc)

    t = threading.Thread(target=go)
    t.start()
    t.join()
    if errors:
        raise errors[0]


def _getaddrinfo() -> None:
    family, kind, proto, _name, addr = socket.getaddrinfo("localhost", PORT, socket.AF_INET)[0]
    with socket.socket(family, kind, proto) as s:
        s.settimeout(3)
        s.connect(addr)
        s.sendall(b"getaddrinfo")


def _setns() -> None:
    """Join the parent's (the harness's, the host's) network namespace, then connect: what
    a root driver under a plain ``unshare --net`` can do (CAP_SYS_ADMIN is kept there)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(f"/proc/{os.getppid()}/ns/net", os.O_RDONLY)
    try:
        if libc.setns(fd, 0x40000000) != 0:  # CLONE_NEWNET
            err = ctypes.get_errno()
            raise OSError(err, f"setns: {os.strerror(err)}")
    finally:
        os.close(fd)
    _tcp(b"setns")


def _nsenter() -> None:
    """``nsenter -t $PPID -n`` a child that connects."""
    cmd = ["nsenter", "-t", str(os.getppid()), "-n", sys.executable, "-c", CHILD, "nsenter"]
    subprocess.run(cmd, check=True, timeout=30)


def _mp_target(payload: bytes) -> None:
    _tcp(payload)


def _multiprocessing(method: str) -> None:
    """A child interpreter through ``multiprocessing`` (spawn or forkserver), which starts
    it with ``_posixsubprocess.fork_exec``; the parent waits for it (bounded)."""
    import multiprocessing

    child = multiprocessing.get_context(method).Process(
        target=_mp_target, args=(f"mp_{method}".encode(),)
    )
    child.start()
    child.join(30)


def _fork_execv() -> None:
    """``os.fork`` then ``posix.execv`` in the child; the parent waits for the child, which
    exits 1 when the exec was refused."""
    import posix

    pid = os.fork()
    if pid == 0:  # the child: exec a program that connects, or report the refusal
        try:
            posix.execv(sys.executable, [sys.executable, "-c", CHILD, "fork_execv"])
        finally:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise OSError("the child's execv was refused")


def _fork_exec() -> None:
    """``_posixsubprocess.fork_exec`` through ``multiprocessing.util.spawnv_passfds``, the
    call multiprocessing's start methods make, without a multiprocessing process."""
    from multiprocessing.util import spawnv_passfds

    pid = spawnv_passfds(sys.executable, [sys.executable, "-c", CHILD, "fork_exec"], ())
    os.waitpid(pid, 0)


def _env() -> None:
    """Write the names of the driver's environment variables, one a line, to the file
    ``$PROBE_ENV_OUT`` (which reaches the driver only through ``pass_env``)."""
    with open(os.environ["PROBE_ENV_OUT"], "w", encoding="utf-8") as fh:
        fh.write("".join(f"{k}\n" for k in sorted(os.environ)))


ATTEMPTS: dict[str, Any] = {
    "socket": lambda: _tcp(b"socket"),
    "urllib": lambda: urllib.request.urlopen(f"http://{HOST}:{PORT}/urllib", timeout=3).read(),
    "asyncio": lambda: asyncio.run(_asyncio()),
    "udp": lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"udp", (HOST, PORT)),
    "getaddrinfo": _getaddrinfo,
    "curl": lambda: subprocess.run(
        ["curl", "-s", "-m", "3", f"http://{HOST}:{PORT}/curl"], check=True
    ),
    "child": lambda: subprocess.run([sys.executable, "-c", CHILD, "child"], check=True),
    "system": lambda: os.system(f'{sys.executable} -c "{CHILD}" system'),
    "thread": _thread,
    "setns": _setns,
    "nsenter": _nsenter,
    "env": _env,
    "mp_spawn": lambda: _multiprocessing("spawn"),
    "mp_forkserver": lambda: _multiprocessing("forkserver"),
    "fork_execv": _fork_execv,
    "fork_exec": _fork_exec,
    "reload": lambda: (__import__("importlib").reload(socket), _tcp(b"reload")),
}


def settled(how: str, outcome: str) -> None:
    """Tell the test the attempt ``how`` is over (one line of ``$PROBE_SETTLED``)."""
    path = os.environ.get("PROBE_SETTLED")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{how}\t{' '.join(outcome.split())}\n")


def probe(ctx: Any, inp: dict[str, Any]) -> str:
    try:
        ATTEMPTS[inp["how"]]()
    except BaseException as exc:  # swallowed on purpose: the replay must still stop
        outcome = f"raised {type(exc).__name__}: {exc}"
    else:
        outcome = "tried"
    settled(inp["how"], outcome)
    return outcome


_from_json = agent_module.AgentSpec.from_json.__func__  # type: ignore[attr-defined]


def _with_probe(cls: Any, agent: dict[str, Any], handlers: Any = None) -> Any:
    return _from_json(cls, agent, {**(handlers or {}), "probe": probe})


agent_module.AgentSpec.from_json = classmethod(_with_probe)  # type: ignore[assignment,method-assign]

if __name__ == "__main__":
    sys.exit(main())
