"""`save` checks its own work (spec/case-format.md 5.10): a case whose first run would not pass
is refused with replay_failed and nothing is written; --no-verify writes it and says so; the
save command's logic is the library's save_log; matchers are drafted when none are given."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import EXPECT, build_thread
from conftest import cli as shared_cli

from threads_cases.case.directory import CaseExpectation
from threads_cases.harness.run.runner import run_case
from threads_cases.save_log import save_log


def cli(cwd: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return shared_cli(*args, cwd=cwd)


NEVER = CaseExpectation(
    must=list(EXPECT.must), expect=[{"type": "tool_called", "data": {"name": "nope"}}]
)


def test_a_case_that_would_drift_on_an_expect_is_refused_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    t, at = build_thread()
    r = t.save_case("bad", at=at, expect=NEVER, dir=tmp_path)
    assert not r.ok and r.error is not None
    assert r.error.code == "replay_failed"
    assert "check expect (expect_unmatched)" in r.error.message
    assert "nearest event: seq" in r.error.message
    assert "--no-verify" in r.error.hint
    assert not (tmp_path / "bad").exists()
    assert [p.name for p in tmp_path.iterdir()] == []  # no temporary directory left


def test_no_verify_writes_the_failing_case_and_says_so(tmp_path: Path) -> None:
    t, at = build_thread()
    r = t.save_case("bad", at=at, expect=NEVER, dir=tmp_path, verify=False)
    assert r.ok and r.value is not None
    assert r.value.verified is False
    assert any("--no-verify" in w for w in r.warnings)
    assert run_case(tmp_path / "bad").verdict == "drifted"


def test_a_verified_case_passes_its_first_run(tmp_path: Path) -> None:
    t, at = build_thread()
    r = t.save_case("good", at=at, expect=EXPECT, dir=tmp_path)
    assert r.ok and r.value is not None and r.value.verified
    assert r.warnings == ()
    assert run_case(tmp_path / "good").verdict == "pass"


def test_save_log_drafts_matchers_when_none_are_given(tmp_path: Path) -> None:
    t, _ = build_thread()
    t.write_log(tmp_path / "t.jsonl")
    t.write_artifacts(tmp_path / "art")
    r = save_log(
        tmp_path / "t.jsonl", name="c", dir=tmp_path / "cases", turn=2, artifacts=tmp_path / "art"
    )
    assert r.ok, r.error
    assert any(w.startswith("drafted ") for w in r.warnings)
    meta = json.loads((tmp_path / "cases" / "c" / "case.json").read_text())
    assert {"type": "turn_completed", "data": {"stop_reason": "end_turn"}} in meta["expect"]["must"]
    assert meta["expect"]["expect"][0] == {"type": "tool_called", "data": {"name": "read_file"}}


def test_save_log_without_draft_warns_that_nothing_is_checked(tmp_path: Path) -> None:
    t, _ = build_thread()
    t.write_log(tmp_path / "t.jsonl")
    t.write_artifacts(tmp_path / "art")
    r = save_log(
        tmp_path / "t.jsonl",
        name="c",
        dir=tmp_path / "cases",
        turn=2,
        artifacts=tmp_path / "art",
        draft=False,
    )
    assert r.ok, r.error
    assert any("--no-draft" in w and "no_expectations" in w for w in r.warnings)
    meta = json.loads((tmp_path / "cases" / "c" / "case.json").read_text())
    assert meta["expect"] == {"must": [], "expect": []}


def test_cli_refuses_replay_failed_with_exit_2_and_no_verify_saves(tmp_path: Path) -> None:
    t, _ = build_thread()
    t.write_log(tmp_path / "t.jsonl")
    t.write_artifacts(tmp_path / "art")
    never = '{"type": "tool_called", "data": {"name": "nope"}}'
    args = (
        "save",
        "t.jsonl",
        "--turn",
        "2",
        "--artifacts",
        "art",
        "--dir",
        "cases",
        "--name",
        "c",
        "--expect",
        never,
    )
    p = cli(tmp_path, *args, "--json")
    assert p.returncode == 2, p.stderr
    assert json.loads(p.stdout)["code"] == "replay_failed"
    assert not (tmp_path / "cases" / "c").exists()
    p = cli(tmp_path, *args, "--no-verify")
    assert p.returncode == 0, p.stderr
    assert "verified: no (--no-verify)" in p.stdout
    assert "--no-verify" in p.stderr
    p = cli(
        tmp_path,
        "save",
        "t.jsonl",
        "--turn",
        "2",
        "--artifacts",
        "art",
        "--dir",
        "cases",
        "--name",
        "d",
    )
    assert p.returncode == 0, p.stderr
    assert "verified: yes" in p.stdout and "drafted " in p.stderr
    assert cli(tmp_path, "run", "--impl", "threads-py", "cases/d").returncode == 0


def test_request_hash_mismatches_are_reported_by_validate_and_save(tmp_path: Path) -> None:
    from threads_cases.core.log import encode_log

    t, _ = build_thread()
    events = [json.loads(json.dumps(e)) for e in t.events]
    req = [e for e in events if e["type"] == "model_requested"][-1]
    req["data"]["request_sha256"] = "0" * 64
    (tmp_path / "t.jsonl").write_bytes(encode_log(events))
    t.write_artifacts(tmp_path / "art")
    p = cli(tmp_path, "validate", "t.jsonl")
    assert p.returncode == 0, p.stderr
    assert f"warning[request_diverged]: t.jsonl:{req['seq'] + 1}: {req['event_id']}" in p.stderr
    p = cli(
        tmp_path,
        "save",
        "t.jsonl",
        "--turn",
        "2",
        "--artifacts",
        "art",
        "--dir",
        "cases",
        "--name",
        "c",
        "--json",
    )
    assert p.returncode == 0, p.stderr  # drifted only on request hashes: still saved
    doc = json.loads(p.stdout)
    assert [m["event_id"] for m in doc["request_mismatches"]] == [req["event_id"]]
    assert "line " in p.stderr and "request_diverged" in p.stderr
    assert run_case(tmp_path / "cases" / "c").reasons == ["request_diverged"]
