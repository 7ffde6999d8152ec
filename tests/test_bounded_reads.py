"""Every read is bounded before it starts (issue 19 section 1; spec/case-format.md, "Reading
files"): sparse giant files, FIFOs, devices, symlinks and over-long names get a reason code at
once from every command, never a hang, a traceback or a read into memory.

The timeouts only catch hangs; nothing here asserts how long a command took.
"""

from __future__ import annotations

import os
import runpy
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import cli

from threads_cases.core.errors import CaseError
from threads_cases.core.files import MAX_CASE_BYTES, MAX_LOG_BYTES, read_regular

ROOT = Path(__file__).resolve().parent.parent
CASE = ROOT / "spec" / "conformance" / "cases" / "reads-notes"
SAMPLE_LOG = ROOT / "tests" / "data" / "sample-thread.jsonl"
HANG = 120  # seconds: only a hang gets near this

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")


def run(cwd: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return cli(*args, cwd=cwd, timeout=HANG)


def sparse(path: Path, size: int) -> Path:
    with open(path, "wb") as fh:
        fh.truncate(size)
    return path


def fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def code_of(p: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in p.stderr, p.stderr
    assert "internal_error" not in p.stderr, p.stderr
    line = next((ln for ln in p.stderr.splitlines() if ln.startswith("error[")), "")
    assert line, f"no error line in: {p.stderr!r} {p.stdout!r}"
    return line[len("error[") : line.index("]")]


# ---------------------------------------------------------------------- the library


def test_read_regular_refuses_special_files_and_sizes(tmp_path: Path) -> None:
    big = sparse(tmp_path / "big", 2 * 1024**3)
    with pytest.raises(CaseError) as exc:
        read_regular(big, code="case_invalid", limit=MAX_CASE_BYTES, limit_code="case_too_large")
    assert exc.value.code == "case_too_large"
    with pytest.raises(CaseError) as exc:
        read_regular(fifo(tmp_path / "p"), code="x", limit=10, special_code="case_invalid")
    assert exc.value.code == "case_invalid"
    assert "FIFO" in exc.value.message
    with pytest.raises(CaseError) as exc:
        read_regular("/dev/zero", code="x", limit=10)
    assert exc.value.code == "invalid_request"
    assert "character device" in exc.value.message
    target = tmp_path / "t"
    target.write_text("{}")
    (tmp_path / "link").symlink_to(target)
    assert read_regular(tmp_path / "link", code="x", limit=10) == b"{}"
    with pytest.raises(CaseError) as exc:
        read_regular(tmp_path / "link", code="case_invalid", limit=10, follow_symlinks=False)
    assert exc.value.code == "case_invalid"
    with pytest.raises(CaseError) as exc:
        read_regular(tmp_path / ("n" * 300), code="x", limit=10)
    assert exc.value.code == "invalid_request"


def test_the_log_limit_is_above_the_memory_benchmark_and_below_two_gigabytes() -> None:
    assert 1100 * 1024**2 < MAX_LOG_BYTES < 2 * 10**9


# ---------------------------------------------------------------------- logs and transcripts

LOG_COMMANDS = [
    ("reduce",),
    ("validate",),
    ("turns",),
    ("import", "claude-code"),
    ("import", "codex"),
]


@pytest.mark.parametrize("command", LOG_COMMANDS, ids=" ".join)
def test_a_sparse_two_gigabyte_log_is_refused_before_reading(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    big = sparse(tmp_path / "big.jsonl", 2 * 1024**3)
    extra = ["-o", str(tmp_path / "out.jsonl")] if command[0] == "import" else []
    p = run(tmp_path, *command, big, *extra)
    assert p.returncode != 0
    assert code_of(p) in ("log_invalid", "import_invalid", "io_error", "case_too_large")
    assert "over the limit" in p.stderr
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize("command", LOG_COMMANDS, ids=" ".join)
@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_fifo_or_device_log_is_refused_not_hung(
    tmp_path: Path, command: tuple[str, ...], kind: str
) -> None:
    source = fifo(tmp_path / "log.jsonl") if kind == "fifo" else Path("/dev/zero")
    extra = ["-o", str(tmp_path / "out.jsonl")] if command[0] == "import" else []
    p = run(tmp_path, *command, source, *extra)
    assert p.returncode in (1, 2), p.stderr  # validate reports it as a problem (exit 1)
    assert code_of(p) == "invalid_request"
    assert "not a regular file" in p.stderr


@pytest.mark.parametrize("command", [("reduce",), ("validate",), ("turns",)], ids=" ".join)
def test_a_path_component_over_255_bytes_is_invalid_request(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    p = run(tmp_path, *command, tmp_path / ("n" * 300 + ".jsonl"))
    assert p.returncode in (1, 2), p.stderr
    assert code_of(p) == "invalid_request"


# ---------------------------------------------------------------------- files inside a case


def _case(tmp_path: Path) -> Path:
    dest = tmp_path / "cases" / CASE.name
    shutil.copytree(CASE, dest)
    return dest


@pytest.mark.parametrize("command", ["show", "validate", "run", "diff", "fmt", "list"])
def test_a_fifo_model_json_is_refused_by_every_case_command(tmp_path: Path, command: str) -> None:
    case = _case(tmp_path)
    (case / "model.json").unlink()
    fifo(case / "model.json")
    args: list[str | Path] = [command, case]
    if command == "diff":
        args = ["diff", case, CASE]
    elif command == "fmt":
        args = ["fmt", "--check", case]
    elif command == "run":
        args = ["run", case, "--impl", "threads-py", "--format", "json"]
    p = run(tmp_path, *args)
    assert p.returncode != 0, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    assert "internal_error" not in p.stderr + p.stdout
    assert "case_invalid" in p.stderr + p.stdout


@pytest.mark.parametrize("command", ["show", "validate", "run"])
def test_a_sparse_giant_artifact_in_a_case_is_case_too_large(tmp_path: Path, command: str) -> None:
    case = _case(tmp_path)
    art = next((case / "artifacts").iterdir())
    art.unlink()
    sparse(art, 2 * 1024**3)
    args: list[str | Path] = [command, case]
    if command == "run":
        args = ["run", case, "--impl", "threads-py", "--format", "json"]
    p = run(tmp_path, *args)
    assert p.returncode != 0
    assert "Traceback" not in p.stderr
    assert "case_too_large" in p.stderr + p.stdout


def test_an_unread_giant_file_gives_no_false_fingerprint_stale(tmp_path: Path) -> None:
    """A file left unread makes the fingerprint unknowable: only the real problem is listed."""
    from threads_cases.case.loader import inspect_case

    case = _case(tmp_path)
    art = next((case / "artifacts").iterdir())
    art.unlink()
    sparse(art, 2 * 1024**3)
    _, problems = inspect_case(case)
    codes = [x.code for x in problems]
    assert "case_too_large" in codes
    assert "fingerprint_stale" not in codes


def test_a_symlinked_case_json_is_case_invalid_for_validate(tmp_path: Path) -> None:
    case = _case(tmp_path)
    real = tmp_path / "real-case.json"
    (case / "case.json").rename(real)
    (case / "case.json").symlink_to(real)
    p = run(tmp_path, "validate", case)
    assert p.returncode != 0
    assert "Traceback" not in p.stderr
    assert "internal_error" not in p.stderr + p.stdout
    assert "case_invalid" in p.stderr + p.stdout


def test_run_supply_from_a_fifo_is_refused(tmp_path: Path) -> None:
    case = _case(tmp_path)
    p = run(tmp_path, "run", case, "--impl", "threads-py", "--supply", fifo(tmp_path / "s.json"))
    assert p.returncode == 2, p.stderr
    assert code_of(p) == "invalid_request"


def test_save_reads_only_the_artifacts_the_log_refers_to(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An unreferenced 2 GB sparse file and a FIFO in --artifacts are never opened."""
    out = tmp_path / "demo"
    # the example records its thread in process (the save below is the real CLI)
    runpy.run_path(str(ROOT / "examples" / "record_thread.py"))["main"](out)
    fork = capsys.readouterr().out.strip().split()[-1]
    sparse(out / "artifacts" / ("f" * 64), 2 * 1024**3)
    fifo(out / "artifacts" / ("e" * 64))
    p = run(
        tmp_path,
        "save",
        out / "thread.jsonl",
        "--at",
        fork,
        "--name",
        "saved",
        "--dir",
        tmp_path / "cases",
        "--artifacts",
        out / "artifacts",
    )
    assert p.returncode == 0, p.stderr
    assert not (tmp_path / "cases" / "saved" / "artifacts" / ("f" * 64)).exists()
