"""Every shell, Python and TOML sample of README.md works as written, from the built wheel.

The blocks run in README order, each as one test item, in one temporary folder that stands
for a clone of this repository (a folder holding a copy of ``examples/``), so a
block sees what the blocks before it wrote (``cases/``, ``demo-out/``, a commit, ...).
Running one item (``-k``) runs the blocks before it first.

**From the wheel, as a user.** The package under test is the wheel tests/wheel_env.py builds
(the same build tests/test_packaging.py checks: one build per test session), installed into a
fresh virtualenv outside the repository whose ``bin/`` comes first on PATH (``VIRTUAL_ENV``
set, as ``activate`` does); the folder has no access to the checkout's sources, and the
first thing checked is that ``threads_cases`` is imported from that virtualenv. ``pip
install`` samples run against the built wheel only (``PIP_FIND_LINKS`` its folder,
``PIP_NO_INDEX``). Node.js 20+ is on PATH, and the TypeScript column must be green: no
sample may print ``driver_unavailable``, and the last report holds passing threads-ts
results.

- ```` ```sh ```` / ``bash`` / ``shell`` blocks run in ``bash -euo pipefail -x``: every command
  must exit 0, and a ``threads-cases run`` line whose comment starts with a verdict
  (``# fail: must_unmatched``) must give it (tests/sample_claims.py).
- ```` ```python ```` blocks are written to a file and run with the virtualenv's python; a
  block that defines ``def test_...`` functions is a test module and runs under pytest.
- ```` ```toml ```` blocks are configuration fragments: they must parse (tomllib).
- A block whose fence names a file, `` ```python title="notes_agent.py" `` (any language),
  is that file: it is written there (folders made), never run; a ``toml`` one must parse.
- Blocks of other languages (or none: diagrams, trees) are prose and never run.

The documentation site's pages run the same way, one workspace per page
(tests/test_docs_samples.py uses :func:`readme_blocks` and :class:`Workspace`).

**Every interpreter.** The README runs on this interpreter and on every other supported
Python found (on PATH or among pyenv's versions: tests/wheel_env.py ``other_pythons``), each in
a fresh virtualenv of its own with the same wheel and a workspace of its own: the items are
``test_readme_block[3.12-06-line179-sh]``, one xdist group per interpreter, so the
interpreters' runs go in parallel and each runs its blocks in order. The oldest interpreter
found runs every block; the others run the blocks marked ``<!-- readme-test: every-python -->``
(the install, the quickstart and the Python API sample: the package installs, imports
a session, records, saves and runs both implementations there), and on every interpreter
each module of the installed package must compile and import
(:func:`test_every_module_imports`: syntax and the standard library are where Python
versions differ first), unless
``THREADS_CASES_README_EVERY_PYTHON=1`` (``nox -s readme``) asks for every block on every
interpreter. The newest interpreter is the one the rest of the suite runs on; every block
there cost ``nox -s tests`` about 40 CPU seconds (measured with coverage), the middle one's
about 35.

**Skip marker.** A block that cannot run in CI (it needs the network, a clone, or runs a
whole nox session) has the HTML comment ``<!-- readme-test: skip -->`` alone on the
line just before its opening fence. It is the only way to exempt a block; a skipped block is
reported as a skipped item with its line number. A block has one marker at most.

The build is shared with tests/test_packaging.py (conftest ``built``: one per run).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt
from sample_claims import with_claim_checks
from wheel_env import Built, Venv, make_venv, ok, other_pythons

from threads_cases import __version__

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
SKIP_MARKER = "<!-- readme-test: skip -->"
#: Marks a block that runs on every interpreter found (the others run on the oldest only).
EVERY_MARKER = "<!-- readme-test: every-python -->"
#: ``1`` runs every block on every interpreter (``nox -s readme``).
EVERY_PYTHON_ENV = "THREADS_CASES_README_EVERY_PYTHON"
SHELLS = {"sh", "bash", "shell"}
RUN_LANGS = SHELLS | {"python", "toml"}
#: Only catches a hang; no sample is judged by the clock.
HANG_SECONDS = 600.0
#: The README's commands are run from a clone; these parts of it are copied into the folder.
CLONE_PARTS = ("examples",)
#: What a sample prints when an implementation could not run: the TypeScript column is red.
UNAVAILABLE = "driver_unavailable"


@dataclass(frozen=True)
class Block:
    """One fenced block of README.md (or of a page of docs/: ``file``): its language, first
    line (1-based, the fence) and text; ``title`` the file a file block is written to."""

    index: int
    lang: str
    line: int
    code: str
    skip: bool
    every_python: bool = False
    file: str = "README.md"
    title: str | None = None

    @property
    def id(self) -> str:
        return f"{self.index:02d}-line{self.line}-{self.lang}"


_TITLE = re.compile(r'\btitle="([^"]+)"')


def readme_blocks(text: str, file: str = "README.md") -> list[Block]:
    """The runnable fenced blocks of ``text`` (the Markdown of ``file``) in order, file
    blocks included (markdown-it's parser, so indented fences and fences inside lists are
    found as a renderer finds them)."""
    lines = text.splitlines()
    out: list[Block] = []
    for token in MarkdownIt("commonmark").parse(text):
        if token.type != "fence" or token.map is None:
            continue
        lang = token.info.strip().split(" ")[0].lower() if token.info else ""
        title = _TITLE.search(token.info or "")
        if lang not in RUN_LANGS and title is None:
            continue
        start = token.map[0]  # 0-based line of the opening fence
        before = lines[start - 1].strip() if start > 0 else ""
        block = Block(len(out), lang, start + 1, token.content, before == SKIP_MARKER)
        out.append(
            replace(
                block,
                every_python=before == EVERY_MARKER,
                file=file,
                title=title.group(1) if title else None,
            )
        )
    return out


BLOCKS = readme_blocks(README.read_text(encoding="utf-8"))


def _environment(venv: Venv, dist: Path, home: Path) -> dict[str, str]:
    # the samples run as a user runs them: none of this run's own settings (an xdist worker's
    # PYTEST_XDIST_WORKER would make the samples' pytest act as a worker; the checkout's
    # virtualenv); coverage's COVERAGE_PROCESS_CONFIG stays, so the commands the samples run
    # count towards coverage (the virtualenv holds coverage then: wheel_env.make_venv)
    own = ("THREADS_CASES_", "GITHUB_", "PYTEST_", "PIP_", "VIRTUAL_ENV", "PYTHONPATH")
    env = {k: v for k, v in os.environ.items() if not k.startswith(own)}
    env.update(
        PATH=f"{venv.bin}{os.pathsep}{env.get('PATH', '')}",
        VIRTUAL_ENV=str(venv.root),
        PIP_FIND_LINKS=str(dist),  # `pip install threads-cases` finds the built wheel only
        PIP_NO_INDEX="1",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        HOME=str(home),  # no user git config or shell completion files are touched
        GIT_AUTHOR_NAME="README test",
        GIT_AUTHOR_EMAIL="readme@example.invalid",
        GIT_COMMITTER_NAME="README test",
        GIT_COMMITTER_EMAIL="readme@example.invalid",
        GIT_CONFIG_NOSYSTEM="1",
        COLUMNS="100",
    )  # bytecode is written, as a user's Python does: the first command compiles what it loads
    return env


@dataclass
class Workspace:
    """The folder the blocks run in and the outcome of each block run so far."""

    root: Path
    env: dict[str, str]
    python: Path
    blocks: list[Block]  # the blocks this interpreter runs (blocks_for)
    outcomes: dict[int, str | None] = field(default_factory=dict)  # index -> failure or None

    def run_through(self, block: Block) -> None:
        """Run every block up to ``block`` that has not run yet, in order; fail on the first
        block that fails (a failure is remembered, so later items name it)."""
        for earlier in [b for b in self.blocks if b.index <= block.index]:
            if earlier.index not in self.outcomes:
                self.outcomes[earlier.index] = None if earlier.skip else self._run(earlier)
            failure = self.outcomes[earlier.index]
            if failure is not None:
                where = "" if earlier is block else f"an earlier block ({earlier.id}) failed:\n"
                pytest.fail(f"{where}{failure}", pytrace=False)

    def _run(self, block: Block) -> str | None:
        if block.lang == "toml":
            try:
                tomllib.loads(block.code)
            except tomllib.TOMLDecodeError as exc:
                return f"{block.file}:{block.line}: invalid TOML: {exc}"
        if block.title is not None:
            target = self.root / block.title
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.code, encoding="utf-8")
            return None
        if block.lang == "toml":
            return None
        if block.lang in SHELLS:  # what a run line's comment says it prints is checked too
            code = with_claim_checks(block.code, self.python, self.root.parent / "claims.py")
            argv = ["bash", "-euo", "pipefail", "-x", "-c", code]
        else:
            is_test = "\ndef test_" in "\n" + block.code
            name = f"test_readme_block_{block.index}.py" if is_test else f"block_{block.index}.py"
            (self.root / name).write_text(block.code, encoding="utf-8")
            argv = [str(self.python), name]
            if is_test:
                argv = [str(self.python), "-m", "pytest", "-q", "-p", "no:cacheprovider", name]
        try:
            proc = subprocess.run(
                argv,
                cwd=self.root,
                env=self.env,
                capture_output=True,
                text=True,
                encoding="utf-8",
                errors="replace",
                timeout=HANG_SECONDS,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            return f"{block.file}:{block.line}: the {block.lang} block hung for {HANG_SECONDS}s"
        if proc.returncode != 0 or UNAVAILABLE in proc.stdout + proc.stderr:
            what = f"exited {proc.returncode}" if proc.returncode else f"printed {UNAVAILABLE}"
            return (
                f"{block.file}:{block.line}: the {block.lang} block {what}\n"
                f"--- stdout (tail) ---\n{proc.stdout[-4000:]}\n"
                f"--- stderr (tail) ---\n{proc.stderr[-4000:]}"
            )
        return None


def installed_from(python: Path, cwd: Path, env: dict[str, str]) -> Path:
    """Where ``python`` run in ``cwd`` imports ``threads_cases`` from."""
    code = "import threads_cases; print(threads_cases.__file__)"
    p = subprocess.run(
        [str(python), "-c", code], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return Path(p.stdout.strip()).resolve()


CURRENT = f"{sys.version_info[0]}.{sys.version_info[1]}"
#: Every interpreter the README runs on: this one, then the others found.
PYTHONS: dict[str, Path] = {CURRENT: Path(sys.executable), **other_pythons()}


def _minor(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


#: The interpreter that runs every block: the oldest found.
OLDEST = min(PYTHONS, key=_minor)


def blocks_for(version: str) -> list[Block]:
    """The blocks ``version`` runs, in order: every block on the oldest interpreter (or
    everywhere with ``THREADS_CASES_README_EVERY_PYTHON=1``), the ``every-python`` blocks on
    the others."""
    if version == OLDEST or os.environ.get(EVERY_PYTHON_ENV) == "1":
        return BLOCKS
    return [b for b in BLOCKS if b.every_python]


@pytest.fixture(scope="session")
def workspaces(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, built: Built
) -> Iterator[Callable[[str], Workspace]]:
    """The workspace of an interpreter (``"3.12"``), made on first use: this interpreter's
    is the worker's ``wheel_venv`` (whose CLI processes coverage measures); another's is a
    fresh virtualenv of that interpreter with the same wheel (its pip inside, as a user's
    has; not measured)."""
    made: dict[str, Workspace] = {}

    def get(version: str) -> Workspace:
        if version not in made:
            if version == CURRENT:
                venv: Venv = request.getfixturevalue("wheel_venv")
            else:
                root = tmp_path_factory.mktemp(f"venv-{version}") / "venv"
                python = PYTHONS[version]
                venv = make_venv(python, built.wheel, root, measure=False)
            made[version] = _workspace(version, venv, tmp_path_factory, built)
        return made[version]

    yield get


def _workspace(
    version: str, venv: Venv, tmp_path_factory: pytest.TempPathFactory, built: Built
) -> Workspace:
    work = tmp_path_factory.mktemp(f"readme-{version}")
    assert venv.version == version, (venv.version, version)
    root, home = work / "clone", work / "home"
    home.mkdir()
    for part in CLONE_PARTS:
        shutil.copytree(ROOT / part, root / part)
    env = _environment(venv, built.dist, home)
    where = installed_from(venv.python, root, env)
    assert where.is_relative_to(venv.root.resolve()), f"threads_cases from {where}"
    assert not where.is_relative_to(ROOT), where
    cli = ok([venv.bin / "threads-cases", "--version"], root, env).stdout.strip()
    assert cli == f"threads-cases {__version__}", cli
    return Workspace(root, env, venv.python, blocks_for(version))


def _per_python(with_blocks: bool) -> list[Any]:
    """``(version, block)`` for every interpreter and each block it runs (:func:`blocks_for`),
    or ``version`` alone; each interpreter in an xdist group of its own: its blocks run in
    order in one workspace, on one worker, while the other interpreters' run on the others."""
    return [
        pytest.param(v, *b, id="-".join([v, *(x.id for x in b)]), marks=_group(v))
        for v in PYTHONS
        for b in ([[x] for x in blocks_for(v)] if with_blocks else [[]])
    ]


