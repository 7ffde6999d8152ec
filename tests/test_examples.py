"""The examples and the README's Python snippet run as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def test_record_thread_writes_a_log_that_saves_and_replays(tmp_path: Path) -> None:
    at = run(str(ROOT / "examples" / "record_thread.py"), "out", cwd=tmp_path).stdout.strip()
    assert (tmp_path / "out" / "thread.jsonl").is_file()
    save = subprocess.run(
        [
            sys.executable,
            "-m",
            "threads_cases",
            "save",
            "out/thread.jsonl",
            "--at",
            at,
            "--name",
            "why-blocked",
            "--dir",
            "cases",
            "--artifacts",
            "out/artifacts",
            "--json",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert save.returncode == 0, save.stdout + save.stderr
    runp = subprocess.run(
        [
            sys.executable,
            "-m",
            "threads_cases",
            "run",
            "cases",
            "--impl",
            "threads-py",
            "--format",
            "json",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert runp.returncode == 0 and '"verdict":"pass"' in runp.stdout


def test_record_thread_prints_the_save_command_that_works(tmp_path: Path) -> None:
    """The example says how to save what it wrote (the command, run as printed, saves the
    case), and `save` finds the artifacts/ folder beside the log without --artifacts."""
    import shlex

    proc = run(str(ROOT / "examples" / "record_thread.py"), "out", cwd=tmp_path)
    line = next(x for x in proc.stderr.splitlines() if x.startswith("save it: "))
    argv = shlex.split(line.removeprefix("save it: "))
    assert argv[:2] == ["threads-cases", "save"] and "--artifacts" in argv
    cli = [sys.executable, "-m", "threads_cases"]
    saved = subprocess.run(
        [*cli, *argv[1:]], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert saved.returncode == 0, saved.stderr
    at = proc.stdout.strip()
    beside = [*cli, "save", "out/thread.jsonl", "--at", at, "--name", "b", "--dir", "cases"]
    saved = subprocess.run(beside, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert saved.returncode == 0, saved.stderr  # out/artifacts/ found beside the log


def test_replaying_your_own_agent_shows_the_drift(tmp_path: Path) -> None:
    out = run(str(ROOT / "examples" / "replay_my_agent.py"), cwd=tmp_path).stdout
    assert "recorded agent: pass []" in out
    assert "my agent:       drifted ['request_diverged']" in out


def test_the_readme_python_snippet_runs(tmp_path: Path) -> None:
    text = (ROOT / "README.md").read_text("utf-8")
    block = re.search(r"## Record a thread.*?```python\n(.*?)```", text, re.S)
    assert block is not None
    (tmp_path / "snippet.py").write_text(block.group(1))
    out = run("snippet.py", cwd=tmp_path).stdout
    assert out.strip().endswith("pass")


def _fails(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def test_the_examples_report_errors_as_the_cli_does(tmp_path: Path) -> None:
    """What users copy reports a bad input with its reason code, file, message and hint and
    the code's exit status, never a traceback."""
    replay = str(ROOT / "examples" / "replay_my_agent.py")
    missing = _fails(replay, "nonexist", cwd=tmp_path)
    assert missing.returncode == 2  # as `threads-cases run nonexist` refuses it
    assert missing.stderr.splitlines() == [
        "error[invalid_request]: nonexist: no such file or folder",
        "  hint: expected a case directory (a folder holding case.json)",
    ]
    case = tmp_path / "broken"
    case.mkdir()
    (case / "case.json").write_text('{"format": 2,}\n')
    broken = _fails(replay, "broken", cwd=tmp_path)
    assert broken.returncode == 1
    assert broken.stderr.startswith("error[case_invalid]: broken/case.json:1: not valid JSON")
    (tmp_path / "afile").write_text("")
    record = _fails(str(ROOT / "examples" / "record_thread.py"), "afile/out", cwd=tmp_path)
    assert record.returncode == 1
    assert record.stderr.startswith("error[io_error]: afile/out: cannot write the thread: ")
    assert "\n  hint: " in record.stderr
