"""A Python driver started as a fork of the harness, sealed in the child (spec/replay.md 9.1;
start-up: issue 37, "Fast single runs").

``python -m threads_cases.protocol.driver`` under ``--isolation netns`` used to start a second
interpreter (through ``unshare`` and ``setpriv``), about ten times a bare ``python -c pass``
in CPU before it answered ``hello``. :func:`start_forked` runs the same Python command in a
fork of this process instead: the child

1. takes the pipes as its stdin, stdout and stderr, closes every other descriptor, starts its
   own session (its own process group, killed as a whole) and moves to ``cwd``;
2. applies the seal :data:`~threads_cases.harness.run.isolation.APPLIED` names, as the
   launchers do (:func:`seal`): a new user namespace (the harness's user mapped to root) and
   a new network namespace, the user-namespace limit set to 0 inside, every capability
   dropped (bounding, effective, permitted, inheritable and ambient sets) and
   ``no_new_privs``; then checks it (no capability, limit 0, another network namespace) and
   exits with status 125 and the reason on stderr when anything is missing;
3. replaces its environment by the driver's (the allow-list, spec/driver-protocol.md 5.6;
   ``LC_CTYPE`` added where a fresh interpreter coerces a C locale), resets the warning
   filters to a plain start's, sets ``sys.argv`` and ``sys.path[0]`` as ``python`` would,
   and runs the command's module or script as ``__main__`` (``runpy``); it never returns
   into the harness's code and exits with ``os._exit`` (no atexit handler or buffer of the
   harness runs twice).

:func:`fork_seal_works` probes all of this once (a forked child that seals and exits 0).
Only an interpreter command of this interpreter can be forked (:func:`forkable`), on Linux
with ``os.pidfd_open`` (Python 3.9+, Linux 5.3+); elsewhere the harness starts the command
under a launcher, as before. Python 3.11 has no ``os.unshare``: libc's ``unshare``,
``prctl`` and ``capset`` are called through ctypes.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import io
import os
import select
import signal
import subprocess
import sys
import warnings
from collections.abc import Mapping, Sequence
from typing import IO, Any

__all__ = ["ForkedProcess", "fork_seal_works", "forkable", "seal", "start_forked"]

_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_CAPABILITY_VERSION_3 = 0x20080522
#: the child's exit status when the seal could not be applied
SEAL_FAILED = 125
#: ``PYTHON*`` variables that change how an interpreter starts: a fork stands for a fresh
#: interpreter only when the driver's environment holds the same values as this process's
_STARTUP_VARIABLES = (
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONHASHSEED",
    "PYTHONSAFEPATH",
    "PYTHONUTF8",
    "PYTHONIOENCODING",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONPYCACHEPREFIX",
    "PYTHONWARNINGS",
    "PYTHONDEVMODE",
)


def _libc() -> Any:
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def _call(result: int, what: str) -> None:
    if result != 0:
        import ctypes

        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="ascii") as fh:
        fh.write(text)


def _sealed(host_net: str) -> str | None:
    """Why this process is not sealed (a capability left, the limit not 0, the host's network
    namespace), or None: the checks of ``isolation.SEAL_PROBE``, plus the namespace."""
    with open("/proc/self/status", encoding="ascii") as fh:
        caps = dict(line.split(":", 1) for line in fh if line.startswith("Cap"))
    left = [name for name, value in caps.items() if int(value.strip(), 16) != 0]
    if left:
        return f"capabilities left: {', '.join(sorted(left))}"
    with open("/proc/sys/user/max_user_namespaces", encoding="ascii") as fh:
        if fh.read().strip() != "0":
            return "the user-namespace limit is not 0"
    if os.readlink("/proc/self/ns/net") == host_net:
        return "still in the harness's network namespace"
    return None


def seal() -> None:
    """Seal this (single-threaded, forked) process as the ``netns`` launchers do: a new user
    and network namespace, the user mapped to root, the user-namespace limit 0, every
    capability dropped, ``no_new_privs``; then check it. Raises ``OSError`` on any step that
    fails, and ``PermissionError`` when the checks find the seal incomplete."""
    import ctypes

    libc = _libc()
    libc.prctl.argtypes = [ctypes.c_int, *[ctypes.c_ulong] * 4]
    uid, gid, host_net = os.getuid(), os.getgid(), os.readlink("/proc/self/ns/net")
    _call(libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET), "unshare")
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"0 {uid} 1")
    _write("/proc/self/gid_map", f"0 {gid} 1")
    _write("/proc/sys/user/max_user_namespaces", "0")
    with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as fh:
        last = int(fh.read())
    for cap in range(last + 1):
        _call(libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0), "prctl(PR_CAPBSET_DROP)")
    _call(libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "prctl(ambient)")
    header = (ctypes.c_uint32 * 2)(_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()  # two {effective, permitted, inheritable}: all empty
    _call(libc.capset(header, data), "capset")
    _call(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
    why = _sealed(host_net)
    if why is not None:
        raise PermissionError(why)


class ForkedProcess:
    """The part of ``subprocess.Popen`` the driver client uses, for a forked child: ``pid``,
    the ``stdin``/``stdout``/``stderr`` pipes (binary, buffered), ``returncode``, ``poll()``,
    ``wait(timeout)`` (raises ``subprocess.TimeoutExpired``) and ``kill()``."""

    def __init__(self, pid: int, args: Sequence[str], stdin: int, stdout: int, stderr: int):
        self.pid = pid
        self.args = list(args)
        self.returncode: int | None = None
        self.stdin: IO[bytes] = open(stdin, "wb")  # noqa: SIM115 - closed by the client
        self.stdout: IO[bytes] = open(stdout, "rb")  # noqa: SIM115
        self.stderr: IO[bytes] = open(stderr, "rb")  # noqa: SIM115
        self._pidfd: int | None = os.pidfd_open(pid)

    def _reaped(self, status: int) -> int:
        self.returncode = os.waitstatus_to_exitcode(status)
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None
        return self.returncode

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return self._reaped(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is not None:
            return self.returncode
        pidfd = self._pidfd
        if (
            timeout is not None
            and pidfd is not None
            and not select.select([pidfd], [], [], timeout)[0]
        ):
            raise subprocess.TimeoutExpired(self.args, timeout)
        return self._reaped(os.waitpid(self.pid, 0)[1])

    def kill(self) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)


def forkable(command: Sequence[str], env: Mapping[str, str]) -> bool:
    """Whether ``command`` can run as a fork of this process: ``sys.executable -m MODULE ...``
    or ``sys.executable SCRIPT.py ...``, with this interpreter started plainly (no ``-I``,
    ``-E``, ``-S``, ``-X dev``) and the driver's environment holding this process's values of the
    variables that change an interpreter's start."""
    if len(command) < 2 or command[0] != sys.executable or not sys.executable:
        return False
    if sys.flags.isolated or sys.flags.ignore_environment or sys.flags.no_site:
        return False
    if sys.flags.dev_mode:  # its warning filters and hooks are not a plain start's
        return False
    if command[1] == "-m" and len(command) < 3:
        return False
    if command[1] != "-m" and command[1].startswith("-"):
        return False
    return all(env.get(n) == os.environ.get(n) for n in _STARTUP_VARIABLES)


