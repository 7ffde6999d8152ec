"""Shared test helpers: :func:`cli` (the real CLI in a subprocess), a small recorded thread
and the conformance cases.

``build_thread()`` is also imported by the crash subprocesses (tests/test_save_crash.py), so
it must stay deterministic: fixed clock, fixed thread id, scripted model.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

import cli_forkserver as forkserver
import pytest
import slow_first
import wheel_env
from filelock import FileLock

from threads_cases.case.directory import CaseExpectation
from threads_cases.harness.run.registry import ts_driver_path
from threads_cases.protocol.client import DriverImplementation
from threads_cases.reference.agent import BUILTIN_TOOLS, AgentSpec, ToolSpec
from threads_cases.reference.model import ScriptedModel, text_reply, tool_reply
from threads_cases.reference.runtime import Clock
from threads_cases.reference.sandbox import FakeSandbox
from threads_cases.reference.thread import Thread

ROOT = Path(__file__).resolve().parent.parent
CONFORMANCE = ROOT / "spec" / "conformance" / "cases"
CONFORMANCE_NAMES = sorted(p.name for p in CONFORMANCE.iterdir() if (p / "case.json").is_file())
SYSTEM = "You are terse. Use tools."
START_MS = 1_800_000_000_000

#: The bound on one CLI run. It only catches a hang: a loaded 2-core machine may be slow, so
#: no test judges speed by the clock.
HANG_SECONDS = 300.0
#: Set by ``nox -s tests``: the file where the TypeScript build running beside pytest writes its
#: exit status (noxfile.py ``_typescript_alongside``), so collection overlaps the build.
TS_BUILD_STATUS = "THREADS_CASES_TS_BUILD_STATUS"


def ts_built() -> bool:
    """Whether the TypeScript driver can run: ``node`` on PATH and ts/dist built, or being
    built beside this run by ``nox -s tests`` (:data:`TS_BUILD_STATUS`; the session fails
    when that build fails, and every test waits for it: :func:`_typescript_build`). Module
    level checks call this at collection, while that build may still be running."""
    if shutil.which("node") is None:
        return False
    return bool(os.environ.get(TS_BUILD_STATUS)) or ts_driver_path().is_file()


@pytest.fixture(scope="session", autouse=True)
def _typescript_build() -> None:
    """Waits, before this worker's first test, for the TypeScript build ``nox -s tests`` runs
    beside the collection (nothing to wait for outside that session); fails the tests when
    the build failed (its output is printed at the end of the session)."""
    path = os.environ.get(TS_BUILD_STATUS)
    if not path:
        return
    status = Path(path)
    deadline = time.monotonic() + HANG_SECONDS
    while not (code := status.read_text().strip() if status.is_file() else ""):
        if time.monotonic() > deadline:
            pytest.fail(f"the TypeScript build beside this run wrote no status in {HANG_SECONDS}s")
        time.sleep(0.1)
    if code != "0":
        pytest.fail(f"the TypeScript build failed (exit status {code}; its output follows the run)")


#: Variables of the test process that would change what the CLI does.
CLEARED_ENV = (
    "THREADS_CASES_DEBUG",
    "THREADS_CASES_CRASH_AT",
    "GITHUB_STEP_SUMMARY",
    "GITHUB_WORKSPACE",
)

#: ``THREADS_CASES_TEST_SUBPROCESS=1``: every :func:`cli` call is a real subprocess (to rule
#: the fork server out when a test fails, or to measure what it saves).
SUBPROCESS_ONLY = os.environ.get("THREADS_CASES_TEST_SUBPROCESS") == "1"


def cli(
    *args: str | Path,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    timeout: float = HANG_SECONDS,
    traceback_ok: bool = False,
    process: bool = False,
) -> subprocess.CompletedProcess[str]:
    """Run the CLI as ``python -m threads_cases ARGS`` would, in ``cwd`` (stdin empty, output
    decoded as UTF-8 with replacement) with ``env`` on top of this environment minus
    :data:`CLEARED_ENV`. Fails the test when the command hangs past ``timeout`` or prints a
    traceback (unless ``traceback_ok``).

    The command runs in a child forked from this worker's fork server
    (tests/cli_forkserver.py: the package already imported, so no interpreter or import
    start-up per call; its own process, process group, cwd, environment and file
    descriptors, coverage measured). ``process=True``, or an ``env`` that changes what is read
    at import time (``COLUMNS``...), runs a real ``python -m threads_cases`` subprocess instead.
    """
    base = {k: v for k, v in os.environ.items() if k not in CLEARED_ENV}
    full_env = {**base, "COLUMNS": "200", **(env or {})}  # piped output is COLUMNS wide
    argv = [sys.executable, "-m", "threads_cases", *map(str, args)]
    server = None if process or SUBPROCESS_ONLY else _forkserver.get(full_env)
    if server is None:
        p = _subprocess_cli(argv, cwd, full_env, timeout)
    else:
        p = server.run(argv[3:], cwd, full_env, timeout)
    if not traceback_ok:
        assert "Traceback" not in p.stdout + p.stderr, p.stderr[-3000:]
    return p


def _subprocess_cli(
    argv: list[str], cwd: Path, env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            argv,
            cwd=cwd,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            env=env,
        )
    except subprocess.TimeoutExpired as exc:
        tail = exc.stderr[-500:] if isinstance(exc.stderr, bytes) else b""
        pytest.fail(f"`threads-cases {' '.join(argv[3:5])} ...` hung for {timeout}s ({tail!r})")


def reference_drivers(*, validate_protocol: bool = False) -> list[DriverImplementation]:
    """The Python and the TypeScript protocol drivers, ``threads-py`` then ``threads-ts``
    (each started on its first request; the caller closes them). Skips the test when the
    TypeScript driver is not built."""
    node = shutil.which("node")
    if node is None or not ts_built():
        pytest.skip("the TypeScript driver is not built: run `nox -s ts`")
    argv = {
        "threads-py": [sys.executable, "-m", "threads_cases.protocol.driver"],
        "threads-ts": [node, str(ts_driver_path())],
    }
    return [
        DriverImplementation(name, cmd, dialect=name, validate_protocol=validate_protocol)
        for name, cmd in argv.items()
    ]


def pytest_configure(config: pytest.Config) -> None:
    """Let the test run's own processes keep their bytecode caches, and compile the package's
    once, in the controller, before any worker starts.

    Where ``PYTHONDONTWRITEBYTECODE`` is set (as on the CI machines) no process writes a
    ``__pycache__``: each xdist worker and each inner pytest run rewrote the asserts of every
    test module again (pytest caches the rewritten modules as bytecode; about 6 CPU-s per
    worker), and each of the hundreds of fresh interpreters the tests start (drivers, real
    CLI subprocesses) compiled every package module it imported (about 0.1 CPU-s each). The
    variable is removed for the processes this run starts (the workers start after this
    hook), and ``compileall`` writes the package's files whatever it says, skipping the ones
    already current. The README samples inherit that: their virtualenvs' first command
    compiles what it loads, as a user's Python does."""
    slow_first.register(config)
    if not hasattr(config, "workerinput"):
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        import compileall

        compileall.compile_dir(ROOT / "threads_cases", quiet=2)


