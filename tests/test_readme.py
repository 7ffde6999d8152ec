"""Every shell, Python and TOML sample of README.md works as written.

The blocks run in README order, each as one test item, in one temporary folder that stands
for a clone of this repository (a folder holding a copy of ``examples/``), so a
block sees what the blocks before it wrote (``cases/``, ``demo-out/``, a commit, ...).
Running one item (``-k``) runs the blocks before it first.

- ```` ```sh ```` / ``bash`` / ``shell`` blocks run in ``bash -euo pipefail -x``: every command
  must exit 0. The installed ``threads-cases``, ``python`` and ``pytest`` (this interpreter's
  bin folder) come first on PATH.
- ```` ```python ```` blocks are written to a file and run with this interpreter; a block that
  defines ``def test_...`` functions is a test module and runs under pytest instead.
- ```` ```toml ```` blocks are configuration fragments: they must parse (tomllib).
- Blocks of other languages (or none: diagrams, trees) are prose and never run.

**Skip marker.** A block that cannot run in CI (it installs packages, needs the network, or
runs a whole nox session) has the HTML comment ``<!-- readme-test: skip -->`` alone on the
line just before its opening fence. It is the only way to exempt a block; a skipped block is
reported as a skipped item with its line number.

The items share one xdist group (``--dist loadgroup`` in ``nox -s tests``), so one worker
runs them in order.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
SKIP_MARKER = "<!-- readme-test: skip -->"
SHELLS = {"sh", "bash", "shell"}
RUN_LANGS = SHELLS | {"python", "toml"}
#: Only catches a hang; no sample is judged by the clock.
HANG_SECONDS = 600.0
#: The README's commands are run from a clone; these parts of it are copied into the folder.
CLONE_PARTS = ("examples",)


@dataclass(frozen=True)
class Block:
    """One fenced block of README.md: its language, first line (1-based, the fence) and text."""

    index: int
    lang: str
    line: int
    code: str
    skip: bool

    @property
    def id(self) -> str:
        return f"{self.index:02d}-line{self.line}-{self.lang}"


def readme_blocks(text: str) -> list[Block]:
    """The runnable fenced blocks of ``text`` in order (markdown-it's parser, so indented
    fences and fences inside lists are found as a renderer finds them)."""
    lines = text.splitlines()
    out: list[Block] = []
    for token in MarkdownIt("commonmark").parse(text):
        if token.type != "fence" or token.map is None:
            continue
        lang = token.info.strip().split(" ")[0].lower() if token.info else ""
        if lang not in RUN_LANGS:
            continue
        start = token.map[0]  # 0-based line of the opening fence
        before = lines[start - 1].strip() if start > 0 else ""
        out.append(Block(len(out), lang, start + 1, token.content, before == SKIP_MARKER))
    return out


BLOCKS = readme_blocks(README.read_text(encoding="utf-8"))


def _environment(bin_dir: Path, home: Path) -> dict[str, str]:
    # the samples run as a user runs them: none of this run's own settings (an xdist worker's
    # PYTEST_XDIST_WORKER would make the samples' pytest act as a worker); coverage's COV_CORE_*
    # stay, so the commands the samples run count towards coverage
    own = ("THREADS_CASES_", "GITHUB_", "PYTEST_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(own)}
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        HOME=str(home),  # no user git config or shell completion files are touched
        GIT_AUTHOR_NAME="README test",
        GIT_AUTHOR_EMAIL="readme@example.invalid",
        GIT_COMMITTER_NAME="README test",
        GIT_COMMITTER_EMAIL="readme@example.invalid",
        GIT_CONFIG_NOSYSTEM="1",
        COLUMNS="100",
        PYTHONDONTWRITEBYTECODE="1",
    )
    return env


@dataclass
class Workspace:
    """The folder the blocks run in and the outcome of each block run so far."""

    root: Path
    env: dict[str, str]
    outcomes: dict[int, str | None] = field(default_factory=dict)  # index -> failure or None

    def run_through(self, block: Block) -> None:
        """Run every block up to ``block`` that has not run yet, in order; fail on the first
        block that fails (a failure is remembered, so later items name it)."""
        for earlier in BLOCKS[: block.index + 1]:
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
                return f"README.md:{block.line}: invalid TOML: {exc}"
            return None
        if block.lang in SHELLS:
            argv = ["bash", "-euo", "pipefail", "-x", "-c", block.code]
        else:
            is_test = "\ndef test_" in "\n" + block.code
            name = f"test_readme_block_{block.index}.py" if is_test else f"block_{block.index}.py"
            (self.root / name).write_text(block.code, encoding="utf-8")
            argv = [sys.executable, name]
            if is_test:
                argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", name]
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
            return f"README.md:{block.line}: the {block.lang} block hung for {HANG_SECONDS}s"
        if proc.returncode != 0:
            return (
                f"README.md:{block.line}: the {block.lang} block exited {proc.returncode}\n"
                f"--- stdout (tail) ---\n{proc.stdout[-4000:]}\n"
                f"--- stderr (tail) ---\n{proc.stderr[-4000:]}"
            )
        return None


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    root = tmp_path_factory.mktemp("readme")
    home = tmp_path_factory.mktemp("readme-home")
    for part in CLONE_PARTS:
        shutil.copytree(ROOT / part, root / part)
    env = _environment(Path(sys.executable).parent, home)
    return Workspace(root, env)


def test_readme_has_samples_to_run() -> None:
    runnable = [b for b in BLOCKS if not b.skip]
    assert {b.lang for b in runnable} >= {"sh", "python"}, [b.id for b in BLOCKS]


def test_markers_sit_right_before_a_fence() -> None:
    """A marker anywhere else (a typo, a blank line between it and the fence) would silently
    exempt nothing: every marker must precede a block this test knows."""
    lines = README.read_text(encoding="utf-8").splitlines()
    marked = {i + 1 for i, line in enumerate(lines) if line.strip() == SKIP_MARKER}
    skipped = {b.line - 1 for b in BLOCKS if b.skip}
    assert marked == skipped, f"README.md lines with a stray {SKIP_MARKER}: {marked - skipped}"


@pytest.mark.xdist_group("readme")
@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_readme_block(block: Block, workspace: Workspace) -> None:
    workspace.run_through(block)
    if block.skip:
        pytest.skip(f"README.md:{block.line}: marked {SKIP_MARKER}")
