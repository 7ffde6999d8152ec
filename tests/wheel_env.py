"""The built wheel in fresh virtualenvs, for the tests that use the package as a user does
(tests/test_packaging.py, tests/test_readme.py; issue 16, "Done when").

:func:`build` makes, OUTSIDE the repository (pytest's temporary folder), the sdist, the
wheel from that sdist (``python -m build --no-isolation``: this environment's hatchling,
never installed from the index per build; the build hook must bundle the TypeScript driver:
THREADS_CASES_REQUIRE_TS_DRIVER=1) and the npm tarball (``npm pack`` on a copy of ts/, so the
checkout's ts/dist is never touched), and installs the tarball into a consumer folder.
:func:`make_venv` installs that wheel into a fresh virtualenv of any interpreter.
:func:`other_pythons` finds the other supported interpreters: on PATH, or pyenv's versions.

The fixtures over these (``built``, ``wheel_venv``) are in tests/conftest.py, session-scoped:
the build is made once per run and shared by the xdist workers (a file lock), the virtualenv
once per worker; test_packaging.py keeps to the xdist group :data:`GROUP` (it writes into the
build's folders).

Needs Node.js 20+, npm and the package index: without them the tests are skipped locally and
FAIL under CI=true (:func:`missing_tool`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TS = ROOT / "ts"
#: The xdist group of every test that uses the built wheel (one worker, one build).
GROUP = "packaging"
STEP_SECONDS = 900.0  # only catches a hang (a cold npm/pip cache on a loaded machine is slow)
SUPPORTED = ("3.11", "3.12", "3.13")


@dataclass(frozen=True)
class Built:
    """What one build made: the folder it worked in, the artifacts, and a folder where the
    npm tarball is installed (``consumer/node_modules/threads-cases``)."""

    work: Path
    dist: Path
    wheel: Path
    sdist: Path
    tarball: Path
    consumer: Path


@dataclass(frozen=True)
class Venv:
    """A fresh virtualenv holding the built wheel (``root``, its ``bin`` folder, its Python's
    ``major.minor``)."""

    root: Path
    bin: Path
    version: str

    @property
    def python(self) -> Path:
        return self.bin / "python"


def missing_tool(reason: str) -> None:
    """Skip the test, or fail it under CI=true: CI must never pass without building."""
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"packaging tests need {reason} (CI=true: failing, not skipping)")
    pytest.skip(f"packaging tests need {reason}")


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This environment without coverage's subprocess hooks and the checkout's venv."""
    drop = ("COV_CORE_", "COVERAGE_", "PYTHONPATH", "VIRTUAL_ENV", "PIP_REQUIRE_VIRTUALENV")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    return {**env, "COLUMNS": "200", **(extra or {})}