@pytest.hookimpl(trylast=True)  # after any shuffling plugin: ties keep its order
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slowest groups and modules first (tests/slow_first.py)."""
    slow_first.order(items)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Under ``--dist loadgroup`` every ``xdist_group`` item must carry its group in its node
    id (``...[x]@readme-3.12``): that suffix is the only thing the scheduler groups by, and
    when it is lost (pytest 9.2 with pytest-xdist 3.8: pytest-dev/pytest-xdist#1386) the
    groups are split across workers without a word, each worker redoing the shared set-up."""
    if not getattr(session.config.option, "loadgroup", False):
        return
    lost = [i.nodeid for i in session.items if i.get_closest_marker("xdist_group")]
    lost = [nodeid for nodeid in lost if "@" not in nodeid.rsplit("]", 1)[-1]]
    if lost:
        raise pytest.UsageError(
            f"--dist loadgroup lost the xdist_group of {len(lost)} items (first: {lost[0]}); "
            "pytest and pytest-xdist disagree on node ids: install the versions pyproject.toml "
            "pins (pip install -e '.[dev]')"
        )


class _ForkServer:
    """The client of tests/cli_forkserver.py (one server per worker process, started on the
    first call with the environment of that call; stopped at the end of the session)."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.env: dict[str, str] = {}
        self.lock = threading.Lock()
        self.pending = b""  # reply bytes read from the server's stdout, not yet taken

    def get(self, env: dict[str, str]) -> _ForkServer | None:
        """This server when it can run a call with ``env``, else None (a real subprocess)."""
        if self.proc is None:
            self._start(env)
        if any(env.get(k) != self.env.get(k) for k in forkserver.IMPORT_TIME_ENV):
            return None
        return self

    def _start(self, env: dict[str, str]) -> None:
        self.env = dict(env)
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("cli_forkserver.py"))],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=self.env,
            cwd=ROOT,
        )
        assert self.proc.stdout is not None
        self.pending = b""
        ready = self._line(None)
        assert ready == b"ready\n", f"the CLI fork server did not start: {ready!r}"

    def run(
        self, args: list[str], cwd: Path, env: dict[str, str], timeout: float
    ) -> subprocess.CompletedProcess[str]:
        if not self.lock.acquire(blocking=False):  # a call from another thread meanwhile
            argv = [sys.executable, "-m", "threads_cases", *args]
            return _subprocess_cli(argv, cwd, env, timeout)
        try:
            return self._run(args, cwd, env, timeout)
        finally:
            self.lock.release()

    def _run(
        self, args: list[str], cwd: Path, env: dict[str, str], timeout: float
    ) -> subprocess.CompletedProcess[str]:
        assert self.proc is not None and self.proc.stdin is not None
        assert self.proc.stdout is not None
        with tempfile.TemporaryDirectory(prefix="cli-") as tmp:
            out, err = Path(tmp, "stdout"), Path(tmp, "stderr")
            out.touch()
            err.touch()
            req = {"args": args, "cwd": str(cwd), "env": env, "stdin": os.devnull}
            req |= {"stdout": str(out), "stderr": str(err)}
            self.proc.stdin.write(json.dumps(req).encode() + b"\n")
            self.proc.stdin.flush()
            try:
                code = self._status(timeout)
            except BaseException:
                # a reply still on its way would answer the next call's request (a call
                # read "status 2" where it waited for "pid"): the next call starts afresh
                self._kill()
                raise
            if code is None:
                tail = err.read_bytes()[-500:]
                cmd = " ".join(args[:2])
                pytest.fail(f"`threads-cases {cmd} ...` hung for {timeout}s ({tail!r})")
            decode = {"encoding": "utf-8", "errors": "replace"}
            return subprocess.CompletedProcess(
                [sys.executable, "-m", "threads_cases", *args],
                code,
                out.read_bytes().decode(**decode),
                err.read_bytes().decode(**decode),
            )

    def _status(self, timeout: float) -> int | None:
        """The exit status of the child the last request started, or None when it ran past
        ``timeout`` (its process group is killed, its status read: the server is in step)."""
        pid = int(self._reply(b"pid ", None))
        try:
            return int(self._reply(b"status ", timeout))
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):  # it may end as the timeout fires
                os.killpg(pid, signal.SIGKILL)
            self._reply(b"status ", None)
            return None

    def _kill(self) -> None:
        """End the server at once (its unsaved coverage data is lost: failures only)."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(timeout=60)
            self.proc = None

    def _reply(self, prefix: bytes, timeout: float | None) -> str:
        line = self._line(timeout)
        if not line.startswith(prefix):
            self.stop()
            pytest.fail(f"the CLI fork server ended (answered {line!r})")
        return line[len(prefix) :].decode().strip()

    def _line(self, timeout: float | None) -> bytes:
        """The server's next reply line (b"" once it has ended), read from the pipe's
        descriptor into a buffer of our own: a buffered reader's readline of ``pid`` could
        take the ``status`` line that came right behind it into its own buffer, and a select
        on the descriptor then waited ``timeout`` for a line already read (a CLI call that
        ended at once read as hung). Raises TimeoutError when no line comes in ``timeout``."""
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.pending:
            if timeout is not None and not select.select([fd], [], [], timeout)[0]:
                raise TimeoutError
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            self.pending += chunk
        line, sep, self.pending = self.pending.partition(b"\n")
        return line + sep

    def stop(self) -> None:
        """End the server (it saves its own coverage data at a normal exit)."""
        if self.proc is not None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait(timeout=60)
            self.proc = None


