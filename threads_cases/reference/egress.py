"""The in-process egress guard: best effort, per replay (spec/replay.md 9.1).

:func:`block_egress` refuses, *for calls made on behalf of the replay that entered it*, every
way out of the process this module knows of:

* ``socket.socket.connect`` / ``connect_ex`` / ``sendto`` / ``sendmsg`` with an address (Unix
  domain sockets are allowed) and ``socket.create_connection``;
* name lookups: ``socket.getaddrinfo``, ``gethostbyname``, ``gethostbyname_ex``,
  ``gethostbyaddr``;
* child processes: ``subprocess.Popen`` (so ``run``, ``call``, ``check_output``, ``os.popen``
  and asyncio subprocesses), ``os.system``, ``os.exec*`` (through ``execv``/``execve``),
  ``os.posix_spawn`` / ``posix_spawnp``, the same under ``posix.*``, and
  ``_posixsubprocess.fork_exec`` (so ``multiprocessing``'s ``spawn`` and ``forkserver``
  start methods, which start their interpreter through it);
* ``importlib.reload`` of ``socket``, ``subprocess``, ``os`` and the C modules behind them,
  which would put fresh, unguarded functions in place.

Each refusal raises :class:`EgressBlocked` (``egress_blocked``, stop key ``egress``) in the
tool and is appended to the list the block yields, so a tool that swallows the error still
stops the replay.

"On behalf of the replay" is a :class:`contextvars.ContextVar`: it follows the replay's thread
and the asyncio tasks it starts, and nothing else. Other threads of the process (a test's live
server, a metrics exporter, another replay) are never refused and never counted against the
case. The patches are installed once, when the first block is entered, and removed when the
last one ends (a reference count under a lock); stacked and concurrent blocks restore the
process exactly.

Best effort, by construction: code that runs outside the replay's context is not refused — a
thread the tool starts itself (``threading.Thread``, a ``concurrent.futures`` pool; asyncio's
default executor for ``getaddrinfo`` of a host name), a C extension that opens sockets without
Python's ``socket`` module, or a function captured before the guard was installed (``from
socket import getaddrinfo`` at import time). Kernel isolation (``--isolation netns``) has none
of these gaps.
"""

from __future__ import annotations

import contextvars
import importlib
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..core.errors import CaseError
from ..core.texts import quote

__all__ = [
    "EgressBlocked",
    "block_egress",
    "egress_target",
    "guard_installed",
    "only_to_host",
    "unguarded",
]


def _text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, bytes | os.PathLike):
        return os.fsdecode(value)
    return None


def egress_target(target: Any, what: str = "network access to") -> str:
    """The neutral text of what a replay tried to reach (spec/replay.md 9.1), as canonical
    JSON: a network address as ``"<host>:<port>"`` (``"[<host>]:<port>"`` when the host holds
    ``:``); a name lookup as ``"<host>"``; a child process as its argv, a list of strings
    (or the command string); a reload as the module's name; anything else as
    ``"<unknown>"``."""
    if what == "the reload of":
        return quote(_text(target) or "<unknown>")
    if what == "the child process":
        if isinstance(target, list | tuple):
            argv = [_text(a) for a in target]
            if all(a is not None for a in argv):
                return quote(argv)
        text = _text(target)
        return quote(text if text is not None else "<unknown>")
    if isinstance(target, tuple | list) and len(target) >= 2:
        host, port = _text(target[0]), target[1]
        if what == "the name lookup of":
            return quote(host if host is not None else "<unknown>")
        if host is not None and isinstance(port, int) and not isinstance(port, bool):
            return quote(f"[{host}]:{port}" if ":" in host else f"{host}:{port}")
        return quote("<unknown>")
    if what == "the name lookup of" and _text(target) is not None:
        return quote(_text(target))
    return quote("<unknown>")


class EgressBlocked(CaseError):
    """An attempt to leave the process during a replay: ``egress_blocked``, stop key
    ``egress``; the message names the target neutrally (:func:`egress_target`)."""

    def __init__(self, target: Any, what: str = "network access to") -> None:
        super().__init__(
            "egress_blocked",
            f"{what} {egress_target(target, what)} was blocked during a replay",
            hint="a replay never reaches the outside world; record the call as a stub instead",
        )
        self.stop_key = "egress"


#: the attempts list of the replay the current context runs on behalf of (None: no replay)
_REPLAY: contextvars.ContextVar[list[EgressBlocked] | None] = contextvars.ContextVar(
    "threads_cases_replay_egress", default=None
)
#: set by :func:`unguarded` (``--isolation none``): replays in this context are not guarded
_OFF: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "threads_cases_unguarded", default=False
)
#: set by :func:`only_to_host`: the hosts (and the addresses they resolved to) the harness's
#: own call may reach; everything else is refused as in a replay
_ALLOW: contextvars.ContextVar[set[str] | None] = contextvars.ContextVar(
    "threads_cases_egress_allow", default=None
)
_LOCK = threading.Lock()
_DEPTH = 0
#: (owner, attribute) -> (original, wrapper), while installed
_INSTALLED: dict[tuple[Any, str], tuple[Any, Any]] = {}


