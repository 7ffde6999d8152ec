"""Every shell, Python, TOML and file sample of the documentation site (docs/) works as
written, from the built wheel and npm tarball, outside the repository.

The pages run as README.md's samples do (tests/test_readme.py: its :func:`readme_blocks`
finds the blocks and its :class:`Workspace` runs them, with the same rules and the same
``<!-- readme-test: skip -->`` marker), with three differences:

- **One workspace per page.** Each page's blocks run in order in a folder of their own (a
  copy of ``examples/``, standing for a clone, as for the README), so a page never depends on
  another; one xdist group per page.
- **The npm package too.** The folder's ``node_modules`` is the consumer folder of the built
  npm tarball (tests/wheel_env.py), as ``npm install <the tarball>`` leaves it, so a
  JavaScript sample ``import``s ``threads-cases`` as a user's project does.
- **This interpreter only.** The README's samples are the ones tried on every Python; the
  site's run on the one running the tests, in the worker's wheel virtualenv, to keep the CPU
  cost of the suite modest.

Generated pages (docs/reference/cli.md, reason-codes.md) hold no samples.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from test_readme import SKIP_MARKER, Block, Workspace, _environment, installed_from, readme_blocks
from wheel_env import Built, Venv

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
CLONE_PARTS = ("examples",)


def _page_blocks() -> dict[str, list[Block]]:
    pages = {}
    for path in sorted(DOCS.rglob("*.md")):
        rel = path.relative_to(ROOT).as_posix()
        blocks = readme_blocks(path.read_text(encoding="utf-8"), file=rel)
        if blocks:
            pages[rel] = blocks
    return pages


PAGES = _page_blocks()


@pytest.fixture(scope="session")
def page_workspaces(
    tmp_path_factory: pytest.TempPathFactory, built: Built, wheel_venv: Venv
) -> Iterator[Callable[[str], Workspace]]:
    """The workspace of a page (``docs/tutorial/python.md``), made on first use."""
    made: dict[str, Workspace] = {}

    def get(page: str) -> Workspace:
        if page not in made:
            work = tmp_path_factory.mktemp("docs-" + page.replace("/", "-").removesuffix(".md"))
            root, home = work / "clone", work / "home"
            home.mkdir()
            for part in CLONE_PARTS:
                shutil.copytree(ROOT / part, root / part)
            (root / "node_modules").symlink_to(
                built.consumer / "node_modules", target_is_directory=True
            )
            env = _environment(wheel_venv, built.dist, home)
            where = installed_from(wheel_venv.python, root, env)
            assert where.is_relative_to(wheel_venv.root.resolve()), f"threads_cases from {where}"
            made[page] = Workspace(root, env, wheel_venv.python, PAGES[page])
        return made[page]

    yield get


def _params() -> list[object]:
    return [
        pytest.param(page, block, id=f"{page}-{block.id}", marks=pytest.mark.xdist_group(page))
        for page, blocks in PAGES.items()
        for block in blocks
    ]


def test_the_tutorials_and_guides_have_samples_that_run() -> None:
    """The tutorial runs end to end, and a how-to guide shows commands, never only prose."""
    for page in ("docs/tutorial/python.md", "docs/tutorial/typescript.md", "docs/index.md"):
        assert any(not b.skip and b.title is None for b in PAGES.get(page, [])), page
    guides = [p for p in PAGES if p.startswith("docs/how-to/")]
    assert len(guides) >= 6, guides


def test_markers_sit_right_before_a_fence() -> None:
    """A skip marker anywhere else would silently do nothing (as in the README)."""
    for path in sorted(DOCS.rglob("*.md")):
        rel = path.relative_to(ROOT).as_posix()
        lines = path.read_text(encoding="utf-8").splitlines()
        marked = {i + 1 for i, line in enumerate(lines) if line.strip() == SKIP_MARKER}
        known = {b.line - 1 for b in PAGES.get(rel, []) if b.skip}
        assert marked == known, f"{rel}: a stray {SKIP_MARKER} on lines {marked - known}"


@pytest.mark.parametrize(("page", "block"), _params())
def test_docs_block(page: str, block: Block, page_workspaces: Callable[[str], Workspace]) -> None:
    page_workspaces(page).run_through(block)
    if block.skip:
        pytest.skip(f"{page}:{block.line}: marked {SKIP_MARKER}")


def test_the_tutorials_sample_outputs_are_claims_the_run_checks() -> None:
    """Each tutorial's "# fail: must_unmatched" (and every pass / drifted) beside a run line is
    checked against the report that run wrote (tests/sample_claims.py), not left to prose."""
    from sample_claims import claims

    for page in ("docs/tutorial/python.md", "docs/tutorial/typescript.md"):
        made = [c for b in PAGES[page] if b.lang in ("sh", "bash", "shell") for c in claims(b.code)]
        assert ("fail", "must_unmatched") in made, (page, made)
        assert ("drifted", None) in made and ("pass", None) in made, (page, made)


@pytest.mark.parametrize(
    ("claim", "ok"),
    [("# fail: must_unmatched", True), ("# fail: stop_mismatch", False), ("# pass", False)],
)
def test_a_claim_the_report_does_not_hold_fails_the_sample(
    tmp_path: Path, claim: str, ok: bool
) -> None:
    import json
    import subprocess
    import sys

    from sample_claims import with_claim_checks

    (tmp_path / "work" / ".threads-cases").mkdir(parents=True)
    result = {"kind": "result", "case": "c", "implementation": "threads-ts"}
    result |= {"verdict": "fail", "reasons": ["must_unmatched"]}
    (tmp_path / "work" / ".threads-cases" / "last-report.jsonl").write_text(
        json.dumps({"kind": "header"}) + "\n" + json.dumps(result) + "\n"
    )
    code = f"threads-cases run cases || true   {claim}\n"
    checked = with_claim_checks(code, Path(sys.executable), tmp_path / "claims.py")
    assert checked.splitlines()[0] == code.rstrip()  # the sample's line, as written
    fake_cli = "threads-cases() { return 3; }\n"
    p = subprocess.run(
        ["bash", "-eu", "-c", fake_cli + checked],
        cwd=tmp_path / "work",
        capture_output=True,
        text=True,
    )
    assert (p.returncode == 0) == ok, p.stderr