def run(
    cmd: list[str | Path], cwd: Path, env: Mapping[str, str] | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    """``cmd`` in ``cwd`` with :func:`clean_env` plus ``env``; fails the test on a hang."""
    try:
        return subprocess.run(
            [str(c) for c in cmd],
            cwd=cwd,
            env=clean_env(env),
            input=stdin,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=STEP_SECONDS,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"`{' '.join(map(str, cmd))}` hung for {STEP_SECONDS}s")


def ok(
    cmd: list[str | Path], cwd: Path, env: Mapping[str, str] | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    """:func:`run`, failing the test unless it exits 0."""
    p = run(cmd, cwd, env, stdin)
    assert p.returncode == 0, f"{' '.join(map(str, cmd))}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return p


def node_ok() -> bool:
    """Node.js 20 or later and npm are on PATH."""
    node = shutil.which("node")
    if node is None or shutil.which("npm") is None:
        return False
    p = subprocess.run([node, "-p", "process.versions.node"], capture_output=True, text=True)
    return p.returncode == 0 and int(p.stdout.split(".")[0] or 0) >= 20


def _copy_ts_project(dest: Path) -> Path:
    """ts/ (sources only), spec/ and schemas/ under ``dest``, as in the repository."""
    junk = shutil.ignore_patterns("node_modules", "dist", "coverage", "*.tgz", "spec", "schemas")
    shutil.copytree(TS, dest / "ts", ignore=junk)
    for name in ("spec", "schemas"):
        shutil.copytree(ROOT / name, dest / name)
    return dest / "ts"


def _start_npm_pack(ts_copy: Path, out: Path) -> subprocess.Popen[str]:
    """``npm pack`` of the copy (the checkout's node_modules linked, or installed when the
    checkout has none), running alongside the Python build."""
    npm = shutil.which("npm")
    assert npm is not None
    if (TS / "node_modules" / "typescript").is_dir():
        (ts_copy / "node_modules").symlink_to(TS / "node_modules", target_is_directory=True)
        cmd = f"{npm} pack --silent --pack-destination {out}"
    else:
        cmd = f"{npm} ci --no-audit --no-fund && {npm} pack --silent --pack-destination {out}"
    return subprocess.Popen(
        cmd, shell=True, cwd=ts_copy, env=clean_env(), stdout=subprocess.PIPE, text=True,
        stderr=subprocess.STDOUT,
    )  # fmt: skip


def build(work: Path) -> Built:
    """The sdist, the wheel (from the sdist) and the npm tarball under ``work``."""
    if not node_ok():
        missing_tool("Node.js 20 or later and npm on PATH")
    assert not work.resolve().is_relative_to(ROOT), "build outside the repository"
    dist, npm_out = work / "dist", work / "npm"
    npm_out.mkdir()
    packing = _start_npm_pack(_copy_ts_project(work / "src"), npm_out)
    try:
        p = run(
            [sys.executable, "-m", "build", "--no-isolation", "--outdir", dist, ROOT],
            work,
            env={"THREADS_CASES_REQUIRE_TS_DRIVER": "1"},
        )
        if "No module named build" in p.stderr or "Missing dependencies" in p.stderr:
            missing_tool("the `build` and `hatchling` packages (pip install -e '.[dev]')")
        assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
        out, _ = packing.communicate(timeout=STEP_SECONDS)
        assert packing.returncode == 0, f"npm pack failed:\n{out[-3000:] if out else ''}"
    finally:
        if packing.poll() is None:
            packing.kill()
            packing.wait()
    (wheel,) = dist.glob("threads_cases-*.whl")
    (sdist,) = dist.glob("threads_cases-*.tar.gz")
    (tarball,) = npm_out.glob("threads-cases-*.tgz")
    consumer = work / "consumer"
    consumer.mkdir()
    ok([shutil.which("npm") or "npm", "install", "--no-audit", "--no-fund", tarball], consumer)
    return Built(work, dist, wheel, sdist, tarball, consumer)


def measured_by_coverage() -> bool:
    """This test process measures its subprocesses (coverage's ``patch = subprocess``)."""
    return bool(os.environ.get("COVERAGE_PROCESS_CONFIG"))


def make_venv(python: str | Path, wheel: Path, root: Path, *, measure: bool = True) -> Venv:
    """A fresh virtualenv of ``python`` at ``root`` with ``wheel[pytest]`` installed by the
    virtualenv's own pip, as a user installs it.

    uv makes the virtualenv (with pip in it: ``--seed``; never a downloaded interpreter) and
    fetches the wheel's dependencies from the package index (``uv pip install``), in about a
    tenth of pip's CPU time: pip resolving and installing them cost about 18 CPU-s per
    virtualenv, with four or more per test run. Their bytecode is written by the first
    process that imports each module, as in a user's virtualenv (``--compile-bytecode``,
    every module of every dependency, cost 6.2 CPU-s a virtualenv against 0.6). uv then removes the
    package itself, and ``python -m pip install WHEEL[pytest]`` installs it from the built
    wheel alone (``--no-index``: every dependency is already there). Under coverage (and
    ``measure``) the same coverage version is added, so the CLI processes the samples start
    are measured too (pyproject.toml maps ``*/site-packages/threads_cases`` to the sources).
    """
    uv = shutil.which("uv") or str(Path(sys.executable).with_name("uv"))
    if not Path(uv).is_file():
        missing_tool("uv (pip install -e '.[dev]')")
    no_download = {"UV_PYTHON_DOWNLOADS": "never"}
    ok([uv, "venv", "-q", "--seed", "--python", python, root], root.parent, no_download)
    bin_dir = root / ("Scripts" if os.name == "nt" else "bin")
    extra = (
        [f"coverage=={metadata.version('coverage')}"] if measure and measured_by_coverage() else []
    )
    into = ["--python", str(bin_dir / "python")]
    ok(
        [uv, "pip", "install", "-q", *into, f"{wheel}[pytest]", *extra],
        root.parent,
        no_download,
    )
    ok([uv, "pip", "uninstall", "-q", *into, "threads-cases"], root.parent, no_download)
    ok(
        [bin_dir / "python", "-m", "pip", "install", "-q", "--no-index", "--find-links",
         wheel.parent, f"{wheel}[pytest]"],
        root.parent,
    )  # fmt: skip
    version = ok([bin_dir / "python", "-c", "import sys; print(sys.version[:4])"], root.parent)
    return Venv(root, bin_dir, version.stdout.strip().rstrip("."))


def _pyenv_root() -> Path | None:
    root = os.environ.get("PYENV_ROOT")
    if not root and shutil.which("pyenv"):
        p = subprocess.run(["pyenv", "root"], capture_output=True, text=True, check=False)
        root = p.stdout.strip()
    return Path(root) if root else None


def _starts(exe: str | Path) -> bool:
    p = subprocess.run([str(exe), "-c", "pass"], capture_output=True, check=False)
    return p.returncode == 0


def other_pythons() -> dict[str, Path]:
    """``{"3.12": path}`` for every supported version other than this interpreter's that is
    on PATH (and starts: a pyenv shim of an unselected version does not) or among pyenv's
    versions (``$PYENV_ROOT`` or ``pyenv root``), the newest patch release first."""
    current = f"{sys.version_info[0]}.{sys.version_info[1]}"
    pyenv = _pyenv_root()
    found: dict[str, Path] = {}
    for version in SUPPORTED:
        if version == current:
            continue
        exe = shutil.which(f"python{version}")
        candidates = [Path(exe)] if exe else []
        if pyenv is not None and (pyenv / "versions").is_dir():
            patch = re.compile(rf"^{re.escape(version)}\.\d+$")
            dirs = [d for d in (pyenv / "versions").iterdir() if patch.match(d.name)]
            dirs.sort(key=lambda d: int(d.name.rsplit(".", 1)[1]), reverse=True)
            candidates += [d / "bin" / f"python{version}" for d in dirs]
        usable = next((c for c in candidates if c.is_file() and _starts(c)), None)
        if usable is not None:
            found[version] = usable
    return found
