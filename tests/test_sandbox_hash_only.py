"""Sandbox files a log knows only by sha256 (spec/replay.md 2.3, case-format.md 3.7 and 5.9):
they are saved hash-only, a replay that reads one stops with sandbox_content_missing naming
the path, a turn that never reads them replays, and `save --sandbox DIR` supplies the bytes
(checked against the recorded sha256)."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import build_thread
from conftest import cli as shared_cli

from threads_cases.core.log import encode_log
from threads_cases.harness.run.runner import run_case
from threads_cases.reference.thread import Thread


def cli(cwd: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return shared_cli(*args, cwd=cwd)


NOTES = b"buy milk\n"


def hash_only_events() -> tuple[list[dict[str, Any]], str]:
    """The recorded thread with every sandbox_read's artifact dropped (``"artifact": null``,
    no artifact_added): todo.md (read before the fork point) and notes.txt (read by the
    turn) are known by hash only. Returns the events and the fork point."""
    t, at = build_thread()
    out: list[dict[str, Any]] = []
    for ev in t.events:
        if ev["type"] == "artifact_added" and ev["seq"] < 20:
            continue
        ev = json.loads(json.dumps(ev))
        if ev["type"] == "sandbox_read":
            ev["data"]["artifact"] = None
        ev["seq"] = len(out)
        out.append(ev)
    return out, at


def hash_only_thread() -> tuple[Thread, str]:
    events, at = hash_only_events()
    return Thread.open(events), at


def test_a_turn_reading_a_hash_only_file_is_refused_at_save(tmp_path: Path) -> None:
    t, at = hash_only_thread()
    r = t.save_case("c", at=at, dir=tmp_path)
    assert not r.ok and r.error is not None
    assert r.error.code == "replay_failed"
    assert "sandbox_content_missing" in r.error.message
    assert "notes.txt" in r.error.message
    # the remedy is the bytes (--sandbox DIR), not --no-verify (spec/reason-codes.md)
    assert "--sandbox DIR" in r.error.hint and "--no-verify" not in r.error.hint
    assert not (tmp_path / "c").exists()


def test_without_verify_the_replay_stops_with_sandbox_content_missing(tmp_path: Path) -> None:
    t, at = hash_only_thread()
    r = t.save_case("c", at=at, dir=tmp_path, verify=False)
    assert r.ok, r.error
    assert not list((tmp_path / "c").glob("artifacts/*"))  # nothing known by bytes
    for impl in ("threads-py", "threads-ts"):
        res = run_case(tmp_path / "c", impl)
        assert res.verdict == "fail", impl
        assert res.stop is not None
        assert res.stop["code"] == "sandbox_content_missing"
        assert res.stop["stop_key"] == "sandbox:notes.txt"
        assert '"notes.txt"' in res.stop["message"]


def test_sandbox_dir_supplies_the_bytes_and_unread_hash_only_files_replay(
    tmp_path: Path,
) -> None:
    t, at = hash_only_thread()
    (tmp_path / "box").mkdir()
    (tmp_path / "box" / "notes.txt").write_bytes(NOTES)  # todo.md stays hash-only
    r = t.save_case("c", at=at, dir=tmp_path / "cases", sandbox_dir=tmp_path / "box")
    assert r.ok, r.error
    arts = [p.name for p in (tmp_path / "cases" / "c").glob("artifacts/*")]
    assert arts == [hashlib.sha256(NOTES).hexdigest()]
    for impl in ("threads-py", "threads-ts"):
        assert run_case(tmp_path / "cases" / "c", impl).verdict == "pass", impl


def test_sandbox_bytes_that_do_not_match_the_recorded_hash_are_refused(tmp_path: Path) -> None:
    t, at = hash_only_thread()
    (tmp_path / "box").mkdir()
    (tmp_path / "box" / "notes.txt").write_bytes(b"something else\n")
    r = t.save_case("c", at=at, dir=tmp_path / "cases", sandbox_dir=tmp_path / "box")
    assert not r.ok and r.error is not None
    assert r.error.code == "invalid_request"
    assert "notes.txt" in r.error.message and "sha256" in r.error.message
    assert not (tmp_path / "cases" / "c").exists()


@pytest.mark.parametrize("supplied", [True, False])
def test_cli_save_with_and_without_sandbox(tmp_path: Path, supplied: bool) -> None:
    events, at = hash_only_events()
    (tmp_path / "t.jsonl").write_bytes(encode_log(events))
    args: list[str] = ["save", "t.jsonl", "--at", at, "--dir", "cases", "--name", "c", "--json"]
    if supplied:
        (tmp_path / "box").mkdir()
        (tmp_path / "box" / "notes.txt").write_bytes(NOTES)
        args += ["--sandbox", "box"]
    p = cli(tmp_path, *args)
    assert "Traceback" not in p.stderr
    if supplied:
        assert p.returncode == 0, p.stderr
        assert json.loads(p.stdout)["verified"] is True
        assert cli(tmp_path, "run", "--impl", "threads-py", "cases/c").returncode == 0
    else:
        assert p.returncode == 2
        doc = json.loads(p.stdout)
        assert doc["code"] == "replay_failed" and "notes.txt" in doc["message"]


def test_cli_save_replay_failed_on_missing_bytes_hints_at_sandbox(tmp_path: Path) -> None:
    events, at = hash_only_events()
    (tmp_path / "t.jsonl").write_bytes(encode_log(events))
    p = cli(tmp_path, "save", "t.jsonl", "--at", at, "--dir", "cases", "--name", "c")
    assert p.returncode == 2, p.stderr
    assert "error[replay_failed]" in p.stderr and "sandbox_content_missing" in p.stderr
    hint = [ln for ln in p.stderr.splitlines() if ln.strip().startswith("hint:")]
    assert len(hint) == 1 and "--sandbox DIR" in hint[0] and "--no-verify" not in hint[0]


def test_cli_save_sandbox_naming_a_file_says_it_is_not_a_folder(tmp_path: Path) -> None:
    events, at = hash_only_events()
    (tmp_path / "t.jsonl").write_bytes(encode_log(events))
    (tmp_path / "notes.md").write_bytes(NOTES)
    args = ["save", "t.jsonl", "--at", at, "--dir", "cases", "--name", "c"]
    p = cli(tmp_path, *args, "--sandbox", "notes.md")
    assert p.returncode == 2, p.stderr
    assert "error[invalid_request]: --sandbox notes.md is not a folder" in p.stderr
    assert "does not exist" not in p.stderr and "not one of the files" in p.stderr
    p = cli(tmp_path, *args, "--sandbox", "nope")
    assert "--sandbox folder nope does not exist" in p.stderr
    assert not (tmp_path / "cases").exists()