def _group(version: str) -> pytest.MarkDecorator:
    return pytest.mark.xdist_group(f"readme-{version}")


def test_readme_has_samples_to_run() -> None:
    runnable = [b for b in BLOCKS if not b.skip]
    assert {b.lang for b in runnable} >= {"sh", "python"}, [b.id for b in BLOCKS]


@pytest.mark.parametrize(
    ("marker", "field"), [(SKIP_MARKER, "skip"), (EVERY_MARKER, "every_python")]
)
def test_markers_sit_right_before_a_fence(marker: str, field: str) -> None:
    """A marker anywhere else (a typo, a blank line between it and the fence) would silently
    do nothing: every marker must precede a block this test knows."""
    lines = README.read_text(encoding="utf-8").splitlines()
    marked = {i + 1 for i, line in enumerate(lines) if line.strip() == marker}
    known = {b.line - 1 for b in BLOCKS if getattr(b, field)}
    assert marked == known, f"README.md lines with a stray {marker}: {marked - known}"


def test_every_python_blocks_install_and_run_both_implementations() -> None:
    """What an interpreter other than the oldest runs still installs the wheel, uses the
    Python API and runs cases (the TypeScript column is checked after them)."""
    every = [b for b in BLOCKS if b.every_python]
    assert not any(b.skip for b in every)
    text = "\n".join(b.code for b in every)
    assert "pip install threads-cases" in text and "from threads_cases import" in text
    assert "threads-cases run " in text, [b.id for b in every]


