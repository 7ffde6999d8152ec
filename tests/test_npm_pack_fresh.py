"""Install honesty for the npm package: ``cd ts && npm pack`` in a fresh clone (no
node_modules yet) stops with one line saying to run ``npm ci`` first, never a Node stack
trace (``ERR_MODULE_NOT_FOUND: ... 'ajv'``); ``npm run build`` likewise
(ts/scripts/need-deps.mjs, the first step of both). With the dependencies installed the
same package is built and packed by tests/wheel_env.py (``npm ci && npm pack``)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HINT = "threads-cases: run `npm ci` in ts/ first"


def _fresh_clone(tmp_path: Path) -> Path:
    """ts/, spec/ and schemas/ as a fresh clone has them: no node_modules/, no dist/."""
    skip = shutil.ignore_patterns("node_modules", "dist", "coverage", "*.tgz", "spec", "schemas")
    shutil.copytree(ROOT / "ts", tmp_path / "ts", ignore=skip)
    for name in ("spec", "schemas"):
        shutil.copytree(ROOT / name, tmp_path / name)
    return tmp_path / "ts"


@pytest.mark.parametrize("args", [["pack"], ["run", "build"]], ids=["pack", "build"])
def test_without_npm_ci_npm_says_what_to_run_first(tmp_path: Path, args: list[str]) -> None:
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not on PATH")
    ts = _fresh_clone(tmp_path)
    proc = subprocess.run(
        [npm, *args, "--no-audit", "--no-fund"], cwd=ts, capture_output=True, text=True
    )
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert HINT in out, out
    assert "ERR_MODULE_NOT_FOUND" not in out and "node:internal" not in out, out
    assert not list(ts.glob("*.tgz")) and not (ts / "spec").exists()
