"""Files written atomically get the permissions any other file would (core/atomic.py): a new
one 0o666 less the umask (never tempfile.mkstemp's 0o600: a baseline is committed, a report
shared), a rewritten one the mode it had; every writer of the package, unit and CLI."""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import CONFORMANCE, build_thread, cli

from threads_cases.core.atomic import create_beside, write_atomic
from threads_cases.core.errors import CaseError
from threads_cases.harness.baseline.file import Entry, write_baseline
from threads_cases.harness.report.suite import write_jsonl
from threads_cases.importers import import_to_file

IMPORTER_SAMPLES = Path(__file__).resolve().parent / "importers"


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_file_gets_the_umask_and_a_rewrite_keeps_its_mode(
    tmp_path: Path, umask_022: None
) -> None:
    target = tmp_path / "f.json"
    write_atomic(target, b"one")
    assert mode(target) == 0o644 and target.read_bytes() == b"one"
    target.chmod(0o640)
    write_atomic(target, b"two")
    assert mode(target) == 0o640 and target.read_bytes() == b"two"
    assert [p.name for p in tmp_path.iterdir()] == ["f.json"]  # no temporary file left
    fh, tmp = create_beside(target)
    fh.close()
    assert mode(tmp) == 0o640 and tmp.name.startswith(".f.json.")


def test_an_imported_log_and_a_written_log_get_the_umask_and_keep_a_mode(
    tmp_path: Path, umask_022: None
) -> None:
    sample = IMPORTER_SAMPLES / "claude-code-malformed.jsonl"
    out = tmp_path / "imported.jsonl"
    import_to_file("claude-code", sample, out)
    assert mode(out) == 0o644
    out.chmod(0o600)
    old = out.read_bytes()
    with pytest.raises(CaseError):  # a refused import leaves the log and no temporary file
        import_to_file("claude-code", sample, out, strict=True)
    assert out.read_bytes() == old and mode(out) == 0o600
    import_to_file("claude-code", sample, out)
    assert mode(out) == 0o600
    thread, _ = build_thread()
    log = tmp_path / "log.jsonl"
    thread.write_log(log)
    assert mode(log) == 0o644
    log.chmod(0o640)
    thread.write_log(log)
    assert mode(log) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["imported.jsonl", "log.jsonl"]


def test_write_baseline_is_0644_under_umask_022_and_keeps_a_mode(
    tmp_path: Path, umask_022: None
) -> None:
    target = tmp_path / "baseline.json"
    assert write_baseline(target, [Entry("a", "threads-py", "why")])
    assert mode(target) == 0o644
    target.chmod(0o664)
    assert write_baseline(target, [Entry("b", "threads-py", "why")])
    assert mode(target) == 0o664


def test_a_rewritten_report_keeps_its_mode(tmp_path: Path, umask_022: None) -> None:
    target = tmp_path / "r.jsonl"
    write_jsonl([{"type": "x"}], target)
    assert mode(target) == 0o644
    target.chmod(0o600)
    write_jsonl([{"type": "y"}], target)
    assert mode(target) == 0o600


def test_baseline_update_and_prune_write_a_committable_file(tmp_path: Path) -> None:
    shutil.copytree(CONFORMANCE / "reads-notes", tmp_path / "cases" / "reads-notes")
    old = os.umask(0o022)  # a real subprocess inherits it (process=True)
    try:
        p = cli("baseline", "update", "cases", "--impl", "threads-py", cwd=tmp_path, process=True)
        assert p.returncode == 0, p.stderr
        target = tmp_path / ".threads-cases" / "baseline.json"
        assert mode(target) == 0o644
        write_baseline(target, [Entry("reads-notes", "threads-py", "passes now: stale")])
        target.chmod(0o664)
        p = cli("baseline", "prune", "cases", "--impl", "threads-py", cwd=tmp_path, process=True)
        assert p.returncode == 0 and "1 removed" in p.stdout, p.stdout + p.stderr
        assert mode(target) == 0o664
        p = cli(
            "run",
            "cases",
            "--impl",
            "threads-py",
            "--junit",
            "new/j.xml",
            cwd=tmp_path,
            process=True,
        )
        assert p.returncode == 0, p.stderr
        assert mode(tmp_path / "new" / "j.xml") == 0o644  # missing folders are created
    finally:
        os.umask(old)
