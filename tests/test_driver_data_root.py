"""A driver finds the shared data (spec/dialects, spec/secrets/rules.json, schemas/) where the
client says (spec/driver-protocol.md 1.5): ``THREADS_CASES_DATA``, set for every driver the
client starts, read by both built-in implementations."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from threads_cases.core.resources import data_root
from threads_cases.protocol.driver_env import DATA_VARIABLE, client_environment

ROOT = Path(__file__).resolve().parent.parent


def test_the_client_names_its_data_for_every_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DATA_VARIABLE, raising=False)
    env = client_environment(extra={"X": "1"})
    assert env[DATA_VARIABLE] == str(data_root())
    assert (Path(env[DATA_VARIABLE]) / "spec" / "dialects").is_dir()
    assert (Path(env[DATA_VARIABLE]) / "schemas").is_dir()
    assert env["X"] == "1"


def test_a_folder_the_user_names_wins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(DATA_VARIABLE, str(tmp_path))
    assert client_environment()[DATA_VARIABLE] == str(tmp_path)


def _env(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("THREADS_CASES_")}
    return {**env, DATA_VARIABLE: str(folder)}


def test_the_python_runtime_reads_the_named_folder(tmp_path: Path) -> None:
    code = "from threads_cases.core.resources import spec_dir; print(spec_dir())"
    out = subprocess.run(
        [sys.executable, "-c", code], env=_env(tmp_path), capture_output=True, text=True
    )
    assert out.stdout.strip() == str(tmp_path.resolve() / "spec"), out.stderr


def test_the_typescript_runtime_reads_the_named_folder(tmp_path: Path) -> None:
    module = ROOT / "ts" / "dist" / "src" / "core" / "resources.js"
    assert module.exists(), "build the TypeScript implementation first: cd ts && npm run build"
    code = (
        f"import {{ specDir, schemasDir }} from {str(module.as_uri())!r};"
        "console.log(specDir()); console.log(schemasDir());"
    )
    out = subprocess.run(
        ["node", "--input-type=module", "-e", code],
        env=_env(tmp_path),
        capture_output=True,
        text=True,
    )
    assert out.stdout.split() == [str(tmp_path / "spec"), str(tmp_path / "schemas")], out.stderr
