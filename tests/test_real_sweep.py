"""tools/real_sweep.py, the check of issue 31 on recordings kept outside the repository: a
recording that imports, saves and passes on both implementations is ``ok``; one the importer
refuses is ``BAD`` and the exit status 1."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def sweep(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    tool = ROOT / "tools" / "real_sweep.py"
    return subprocess.run(
        [sys.executable, str(tool), *map(str, args)],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip


def test_a_recording_that_replays_is_ok_and_a_refused_one_bad(tmp_path: Path) -> None:
    good = ROOT / "examples" / "sessions" / "openhands-trajectory.json"
    p = sweep("openhands", good, "--keep", tmp_path / "good")
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.startswith("ok  openhands-trajectory.json: ")
    assert "threads-py=pass threads-ts=pass" in p.stdout
    assert p.stdout.rstrip().endswith(
        "1 of 1 recording(s) imported, saved and passed on every implementation"
    )
    (tmp_path / "empty.json").write_text("")
    p = sweep("openhands", tmp_path / "empty.json", "--keep", tmp_path / "bad")
    assert p.returncode == 1
    assert p.stdout.startswith("BAD empty.json: refused: error[")
