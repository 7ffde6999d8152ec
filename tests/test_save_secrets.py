"""save_case and credentials: refuse by default, redact consistently, or allow knowingly."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from threads_cases import AgentSpec, FakeSandbox, ScriptedModel, Thread, ToolSpec, run_case
from threads_cases.case.directory import computed_fingerprint, read_case_files
from threads_cases.reference.agent import BUILTIN_TOOLS
from threads_cases.reference.model import text_reply, tool_reply
from threads_cases.reference.runtime import Clock

KEY = "sk-ant-api03-" + "Zq9x" * 20  # fabricated, right shape
AWS = "AKIAIOSFODNN7EXAMPLE"


def _thread() -> tuple[Thread, str]:
    vault = ToolSpec(
        "vault",
        "Fetch a credential.",
        {"type": "object"},
        "external",
        "read",
        lambda inp: f"token={AWS}",
    )
    agent = AgentSpec("a", "m", "s", tools=(*BUILTIN_TOOLS.values(), vault))
    t = Thread.create(
        agent=agent,
        sandbox=FakeSandbox({".env": f"ANTHROPIC_API_KEY={KEY}\n"}),
        thread_id="secrets",
        clock=Clock(1_795_982_400_000),
    )
    at = t.events[-1]["event_id"]
    t.run_turn(
        f"use {KEY} please",
        ScriptedModel(
            [
                tool_reply(("t1", "read_file", {"path": ".env"}), ("t2", "vault", {})),
                text_reply(f"the key is {KEY}"),
            ]
        ),
    )
    return t, at


def _on_disk(path: Path, needle: str) -> bool:
    return any(needle.encode() in p.read_bytes() for p in path.rglob("*") if p.is_file())


def test_a_turn_holding_credentials_is_refused_by_default_naming_places_not_values(
    tmp_path: Path,
) -> None:
    t, at = _thread()
    r = t.save_case("c", at=at, dir=tmp_path)
    assert not r.ok and r.error is not None
    assert r.error.code == "secret_detected"
    for where in (
        "case.json: /input",
        "model.json: /replies/1/message/content/0/text",
        "stubs.json: /calls/0/result/content",
        "artifacts/",
    ):
        assert where in r.error.message
    assert KEY not in r.error.message and AWS not in r.error.message
    assert not (tmp_path / "c").exists()


def test_redaction_replaces_every_copy_and_the_case_still_passes(tmp_path: Path) -> None:
    t, at = _thread()
    r = t.save_case("c", at=at, dir=tmp_path, secrets="redact")
    assert r.ok, r.error
    case = tmp_path / "c"
    assert not _on_disk(case, KEY) and not _on_disk(case, AWS)
    text = b"".join(p.read_bytes() for p in case.rglob("*") if p.is_file()).decode(
        "utf-8", "replace"
    )
    assert "[REDACTED:anthropic_api_key:" in text and "[REDACTED:aws_access_key_id:" in text
    assert computed_fingerprint(read_case_files(case)) == r.value.fingerprint  # type: ignore[union-attr]
    result = run_case(case)
    assert (result.verdict, result.reasons) == ("pass", [])
    again = t.save_case("c", at=at, dir=tmp_path, secrets="redact")
    assert again.ok and again.value is not None and again.value.outcome == "unchanged"


def test_allow_secrets_saves_them_knowingly(tmp_path: Path) -> None:
    t, at = _thread()
    r = t.save_case("c", at=at, dir=tmp_path, secrets="allow")
    assert r.ok
    assert _on_disk(tmp_path / "c", KEY)


def test_an_unknown_mode_is_an_invalid_request(tmp_path: Path) -> None:
    t, at = _thread()
    r = t.save_case("c", at=at, dir=tmp_path, secrets="maybe")
    assert r.error is not None and r.error.code == "invalid_request"


def test_a_case_over_512_mib_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import threads_cases.case.save as save

    monkeypatch.setattr(save, "MAX_CASE_BYTES", 1000)  # the rule, without writing 512 MiB
    t, at = _thread()
    r = t.save_case("c", at=at, dir=tmp_path, secrets="allow")
    assert r.error is not None and r.error.code == "case_too_large"
    assert not (tmp_path / "c").exists()


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "threads_cases", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in proc.stderr
    return proc


def test_the_cli_refuses_redacts_or_allows(tmp_path: Path) -> None:
    t, at = _thread()
    t.write_log(tmp_path / "log.jsonl")
    t.write_artifacts(tmp_path / "arts")
    base = ["save", "log.jsonl", "--at", at, "--dir", "cases", "--artifacts", "arts"]
    refused = _cli(*base, "--name", "a", "--json", cwd=tmp_path)
    assert refused.returncode == 2
    import json

    err = json.loads(refused.stdout)
    assert err["code"] == "secret_detected" and KEY not in refused.stdout + refused.stderr
    assert not (tmp_path / "cases" / "a").exists()
    redacted = _cli(*base, "--name", "b", "--redact", cwd=tmp_path)
    assert redacted.returncode == 0, redacted.stderr
    assert not _on_disk(tmp_path / "cases" / "b", KEY)
    run = _cli("run", "cases/b", "--impl", "threads-py", "--format", "json", cwd=tmp_path)
    assert run.returncode == 0, run.stdout
    allowed = _cli(*base, "--name", "c", "--allow-secrets", cwd=tmp_path)
    assert allowed.returncode == 0 and _on_disk(tmp_path / "cases" / "c", KEY)
    both = _cli(*base, "--name", "d", "--redact", "--allow-secrets", "--json", cwd=tmp_path)
    assert both.returncode == 2 and json.loads(both.stdout)["code"] == "invalid_request"