@pytest.mark.parametrize(("version", "block"), _per_python(with_blocks=True))
def test_readme_block(version: str, block: Block, workspaces: Callable[[str], Workspace]) -> None:
    workspaces(version).run_through(block)
    if block.skip:
        pytest.skip(f"README.md:{block.line}: marked {SKIP_MARKER}")


@pytest.mark.parametrize("version", _per_python(with_blocks=False))
def test_the_typescript_column_is_green(
    version: str, workspaces: Callable[[str], Workspace]
) -> None:
    """After every sample: the last report (the README's last ``run``) holds threads-ts
    results, all passing (no sample printed ``driver_unavailable``: Workspace checks that)."""
    workspace = workspaces(version)
    workspace.run_through(workspace.blocks[-1])
    results = _results((workspace.root / ".threads-cases" / "last-report.jsonl").read_text())
    ts = [r for r in results if r["implementation"] == "threads-ts"]
    assert ts, [r["implementation"] for r in results]
    assert all(r["verdict"] in ("pass", "drifted") for r in ts), ts


#: Compiles and imports every module of the installed package; a module that needs an optional
#: dependency the virtualenv lacks (an extra such as ``live``) may fail with that import only.
IMPORT_EVERY_MODULE = """
import compileall, importlib, pkgutil, re, sys
from importlib import metadata
import threads_cases

root = threads_cases.__path__[0]
if not compileall.compile_dir(root, quiet=1):
    sys.exit("a module of the installed package does not compile")
optional = set()
for req in metadata.requires("threads-cases") or []:
    if "extra ==" in req:
        optional.add(re.split(r"[^A-Za-z0-9_.-]", req, maxsplit=1)[0].lower().replace("-", "_"))
names = [m.name for m in pkgutil.walk_packages(threads_cases.__path__, "threads_cases.")]
failed = []
for name in names:
    if name.endswith(".__main__"):
        continue
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in optional:
            failed.append(f"{name}: {exc!r}")
    except Exception as exc:
        failed.append(f"{name}: {exc!r}")
print(len(names))
sys.exit("\\n".join(failed) or None)
"""


@pytest.mark.parametrize("version", _per_python(with_blocks=False))
def test_every_module_imports(version: str, workspaces: Callable[[str], Workspace]) -> None:
    """Every module of the installed wheel compiles and imports on every interpreter found
    (the ones that run only the ``every-python`` blocks too)."""
    workspace = workspaces(version)
    p = subprocess.run(
        [str(workspace.python), "-c", IMPORT_EVERY_MODULE],
        cwd=workspace.root,
        env=workspace.env,
        capture_output=True,
        text=True,
        timeout=HANG_SECONDS,
        stdin=subprocess.DEVNULL,
    )
    assert p.returncode == 0, f"on Python {version}:\n{p.stdout[-4000:]}\n{p.stderr[-4000:]}"
    assert int(p.stdout.split()[-1]) > 50, p.stdout  # the walk found the package's modules


def _results(jsonl: str) -> list[dict[str, str]]:
    lines = [json.loads(x) for x in jsonl.splitlines() if x.startswith("{")]
    return [x for x in lines if x.get("kind") == "result"]
