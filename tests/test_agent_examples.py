"""The example projects examples/stock-agent (Python) and examples/stock-agent-ts
(JavaScript) run their README's loop as written, from the built wheel and npm tarball,
outside the repository (issue 30): record a turn, save it, commit, change the agent, `run`
shows the divergence, `accept`, `diff --git HEAD`, commit; then the case passes again."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

from wheel_env import Built, Venv, ok, run

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "example test",
    "GIT_AUTHOR_EMAIL": "example@example.invalid",
    "GIT_COMMITTER_NAME": "example test",
    "GIT_COMMITTER_EMAIL": "example@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def readme_block(folder: Path) -> str:
    """The one ``sh`` block of the example's README.md."""
    (block,) = re.findall(
        r"^```sh\n(.*?)^```", (folder / "README.md").read_text("utf-8"), re.M | re.S
    )
    return block


def loop(example: str, venv: Venv, tmp_path: Path, node_modules: Path | None = None) -> str:
    """Run the README block of ``example`` in a copy of it; its output (commands traced)."""
    work = tmp_path / example
    shutil.copytree(EXAMPLES / example, work)
    if node_modules is not None:
        (work / "node_modules").symlink_to(node_modules, target_is_directory=True)
    env = {
        **GIT_ENV,
        "HOME": str(tmp_path),
        "PATH": f"{venv.bin}{os.pathsep}{os.environ.get('PATH', '')}",
        "VIRTUAL_ENV": str(venv.root),
        "COLUMNS": "120",
    }
    script = "set -euo pipefail -x\n" + readme_block(work)
    p = ok(["bash", "-c", script], work, env)
    return p.stdout + p.stderr


def last_run(work: Path, venv: Venv, impl: str) -> dict[str, str]:
    p = run(
        [venv.bin / "threads-cases", "run", "cases", "--impl", impl, "--format", "json"],
        work,
        {"PATH": f"{venv.bin}{os.pathsep}{os.environ.get('PATH', '')}"},
    )
    lines = [json.loads(line) for line in p.stdout.splitlines()]
    return {r["implementation"]: r["verdict"] for r in lines if r["kind"] == "result"}


def test_the_python_example_loop_runs_from_the_wheel(wheel_venv: Venv, tmp_path: Path) -> None:
    out = loop("stock-agent", wheel_venv, tmp_path)
    assert "saved cases/counts-a1" in out
    assert "agent: system prompt changed" in out
    assert "/system" in out and "Answer in words." in out
    assert "model.json" in out  # accept and diff show what moved
    assert last_run(tmp_path / "stock-agent", wheel_venv, "threads-py") == {"threads-py": "pass"}


def test_the_javascript_example_loop_runs_from_the_tarball(
    built: Built, wheel_venv: Venv, tmp_path: Path
) -> None:
    out = loop("stock-agent-ts", wheel_venv, tmp_path, built.consumer / "node_modules")
    assert "saved cases/counts-a1" in out
    assert "agent: system prompt changed" in out
    assert "/system" in out and "Answer in words." in out
    assert "model.json" in out
    work = tmp_path / "stock-agent-ts"
    assert last_run(work, wheel_venv, "threads-ts") == {"threads-ts": "pass"}