_forkserver = _ForkServer()


@pytest.fixture(scope="session", autouse=True)
def _cli_forkserver() -> Iterator[None]:
    """Stops the fork server before the session ends (pytest-cov combines the data files
    then, the server's among them)."""
    yield
    _forkserver.stop()


#: Calls the live weather handler answered, in order (reset by build_thread).
WEATHER_CALLS: list[dict[str, Any]] = []


def weather(inp: dict[str, Any]) -> str:
    WEATHER_CALLS.append(dict(inp))
    return f"{inp['city']}: 12°C, sunny"


WEATHER = ToolSpec(
    "get_weather",
    "Current weather for a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    "external",
    "read",
    weather,
)


def make_agent(system: str = SYSTEM, *extra: ToolSpec) -> AgentSpec:
    return AgentSpec(
        "test-agent", "model-t", system, tools=(*BUILTIN_TOOLS.values(), WEATHER, *extra)
    )


def new_thread(
    files: dict[str, bytes | str] | None = None,
    *,
    system: str = SYSTEM,
    extra: tuple[ToolSpec, ...] = (),
    thread_id: str = "thread-test",
) -> Thread:
    return Thread.create(
        agent=make_agent(system, *extra),
        sandbox=FakeSandbox(files or {}),
        thread_id=thread_id,
        clock=Clock(START_MS, 3),
    )