def _close_others(keep: int = 3) -> None:
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd >= keep:
            with contextlib.suppress(OSError):
                os.close(fd)


def _std_streams() -> None:
    """Fresh ``sys.stdin/stdout/stderr`` over descriptors 0-2, as an interpreter makes them."""
    sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)))
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)))
    sys.stderr = io.TextIOWrapper(
        io.BufferedWriter(io.FileIO(2, "w", closefd=False)),
        errors="backslashreplace",
        line_buffering=True,
    )


#: the locales a fresh interpreter coerces a C locale to (PEP 538), in its order
_COERCED = ("C.UTF-8", "C.utf8", "UTF-8")


def _coerced_locale(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` as a fresh interpreter would hold it: with ``LC_CTYPE`` set when its locale
    is C or POSIX (PEP 538 locale coercion, unless ``PYTHONCOERCECLOCALE=0`` or ``LC_ALL``
    decides), to the coerced locale this process uses (else the first of :data:`_COERCED`)."""
    out = dict(env)
    if out.get("PYTHONCOERCECLOCALE") == "0" or out.get("LC_ALL"):
        return out
    if (out.get("LC_CTYPE") or out.get("LANG") or "C") not in ("C", "POSIX"):
        return out
    mine = os.environ.get("LC_CTYPE")
    out["LC_CTYPE"] = mine if mine in _COERCED else _COERCED[0]
    return out


def _fresh_warnings() -> None:
    """The warning filters a fresh interpreter starts with (no ``-W``, no dev mode), not the
    harness's (``-W error``, a test runner's filters)."""
    sys.warnoptions[:] = []
    warnings.resetwarnings()
    for category in (ResourceWarning, ImportWarning, PendingDeprecationWarning):
        warnings.simplefilter("ignore", category)
    warnings.simplefilter("ignore", DeprecationWarning)
    warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")


def _run_python(args: Sequence[str], env: Mapping[str, str]) -> int:
    """Run ``python ARGS`` (``-m MODULE ...`` or ``SCRIPT ...``) in this process as
    ``__main__``; its exit status."""
    import runpy

    safe = bool(env.get("PYTHONSAFEPATH"))
    try:
        if args[0] == "-m":
            sys.argv = [args[1], *args[2:]]
            if not safe:
                sys.path[0:1] = [os.getcwd()]
            runpy.run_module(args[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = list(args)
            if not safe:
                sys.path[0:1] = [os.path.dirname(os.path.realpath(args[0]))]
            runpy.run_path(args[0], run_name="__main__")
    except SystemExit as done:
        code = done.code
        if code is None or isinstance(code, int):
            return code or 0
        print(code, file=sys.stderr)
        return 1
    return 0


def _child(
    command: Sequence[str], env: Mapping[str, str], cwd: str | None, pipes: tuple[int, ...]
) -> None:
    """The forked child (never returns): descriptors, session, seal, environment, command."""
    code = 1
    try:
        gc.freeze()  # the harness's objects are never collected (or their files closed) here
        os.dup2(pipes[0], 0)
        os.dup2(pipes[3], 1)
        os.dup2(pipes[5], 2)
        _close_others()
        os.setsid()
        _std_streams()
        if cwd is not None:
            os.chdir(cwd)
        try:
            seal()
        except OSError as exc:
            print(f"error: cannot seal the driver ({exc})", file=sys.stderr)
            code = SEAL_FAILED
            return
        os.environ.clear()
        os.environ.update(_coerced_locale(env))
        _fresh_warnings()
        code = _run_python(command[1:], env)
    except BaseException:  # the driver's own crash: its traceback on its stderr
        import traceback

        traceback.print_exc()
    finally:
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def start_forked(
    command: Sequence[str], env: Mapping[str, str], cwd: str | None = None
) -> ForkedProcess:
    """Start ``command`` (see :func:`forkable`) as a sealed fork of this process (module
    docstring), with ``env`` as its whole environment. Raises ``OSError`` when it cannot
    fork."""
    stdin_r, stdin_w = os.pipe()
    stdout_r, stdout_w = os.pipe()
    stderr_r, stderr_w = os.pipe()
    pipes = (stdin_r, stdin_w, stdout_r, stdout_w, stderr_r, stderr_w)
    import ctypes  # noqa: F401 - loaded once here, not in each child that seals

    for stream in (sys.stdout, sys.stderr):  # nothing buffered here is written twice
        with contextlib.suppress(Exception):
            stream.flush()
    with warnings.catch_warnings():  # 3.12+ warns of a fork beside the client's pump threads
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:
        _child(command, env, cwd, pipes)
    for fd in (stdin_r, stdout_w, stderr_w):
        os.close(fd)
    return ForkedProcess(pid, command, stdin_w, stdout_r, stderr_r)


@functools.cache
def fork_seal_works() -> bool:
    """Whether a forked child can be sealed here (tried once: a child that seals and exits 0;
    the answer is cached). False off Linux and without ``os.pidfd_open``."""
    if not sys.platform.startswith("linux") or not hasattr(os, "pidfd_open"):
        return False
    import ctypes  # noqa: F401 - loaded once here, not in each child that seals

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
    except OSError:
        return False
    if pid == 0:
        code = 1
        try:
            _close_others()
            seal()
            code = 0
        except BaseException:  # the answer is the exit status
            code = 1
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
