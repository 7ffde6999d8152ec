"""The client half of the driver protocol (spec/driver-protocol.md).

:class:`Implementation` is what the harness runs a case against: ``hello()``,
``request(message) -> body of the ok answer`` (raises ``CaseError`` with the answered code)
and ``close()``. Two kinds exist: :class:`DriverImplementation` here, and the in-process
``protocol.server.PythonImplementation``, which answers the same message dicts.

:class:`DriverImplementation` starts a driver command as a child process, keeps it
for the whole run, and turns every way a driver can go wrong into a reason code:

* ``driver_crashed``: the process exited (at start or mid-run); the stderr tail is shown;
* ``driver_timeout``: no answer within the timeout; the process is killed;
* ``driver_crashed`` too: the driver closed its stdout while still running;
* ``protocol_error``: a line that is not a protocol answer (garbage, a wrong id, a line over
  the size limit, an ``ok`` answer missing a field the harness reads or holding it with the
  wrong type (:mod:`.answers`), an ``error`` answer whose code is not a reason code, an
  answer that breaks ``schemas/driver/<cmd>.answer.schema.json`` (always checked, with the
  pointer), a request that breaks its schema under ``validate_protocol``);
* ``driver_unavailable``: the command cannot be started, or it was restarted
  :data:`MAX_RESTARTS` times already.

After a crash, a timeout or a protocol error the process is killed and restarted before the
next request, so the suite goes on. A driver starts in its own process group (its own
session), and killing it kills the group, so no child it started outlives it. Only the last
:data:`STDERR_TAIL_BYTES` bytes of its stderr are kept.
"""

from __future__ import annotations

import contextlib
import errno
import os
import queue
import shutil
import signal
import subprocess
import threading
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Any, Protocol, cast

import orjson

from ..core.canonical import canonical_line
from ..core.errors import CaseError
from ..core.shapes import HelloAnswer, JsonObject
from .answers import check_ok, error_of
from .driver_env import client_environment
from .forked_driver import ForkedProcess, fork_seal_works, forkable, start_forked

if TYPE_CHECKING:  # the live turn's type only: a replay that is not live never loads it
    from ..reference.live import AskModel

PROTOCOL = 1
MAX_RESTARTS = 3
MAX_LINE = 64 * 1024 * 1024
#: lines of the stderr tail shown in an error message
STDERR_TAIL = 15
#: bytes of a driver's stderr kept for error messages (a driver may write without newlines)
STDERR_TAIL_BYTES = 16 * 1024


class Implementation(Protocol):
    """What a case runs against: answers driver-protocol requests as dicts.

    ``required``: the user named it (``--impl``, ``pyproject.toml``, the pytest plugin's
    options), so a run where it cannot start gives ``error`` verdicts, never ``skip``
    (spec/driver-protocol.md 5.4). ``restarts``: how often its driver was restarted (0 for an
    implementation that never ran a request or runs in process).
    """

    name: str
    dialect: str
    required: bool
    restarts: int

    def hello(self) -> HelloAnswer: ...
    def request(self, message: JsonObject, on_model_call: AskModel | None = None) -> JsonObject:
        """``on_model_call`` answers a live replay's model calls (driver-protocol.md
        2.5.1); only a live run passes it."""
        ...

    def close(self) -> None: ...


def _schema_check(message: dict[str, Any], kind: str, cmd: str) -> None:
    from ..core.schemas import schema_problems

    name = f"driver/{cmd}.{kind}.schema.json"
    problems = schema_problems(message, name)
    if kind == "answer" and message.get("ok") is True:
        # an answer schema is oneOf(ok answer, error answer): an ok answer's problems are the
        # ok branch's, not "/ok should be false" from the error branch
        ok_branch = [p for p in problems if p[0] != "/ok" and not p[0].startswith("/error")]
        problems = ok_branch or problems
    if problems:
        pointer, text = problems[0]
        raise CaseError(
            "protocol_error", f"{kind} breaks {name}: {pointer or '/'}: {text}", pointer=pointer
        )


def unstartable(command: Sequence[str], cwd: str | None = None) -> str | None:
    """Why ``command`` cannot be started (``No such file or directory``, ``Permission
    denied``), or None when its program resolves: a path (it holds ``/``) to an executable
    file, relative to ``cwd``, or a name found on ``PATH``. Checked before a driver starts
    under a launcher (a namespace tool), which would report the failure as its own exit
    (spec/driver-protocol.md 5.4: ``driver_unavailable`` under every isolation)."""
    program = command[0] if command else ""
    if os.sep not in program and (os.altsep is None or os.altsep not in program):
        return None if program and shutil.which(program) else os.strerror(errno.ENOENT)
    path = os.path.join(cwd, program) if cwd is not None else program
    if not os.path.exists(path):
        return os.strerror(errno.ENOENT)
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        return os.strerror(errno.EACCES)
    return None