def _refuse(attempts: list[EgressBlocked], target: Any, what: str) -> EgressBlocked:
    err = EgressBlocked(target, what)
    attempts.append(err)
    return err


def _is_unix(sock: socket.socket) -> bool:
    return sock.family == getattr(socket, "AF_UNIX", None)


def _socket_method(real: Callable[..., Any], where: Callable[[tuple[Any, ...]], Any]) -> Any:
    """A socket method refused inside a replay unless Unix-domain, or ``where(args)`` is
    None (no address: a connected socket)."""

    def method(self: socket.socket, *args: Any) -> Any:
        attempts = _REPLAY.get()
        if attempts is None or _is_unix(self):
            return real(self, *args)
        target = where(args)
        if target is None or _allowed(target):
            return real(self, *args)
        raise _refuse(attempts, target, "network access to")

    return method


def _allowed(target: Any) -> bool:
    """Whether ``target`` (an address tuple or a host) is one :func:`only_to_host` allows."""
    allow = _ALLOW.get()
    if allow is None:
        return False
    host = target[0] if isinstance(target, tuple | list) and target else target
    return isinstance(host, str) and host in allow


def _function(real: Callable[..., Any], what: str, target: Callable[..., Any]) -> Any:
    """A module function refused inside a replay; ``target(*args, **kw)`` names what it
    was asked for. Under :func:`only_to_host` a name lookup or connection to an allowed
    host goes through (the addresses a lookup returns are allowed too) and child processes
    are the harness's own."""

    def function(*args: Any, **kwargs: Any) -> Any:
        attempts = _REPLAY.get()
        if attempts is None:
            return real(*args, **kwargs)
        wanted = target(*args, **kwargs)
        allow = _ALLOW.get()
        if allow is not None and (what == "the child process" or _allowed(wanted)):
            out = real(*args, **kwargs)
            if what == "the name lookup of" and isinstance(out, list):
                allow.update(str(a[4][0]) for a in out if isinstance(a, tuple) and len(a) > 4)
            return out
        raise _refuse(attempts, wanted, what)

    return function


def _first(*args: Any, **kwargs: Any) -> Any:
    return args[0] if args else next(iter(kwargs.values()), None)


def _host_port(*args: Any, **kwargs: Any) -> Any:
    host = args[0] if args else kwargs.get("host")
    port = args[1] if len(args) > 1 else kwargs.get("port")
    return (host, port)


def _argv_of_popen(*args: Any, **kwargs: Any) -> Any:
    # Popen._execute_child(self, args, executable, ...): the argv is its first argument
    return args[1] if len(args) > 1 else kwargs.get("args")


def _argv_of_spawn(*args: Any, **kwargs: Any) -> Any:
    # posix_spawn(path, argv, env) / execv(path, argv) / execve(path, argv, env)
    return list(args[1]) if len(args) > 1 else _first(*args, **kwargs)


def _sendmsg_where(a: tuple[Any, ...]) -> Any:
    return a[3] if len(a) > 3 and a[3] is not None else None


#: modules whose reload would replace the guarded functions by fresh, unguarded ones
GUARDED_MODULES = frozenset(
    {"socket", "_socket", "subprocess", "os", "posix", "nt", "_posixsubprocess"}
)


def _reload(real: Callable[..., Any]) -> Any:
    """``importlib.reload`` refused inside a replay for :data:`GUARDED_MODULES`."""

    def reload(module: Any, *args: Any, **kwargs: Any) -> Any:
        attempts = _REPLAY.get()
        name = getattr(module, "__name__", None)
        if attempts is not None and name in GUARDED_MODULES and _ALLOW.get() is None:
            raise _refuse(attempts, name, "the reload of")
        return real(module, *args, **kwargs)

    return reload


