"""A fork server for the tests' :func:`conftest.cli`: one per xdist worker, started on the
first call, with the whole ``threads_cases`` package imported once.

Each request forks a child that becomes what ``python -m threads_cases ARGS`` would be: its
own process (and process group), its cwd, its environment, stdin/stdout/stderr on the files
the client named, ``sys.argv``; it runs the CLI's ``main()`` and ends with the exit status a
fresh interpreter would give (``SystemExit`` code, 1 and a traceback for an uncaught
exception). Only the start-up differs: no interpreter start, no imports, no coverage start-up
per call, which was most of the suite's CPU time.

Coverage: the child keeps measuring with the collector it inherited (the server's, started by
``coverage.process_startup`` from the configuration pytest-cov gives subprocesses,
``COVERAGE_PROCESS_CONFIG``), but into a data file of its own (a parallel-mode name with the
child's pid), saved before the child ends; the server saves its own data, at its normal exit.
The child drops the server's unsaved lines from its copy of the collector (they are the
server's to save), and with sys.monitoring the lines the server ran before the fork are not
reported again in the child (coverage disabled their events once recorded): the child's file
holds what only the child ran, and the combined data is the same union. A new collector per
child (stop the inherited one, ``coverage.process_startup(force=True)``) cost about 100 ms of
CPU a child (coverage's set-up: configuration, file classification, page faults on the
server's memory); it stays the fallback when coverage's internals are not the ones this
relies on (:func:`_own_data_file`). Either way the child ends with ``posix._exit``:
coverage's ``os._exit`` patch would save the server's pre-fork data from the child, and the
child never touches a SQLite connection opened before the fork (the server opens none before
its save at exit; the fast path checks it).

Protocol (the client's pipes on the server's stdin and stdout, moved off fds 0 and 1): the
client writes one JSON request per line, ``{"args", "cwd", "env", "stdin", "stdout",
"stderr"}`` (the last three are file paths); the server answers ``pid <n>`` at once, then
``status <returncode>`` (negative: killed by that signal) when the child has ended.

The server imports the package with the environment it was started with, so a module-level
value read from the environment at import (the rich consoles' width from ``COLUMNS``) is the
server's: the client runs a real subprocess when a call's environment differs there
(:data:`IMPORT_TIME_ENV`).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import pkgutil
import posix
import sys
import traceback
from pathlib import Path
from typing import Any

#: Variables read when the package is imported (rich reads the console's width, colours and
#: terminal at construction; Python reads PYTHON* at start): a call that sets them differently
#: from the server's environment runs in a real subprocess.
IMPORT_TIME_ENV = (
    "COLUMNS",
    "LINES",
    "NO_COLOR",
    "FORCE_COLOR",
    "TERM",
    "COLORTERM",
    "TTY_COMPATIBLE",
    "TTY_INTERACTIVE",
    "TERMINAL_WIDTH",
    "JUPYTER_COLUMNS",
    "JUPYTER_LINES",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "PYTHONPATH",
    "PYTHONIOENCODING",
    "PYTHONUTF8",
    "PYTHONHASHSEED",
    "PYTHONWARNINGS",
    "PYTHONDEVMODE",
    "PYTHONSAFEPATH",
    "PYTHONNOUSERSITE",
    "PYTHONDONTWRITEBYTECODE",
)
#: Modules not preloaded: the entry script (importing it runs the CLI), the pytest plugin, and
#: the live providers' clients (their SDKs take seconds to import; few calls need them: the
#: server imports them before it forks the first ``--live`` command, see :func:`live_preload`).
SKIP = (
    "threads_cases.__main__",
    "threads_cases.pytest",
    "threads_cases.harness.pytest.plugin",
    "threads_cases.harness.live.anthropic_api",
    "threads_cases.harness.live.openai_api",
)

#: The coverage configuration the server was started with (pytest-cov's, for subprocesses).
SERVER_COVERAGE_CONFIG = os.environ.get("COVERAGE_PROCESS_CONFIG")


def preload() -> None:
    """Import every module of the package (what any command could load), nothing more: no
    cache is warmed, so each child computes its cached values as a fresh process would."""
    import threads_cases
    from threads_cases import cli

    for info in pkgutil.walk_packages(threads_cases.__path__, "threads_cases."):
        if info.name not in SKIP:
            importlib.import_module(info.name)
    app = cli._load()  # every command registered on the app, as for `--help` or an unknown name
    # typer turns the app into a click command on every call (inspecting the signature of
    # every command: most of a short command's CPU); build it once here, as each fresh
    # process builds it once
    import typer.main

    command = typer.main.get_command(app)
    # typer imports its pydantic adapters (about 40 modules) only when a command is called:
    # imported here, not again in every child
    with contextlib.suppress(ImportError):
        importlib.import_module("typer._adapters")
    build = typer.main.get_command
    typer.main.get_command = lambda typer_app: command if typer_app is app else build(typer_app)


def live_preload(args: list[str]) -> None:
    """Before a ``--live`` command: import the provider client it will import (anthropic's,
    and openai's when the command names it) in the server, once, so this and every later live
    command forked from it start with the SDK imported, as the package's other modules are
    (each fresh process paid 1.5-3 CPU-s for it). The child runs the same code after that."""
    if "--live" not in args:
        return
    importlib.import_module("threads_cases.harness.live.anthropic_api")
    if any("openai" in arg for arg in args):
        importlib.import_module("threads_cases.harness.live.openai_api")


def child(req: dict[str, Any]) -> int:
    """Become the CLI process of ``req``; returns its exit status (the caller _exits)."""
    os.setpgid(0, 0)  # the client kills the whole group on a hang
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    _restart_coverage()
    _unmeasured_children()
    for fd, path, flags in (
        (0, req["stdin"], os.O_RDONLY),
        (1, req["stdout"], os.O_WRONLY | os.O_TRUNC),
        (2, req["stderr"], os.O_WRONLY | os.O_TRUNC),
    ):
        new = os.open(path, flags)
        os.dup2(new, fd)
        os.close(new)
    sys.argv = [str(Path(sys.modules["threads_cases"].__file__ or "").parent / "__main__.py")]
    sys.argv += req["args"]
    sys.path[0] = os.getcwd()  # as `python -m` does
    from threads_cases.cli import main

    status = 0
    try:
        main()
    except SystemExit as exc:
        status = _exit_status(exc.code)
    except BaseException:  # what the interpreter does with an uncaught exception
        traceback.print_exc()
        status = 1
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    _save_coverage()
    return status


def _exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _restart_coverage() -> None:
    coverage = sys.modules.get("coverage")
    if coverage is None:  # the server measures nothing (its children inherit its modules)
        return
    inherited = coverage.Coverage.current()
    if inherited is None:
        return
    # the server's collector measures as a fresh process of this child's environment would
    # only when that environment asks for the same configuration as the server's did
    config = os.environ.get("COVERAGE_PROCESS_CONFIG")
    if config is not None and config == SERVER_COVERAGE_CONFIG and _own_data_file(inherited):
        return
    inherited.stop()
    coverage.process_startup(force=True)  # no-op without COVERAGE_PROCESS_CONFIG


#: The variables that make a new Python process start coverage (coverage's ``.pth`` hook):
#: the server's, given to every subprocess of a measured process by ``patch = subprocess``.
COVERAGE_START_ENV = ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START")


def _unmeasured_children() -> None:
    """The processes this CLI child starts are not measured. The only Python ones are the
    ``threads-py`` drivers a ``run`` starts (in a network namespace where ``unshare`` works,
    spec/replay.md 9.1; up to ``--jobs`` of them per run): coverage's start-up in each (its
    import and configuration, about 0.22 CPU-s on top of the driver's 0.17) was the largest
    single coverage cost of the suite, and their code is measured anyway: the request handler
    runs in process (``PythonImplementation``) and the driver's entry point in the drivers
    the tests start themselves (tests/test_driver_*.py), which stay measured."""
    for name in COVERAGE_START_ENV:
        os.environ.pop(name, None)


def _own_data_file(cov: Any) -> bool:
    """Point the started, inherited ``cov`` at a new data file named for this child (parallel
    mode: host, pid, random), and drop the lines the server collected but has not saved (the
    server saves them), so the child keeps the server's collector, its sys.monitoring
    registration and its caches instead of building new ones. False, with nothing changed,
    when coverage's private parts are not as expected (another version) or when the server's
    data already has an open SQLite connection: the caller then restarts coverage."""
    try:
        from coverage.sqldata import CoverageData

        collector, data = cov._collector, cov._data
        if not (
            cov._started
            and isinstance(data, CoverageData)
            and collector is not None
            and collector.covdata is data
            and data._suffix is True  # parallel mode: the name carries the writer's pid
            and not data._dbs  # no connection opened before the fork
            and isinstance(collector.data, dict)
            and all(isinstance(lines, set) for lines in collector.data.values())
        ):
            return False
        own = CoverageData(
            basename=data.base_filename(), suffix=True, warn=cov._warn, debug=cov._debug
        )
        context = cov.config.context
    except (ImportError, AttributeError, TypeError):
        return False
    # in place: the tracers hold these sets (a code object's lines go to its file's set)
    for lines in collector.data.values():
        lines.clear()
    cov._data = own
    collector.use_data(own, context)
    return True


def _save_coverage() -> None:
    if "coverage" not in sys.modules:
        return
    import coverage

    cov = coverage.Coverage.current()
    if cov is not None:
        cov.stop()
        # coverage lists the package's unexecuted files at every save (a walk of the package
        # and a stat of each file: half of a child's restart and save); the worker's own data
        # lists them already, so the child's data need not (private API, hence the guards)
        inorout = getattr(cov, "_inorout", None)
        if inorout is not None and hasattr(inorout, "find_possibly_unexecuted_files"):
            inorout.find_possibly_unexecuted_files = list
        cov.save()


def serve(requests: Any, replies: Any) -> None:
    for line in requests:
        req = json.loads(line)
        live_preload(req["args"])
        pid = os.fork()
        if pid == 0:
            status = 1
            try:
                requests.close()
                replies.close()
                status = child(req)
            finally:
                posix._exit(status)
        replies.write(f"pid {pid}\n".encode())
        replies.flush()
        _, wait_status = os.waitpid(pid, 0)
        replies.write(f"status {os.waitstatus_to_exitcode(wait_status)}\n".encode())
        replies.flush()


def main() -> None:
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    preload()
    replies.write(b"ready\n")
    replies.flush()
    serve(requests, replies)


if __name__ == "__main__":
    main()