def request_line(message: dict[str, Any]) -> bytes:
    """A request as the client writes it: its canonical line (driver-protocol.md 1.1), or,
    for a request holding a value canonical JSON cannot write (an integer past 2^53 - 1 that a
    test sends so that the driver refuses it, strict-json.md 4.1), its keys sorted with that
    value as written."""
    try:
        return canonical_line(message)
    except CaseError:
        return orjson.dumps(message, option=orjson.OPT_SORT_KEYS)


class DriverImplementation:
    """An implementation behind a driver process (see the module docstring).

    ``command`` is the argv list; ``dialect`` the dialect its logs and states use;
    ``timeout`` seconds per request. The process starts with the allow-listed environment
    (:func:`.driver_env.driver_environment`, plus the ``pass_env`` names), then
    ``THREADS_CASES_DATA`` (1.5a), then ``env`` (spec/driver-protocol.md 5.6;
    :func:`.driver_env.client_environment`).
    """

    def __init__(
        self,
        name: str,
        command: list[str],
        *,
        dialect: str,
        timeout: float = 60.0,
        validate_protocol: bool = False,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        required: bool = False,
        launcher: Sequence[str] = (),
        pass_env: Sequence[str] = (),
        sealed_fork: bool = False,
    ) -> None:
        self.name = name
        self.required = required
        self.command = command
        #: the argv prefix the command starts under (a namespace tool, spec/replay.md 9.1)
        self.launcher = tuple(launcher)
        self.dialect = dialect
        self.timeout = timeout
        self.validate_protocol = validate_protocol
        self.cwd = cwd
        self.env = env
        #: variable names passed beyond the allow-list (driver_env.py, ``pass_env``)
        self.pass_env = tuple(pass_env)
        #: start ``command`` (an interpreter command of this interpreter) as a fork of this
        #: process sealed as the ``launcher`` would seal it, where that works here
        #: (:mod:`.forked_driver`); else under ``launcher``
        self.sealed_fork = sealed_fork
        self.restarts = 0
        self._proc: subprocess.Popen[bytes] | ForkedProcess | None = None
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._stderr = bytearray()
        self._stderr_lock = threading.Lock()
        self._next_id = 1
        self._lock = threading.Lock()
        self._hello: dict[str, Any] | None = None
        self._dead = False
        self._err_pump: threading.Thread | None = None

    # ------------------------------------------------------------------ process
    def _start(self) -> None:
        # under a launcher the OS error of a missing program would be the launcher's exit
        why = unstartable(self.command, self.cwd) if self.launcher else None
        # the dialect it is configured with (driver-protocol.md 5.3a), then its env
        env = client_environment(
            self.pass_env, {"THREADS_CASES_DIALECT": self.dialect, **(self.env or {})}
        )
        self._proc = None
        try:
            forked = why is None and self.sealed_fork and forkable(self.command, env)
            if forked and fork_seal_works():
                self._proc = start_forked(self.command, env, self.cwd)
            if why is None and self._proc is None:
                self._proc = subprocess.Popen(
                    [*self.launcher, *self.command],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    cwd=self.cwd,
                    env=env,
                    start_new_session=True,  # its own process group: killed as a whole
                )
        except OSError as exc:
            why = exc.strerror or str(exc)
        if why is not None or self._proc is None:
            raise self._unavailable(why or "not started")
        self._lines = queue.Queue()
        assert self._proc.stdout is not None and self._proc.stderr is not None
        threading.Thread(
            target=self._pump_out, args=(self._proc.stdout, self._lines), daemon=True
        ).start()
        self._err_pump = threading.Thread(
            target=self._pump_err, args=(self._proc.stderr,), daemon=True
        )
        self._err_pump.start()
        try:
            hello = self._exchange({"cmd": "hello", "protocol": PROTOCOL})
        except CaseError as err:
            why = self._launch_failure() if err.code == "driver_crashed" else None
            if why is None:
                raise
            self.restarts -= 1  # it never started: unavailable, not a crash (5.4)
            raise self._unavailable(why) from None
        if hello.get("protocol") != PROTOCOL:
            raise self._fail(
                "protocol_error",
                f"{self.name} speaks protocol {hello.get('protocol')!r}, not {PROTOCOL}",
            )
        self._hello = hello

    def _unavailable(self, why: str) -> CaseError:
        """``driver_unavailable`` for a command that cannot be started; no restart follows."""
        self._dead = True
        how = (
            "its command must be an executable file (a relative path is taken from the "
            "folder of the file that configures it) or a program on PATH"
        )
        return CaseError(
            "driver_unavailable",
            f"cannot start {self.name} ({' '.join(self.command)}): {why}; {how}",
            hint=how,
        )

    def _launch_failure(self) -> str | None:
        """Why the launcher could not run the command (``unshare: failed to execute CMD:
        ERROR``, ``setpriv: failed to execute CMD: ERROR``, ``bwrap: execvp CMD: ERROR`` on
        its stderr, from any tool of the launcher), or None: the driver itself ran and
        exited."""
        if not self.launcher or self._err_pump is None:
            return None
        self._err_pump.join(timeout=2)  # the launcher exited: its stderr is complete
        tools = {os.path.basename(self.launcher[0])}
        tools |= {os.path.basename(a) for a in self.launcher if os.path.isabs(a)}
        for line in self.stderr_tail().splitlines():
            for tool in sorted(tools):
                for says in (f"{tool}: failed to execute ", f"{tool}: execvp "):
                    if line.startswith(says) and ": " in line[len(says) :]:
                        return line[len(says) :].rsplit(": ", 1)[1]
        return None

    @staticmethod
    def _pump_out(fh: IO[bytes], q: queue.Queue[bytes | None]) -> None:
        while True:
            line = fh.readline(MAX_LINE + 1)
            if not line:
                q.put(None)
                return
            if len(line) > MAX_LINE:
                q.put(b"\x00too-long")
                while line and not line.endswith(b"\n"):
                    line = fh.readline(MAX_LINE)
                continue
            q.put(line)

    def _pump_err(self, fh: IO[bytes]) -> None:
        # chunks, not lines: a driver writing without newlines must not grow the runner
        read = getattr(fh, "read1", fh.read)  # a buffered pipe: whatever is there, up to 4 KiB
        for chunk in iter(lambda: read(4096), b""):
            with self._stderr_lock:
                self._stderr += chunk
                if len(self._stderr) > STDERR_TAIL_BYTES:
                    del self._stderr[: len(self._stderr) - STDERR_TAIL_BYTES]

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)  # the driver and every child it started
        try:
            proc.kill()
            proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            pass
        if proc.stdin is not None:
            # a request whose flush met the closed pipe is still in the buffer: closed here
            # (the failed flush discarded), or Python 3.12+ flushes it again when the object is
            # collected and prints "Exception ignored ... BrokenPipeError" with a traceback
            with contextlib.suppress(OSError):
                proc.stdin.close()

    def stderr_tail(self) -> str:
        """The last lines of the driver's stderr (at most :data:`STDERR_TAIL` lines of the last
        :data:`STDERR_TAIL_BYTES` bytes)."""
        with self._stderr_lock:
            text = bytes(self._stderr).decode("utf-8", "replace")
        return "\n".join(text.rstrip("\n").split("\n")[-STDERR_TAIL:]) if text.strip() else ""

    def _fail(self, code: str, message: str, pointer: str | None = None) -> CaseError:
        self._kill()
        self.restarts += 1
        tail = self.stderr_tail()
        text = message + (f"\n--- stderr of {self.name} (tail) ---\n{tail}" if tail else "")
        hint = f"run `{' '.join(self.command)}` by hand to see more"
        return CaseError(code, text, pointer=pointer, hint=hint)

    # ------------------------------------------------------------------ requests
    def _exchange(
        self, body: dict[str, Any], on_model_call: AskModel | None = None
    ) -> dict[str, Any]:
        assert self._proc is not None and self._proc.stdin is not None
        rid = self._next_id
        self._next_id += 1
        message = {"id": rid, **body}
        if self.validate_protocol:
            _schema_check(message, "request", body["cmd"])
        self._send(message, body["cmd"])
        answer = self._read_answer(rid, body["cmd"])
        while "model_call" in answer and "ok" not in answer:
            # a live replay asks for its model calls (spec/driver-protocol.md 2.5.1)
            self._send(self._model_answer(rid, answer, on_model_call), body["cmd"])
            answer = self._read_answer(rid, body["cmd"])
        if answer["ok"] is not True:
            self._check_answer(answer, body["cmd"])
            raise error_of(self.name, answer)
        out = {k: v for k, v in answer.items() if k not in ("id", "ok")}
        try:
            check_ok(str(body["cmd"]), out)  # the fields the harness reads, named first
        except CaseError as err:
            raise self._fail("protocol_error", f"{self.name}: {err.message}") from None
        self._check_answer(answer, body["cmd"])
        return out

    def _check_answer(self, answer: dict[str, Any], cmd: str) -> None:
        """Every answer against ``schemas/driver/<cmd>.answer.schema.json``, always
        (spec/driver-protocol.md 4.1): a break is ``protocol_error`` with its pointer."""
        try:
            _schema_check(answer, "answer", cmd)
        except CaseError as err:
            raise self._fail("protocol_error", err.message, err.location.pointer) from None

    def _model_answer(
        self, rid: int, line: dict[str, Any], on_model_call: AskModel | None
    ) -> dict[str, Any]:
        """The ``model_answer`` to a driver's ``model_call`` line (the harness answers it)."""
        from ..core.schemas import schema_problems

        problems = schema_problems(line, "driver/model_call.schema.json")
        if problems:
            pointer, text = problems[0]
            raise self._fail("protocol_error", f"{self.name}: model_call {pointer}: {text}")
        if on_model_call is None:
            raise self._fail(
                "protocol_error", f"{self.name} asked for a model call outside a live replay"
            )
        call = line["model_call"]
        try:
            answer = on_model_call(call["index"], call["request"], call["request_sha256"])
        except BaseException:
            self._kill()  # it waits for an answer that will not come: start afresh next time
            raise
        return {"id": rid, "cmd": "model_answer", "index": call["index"], **answer}

    def _send(self, message: dict[str, Any], cmd: str) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        try:
            self._proc.stdin.write(request_line(message) + b"\n")
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._fail(
                "driver_crashed",
                f"{self.name} exited before the request {cmd!r} could be sent",
            ) from None

    def _read_answer(self, rid: int, cmd: str) -> dict[str, Any]:
        """The driver's next line for request ``rid``: an object with that id holding ``ok``
        or ``model_call`` (spec/driver-protocol.md 4.1)."""
        answer = self._read_line(cmd)
        if (
            not isinstance(answer, dict)
            or answer.get("id") != rid
            or not ("ok" in answer or "model_call" in answer)
        ):
            got = answer.get("id") if isinstance(answer, dict) else None
            raise self._fail("protocol_error", f"{self.name} answered id {got!r} to request {rid}")
        return answer

    def _read_line(self, cmd: str) -> Any:
        """The driver's next line as a JSON value (the rows of 4.1 up to "not JSON")."""
        try:
            line = self._lines.get(timeout=self.timeout)
        except queue.Empty:
            raise self._fail(
                "driver_timeout",
                f"{self.name} did not answer {cmd!r} within {self.timeout:g}s",
            ) from None
        if line is None:
            try:
                code = self._proc.wait(timeout=2) if self._proc else None
            except subprocess.TimeoutExpired:
                raise self._fail(
                    "driver_crashed",
                    f"{self.name} closed its stdout during {cmd!r} but kept running",
                ) from None
            raise self._fail("driver_crashed", f"{self.name} exited (status {code}) during {cmd!r}")
        if line == b"\x00too-long":
            raise self._fail("protocol_error", f"{self.name} wrote a line over 64 MiB")
        try:
            answer = orjson.loads(line)
        except orjson.JSONDecodeError:
            shown = line[:80].decode("utf-8", "replace").rstrip()
            raise self._fail(
                "protocol_error", f"{self.name} wrote a line that is not JSON: {shown!r}"
            ) from None
        return answer

    def hello(self) -> HelloAnswer:
        """The driver's ``hello`` answer (starts the process if needed)."""
        with self._lock:
            self._ensure()
            assert self._hello is not None
            return cast(HelloAnswer, self._hello)  # the fields the client reads are checked

    def _ensure(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            return
        if self._proc is not None:
            self._kill()
        if self._dead or self.restarts > MAX_RESTARTS:
            self._dead = True
            raise CaseError(
                "driver_unavailable", f"{self.name} was restarted {MAX_RESTARTS} times; giving up"
            )
        self._start()  # a failed start is counted once, by _fail

    def request(
        self, message: dict[str, Any], on_model_call: AskModel | None = None
    ) -> dict[str, Any]:
        """Send one request and return the body of its ``ok`` answer (see module docstring).
        ``on_model_call(index, request, request_sha256)`` answers the ``model_call`` lines of
        a live replay (spec/driver-protocol.md 2.5.1)."""
        with self._lock:
            self._ensure()
            return self._exchange(message, on_model_call)

    def exchange_line(self, line: bytes) -> Any:
        """Send ``line`` (one request line, without its LF, written as given: an ``id`` of
        ``1.0``, none, a number no canonical line holds) and return the driver's answer line
        as a JSON value, unchecked: the ``driver-requests`` area of ``conformance`` judges it
        (spec/conformance.md 2.13). Driver failures raise as for :meth:`request`."""
        with self._lock:
            self._ensure()
            assert self._proc is not None and self._proc.stdin is not None
            try:
                self._proc.stdin.write(line + b"\n")
                self._proc.stdin.flush()
            except (BrokenPipeError, OSError):
                raise self._fail(
                    "driver_crashed", f"{self.name} exited before a request could be sent"
                ) from None
            return self._read_line("a raw request")

    def close(self) -> None:
        with self._lock:
            proc = self._proc
            if proc is None:
                return
            try:
                assert proc.stdin is not None
                proc.stdin.write(canonical_line({"id": self._next_id, "cmd": "shutdown"}) + b"\n")
                proc.stdin.close()
                proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired, ValueError):
                pass
            self._kill()