def build_thread(extra_files: int = 0) -> tuple[Thread, str]:
    """A thread with a warm-up turn (a read, so the prefix holds an artifact) and, after the
    fork point ``at``, a turn that reads, calls the external weather tool live and writes
    (the first reply holds two tool calls). ``extra_files`` more files are read in the
    warm-up (each one more artifact, so one more write step when saving)."""
    WEATHER_CALLS.clear()
    files: dict[str, bytes | str] = {
        "notes.txt": "buy milk\n",
        "todo.md": "- ship it\n",
        "bin.dat": b"\x00\xffbinary",
    }
    for i in range(extra_files):
        files[f"extra/{i}.txt"] = f"extra file {i}\n"
    t = new_thread(files)
    warm = [("w1", "read_file", {"path": "todo.md"})]
    warm += [(f"w{i + 2}", "read_file", {"path": f"extra/{i}.txt"}) for i in range(extra_files)]
    t.run_turn(
        "Warm up: read todo.md",
        ScriptedModel(
            [
                tool_reply(*warm, input_tokens=5, output_tokens=2),
                text_reply("Todo: ship it.", input_tokens=9, output_tokens=3),
            ]
        ),
    )
    at = t.events[-1]["event_id"]
    out = t.run_turn(
        "Read notes.txt, check Oslo weather, write report.txt",
        ScriptedModel(
            [
                tool_reply(
                    ("tu_1", "read_file", {"path": "notes.txt"}),
                    ("tu_2", "get_weather", {"city": "Oslo"}),
                    text="Two things first.",
                    input_tokens=20,
                    output_tokens=8,
                ),
                tool_reply(
                    ("tu_3", "write_file", {"path": "report.txt", "content": "milk; sunny"}),
                    input_tokens=30,
                    output_tokens=9,
                ),
                text_reply("Done: report.txt written.", input_tokens=40, output_tokens=6),
            ]
        ),
    )
    assert out.status == "completed", out
    return t, at


EXPECT = CaseExpectation(
    must=[
        {"type": "sandbox_wrote", "data": {"path": "report.txt"}},
        {"type": "tool_result", "data": {"name": "get_weather", "content": "Oslo: 12°C, sunny"}},
    ],
    expect=[{"type": "tool_called", "data": {"name": "read_file"}}, {"type": "turn_completed"}],
)


@pytest.fixture
def recorded() -> tuple[Thread, str]:
    """``(thread, at)`` from :func:`build_thread`."""
    return build_thread()


@pytest.fixture
def saved_case(tmp_path: Path) -> Path:
    """The recorded thread saved as ``tmp_path/cases/sample``."""
    t, at = build_thread()
    r = t.save_case("sample", at=at, expect=EXPECT, dir=tmp_path / "cases")
    assert r.ok, r.error
    return tmp_path / "cases" / "sample"


@pytest.fixture
def conformance_case(tmp_path: Path) -> Callable[[str], Path]:
    """``copy(name) -> path``: a copy of spec/conformance/cases/<name> under tmp_path (never
    mutate the originals)."""

    def copy(name: str, dest: Path | None = None) -> Path:
        target = (dest or tmp_path / "cases") / name
        shutil.copytree(CONFORMANCE / name, target)
        return target

    return copy


# session scope: under xdist a worker may interleave other modules' tests with the group of
# the tests using these, which would tear a module-scoped fixture down and build everything
# again. The build itself is shared by every xdist worker of the run (in the run's own temp
# folder, under a file lock: the first worker to need it builds, the others wait and reuse it),
# so the packaging tests, the README samples and the other interpreters' checks can run on
# different workers without building twice.
@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> wheel_env.Built:
    """The sdist, wheel and npm tarball, built once per test run outside the repository
    (tests/wheel_env.py)."""
    if worker_id == "master":  # not under xdist
        return wheel_env.build(tmp_path_factory.mktemp("packaging"))
    shared = tmp_path_factory.getbasetemp().parent  # this run's folder, one per pytest run
    work, done = shared / "packaging", shared / "packaging.json"
    with FileLock(str(shared / "packaging.lock")):
        if done.is_file():
            fields = json.loads(done.read_text(encoding="utf-8"))
            return wheel_env.Built(**{k: Path(v) for k, v in fields.items()})
        shutil.rmtree(work, ignore_errors=True)  # what a worker that failed mid-build left
        work.mkdir()
        made = wheel_env.build(work)
        done.write_text(json.dumps({k: str(v) for k, v in asdict(made).items()}), "utf-8")
        return made


@pytest.fixture(scope="session")
def wheel_venv(built: wheel_env.Built, tmp_path_factory: pytest.TempPathFactory) -> wheel_env.Venv:
    """A fresh virtualenv of this interpreter, outside the repository, with the built wheel
    (and its ``pytest`` extra) installed and its own pip."""
    root = tmp_path_factory.mktemp("wheel-venv") / "venv"  # one per worker: samples change it
    return wheel_env.make_venv(sys.executable, built.wheel, root)