def _patches() -> list[tuple[Any, str, Callable[[Any], Any]]]:
    """(owner, attribute, make_wrapper(original)) for everything the guard refuses."""
    out: list[tuple[Any, str, Callable[[Any], Any]]] = [
        (socket.socket, "connect", lambda r: _socket_method(r, lambda a: a[0])),
        (socket.socket, "connect_ex", lambda r: _socket_method(r, lambda a: a[0])),
        # sendto(data, address) / sendto(data, flags, address): a datagram needs no connect()
        (socket.socket, "sendto", lambda r: _socket_method(r, lambda a: a[-1])),
        # sendmsg(buffers, ancdata, flags, address): no address is a connected socket
        (socket.socket, "sendmsg", lambda r: _socket_method(r, _sendmsg_where)),
        (socket, "create_connection", lambda r: _function(r, "network access to", _first)),
        (socket, "getaddrinfo", lambda r: _function(r, "the name lookup of", _host_port)),
        (socket, "gethostbyname", lambda r: _function(r, "the name lookup of", _first)),
        (socket, "gethostbyname_ex", lambda r: _function(r, "the name lookup of", _first)),
        (socket, "gethostbyaddr", lambda r: _function(r, "the name lookup of", _first)),
        (
            subprocess.Popen,
            "_execute_child",
            lambda r: _function(r, "the child process", _argv_of_popen),
        ),
        (os, "system", lambda r: _function(r, "the child process", _first)),
        (os, "execv", lambda r: _function(r, "the child process", _argv_of_spawn)),
        (os, "execve", lambda r: _function(r, "the child process", _argv_of_spawn)),
    ]
    for name in ("posix_spawn", "posix_spawnp"):
        if hasattr(os, name):
            out.append((os, name, lambda r: _function(r, "the child process", _argv_of_spawn)))
    # the same functions under the C module's own names (``posix.execv`` is ``os.execv``
    # before the patch, not after), and the primitive multiprocessing's spawn and forkserver
    # start methods call (``multiprocessing.util.spawnv_passfds``)
    native = sys.modules.get(os.name)  # posix (or nt)
    if native is not None and native is not os:
        spawn = _argv_of_spawn
        out += [(native, "system", lambda r: _function(r, "the child process", _first))]
        out += [
            (native, n, lambda r: _function(r, "the child process", spawn))
            for n in ("execv", "execve", "posix_spawn", "posix_spawnp")
        ]
    out.append((importlib, "reload", _reload))
    fork_exec = sys.modules.get("_posixsubprocess")
    if fork_exec is not None:
        out.append((fork_exec, "fork_exec", lambda r: _function(r, "the child process", _first)))
    return [p for p in out if hasattr(p[0], p[1])]


def _install() -> None:
    for owner, attr, make in _patches():
        real = getattr(owner, attr)
        wrapper = make(real)
        _INSTALLED[(owner, attr)] = (real, wrapper)
        setattr(owner, attr, wrapper)


def _uninstall() -> None:
    for (owner, attr), (real, wrapper) in _INSTALLED.items():
        # someone patched on top of the guard (a test's monkeypatch): leave their chain alone;
        # our wrapper calls the original for every call outside a replay
        if getattr(owner, attr) is wrapper:
            setattr(owner, attr, real)
    _INSTALLED.clear()


def guard_installed() -> bool:
    """Whether the guard's patches are in place (some replay is inside :func:`block_egress`)."""
    with _LOCK:
        return _DEPTH > 0


@contextmanager
def unguarded() -> Iterator[None]:
    """Replays started in this context (and the contexts it starts) run without the guard:
    :func:`block_egress` yields a list that stays empty (``--isolation none``)."""
    token = _OFF.set(True)
    try:
        yield
    finally:
        _OFF.reset(token)


@contextmanager
def block_egress() -> Iterator[list[EgressBlocked]]:
    """Refuse egress for the current context until the block ends (see the module
    docstring). Yields the list each refused attempt is appended to. Re-entrant and
    thread-safe: the patches stay while any block, on any thread, is open. Inside
    :func:`unguarded` nothing is refused."""
    global _DEPTH
    if _OFF.get():
        yield []
        return
    with _LOCK:
        if _DEPTH == 0:
            _install()
        _DEPTH += 1
    attempts: list[EgressBlocked] = []
    token = _REPLAY.set(attempts)
    try:
        yield attempts
    finally:
        _REPLAY.reset(token)
        with _LOCK:
            _DEPTH -= 1
            if _DEPTH == 0:
                _uninstall()


@contextmanager
def only_to_host(*hosts: str) -> Iterator[list[EgressBlocked]]:
    """The harness's own network call during a live run (spec/replay.md 11.7): in this
    context only ``hosts`` (and the addresses their name lookups return) may be reached;
    every other connection or lookup is refused as in a replay, and appended to the list
    yielded. It replaces the replay's own context for its duration, so a provider call
    made while a turn replays is not the turn's egress, and installs the guard when no
    replay runs (the call a subprocess driver asks the harness for)."""
    global _DEPTH
    with _LOCK:
        if _DEPTH == 0:
            _install()
        _DEPTH += 1
    attempts: list[EgressBlocked] = []
    token = _REPLAY.set(attempts)
    allow_token = _ALLOW.set(set(hosts))
    try:
        yield attempts
    finally:
        _ALLOW.reset(allow_token)
        _REPLAY.reset(token)
        with _LOCK:
            _DEPTH -= 1
            if _DEPTH == 0:
                _uninstall()
