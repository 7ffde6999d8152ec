"""save_case and credentials: refuse by default, redact consistently, or allow knowingly."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import cli

from threads_cases import AgentSpec, FakeSandbox, ScriptedModel, Thread, ToolSpec, run_case
from threads_cases.case.directory import computed_fingerprint, read_case_files
from threads_cases.case.secrets import placeholder, scan_files
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
    assert "artifacts/" in r.error.message and "model.json: /replies/" in r.error.message
    assert "more)" in r.error.message  # at most five places are named
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
    assert placeholder(KEY) in text and placeholder(AWS) in text
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
    return cli(*args, cwd=cwd)


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


# --------------------------------------------------------------------------- no leaks
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
STS = (
    '{"Credentials": {"AccessKeyId": "ASIAIOSFODNN7EXAMPLE", '
    f'"SecretAccessKey": "{SECRET_KEY}", "SessionToken": "{"IQoJb3JpZ2luX2Vj" * 8}"}}}}'
)


def _leaky_thread() -> tuple[Thread, str]:
    """A turn that reads a UTF-16 file, a Latin-1 file and an STS answer with both halves
    of an AWS key pair, and sends a password as a tool input field."""
    sts = ToolSpec("sts", "Assume a role.", {"type": "object"}, "external", "read", lambda i: STS)
    login = ToolSpec("login", "Log in.", {"type": "object"}, "external", "write", lambda i: "ok")
    agent = AgentSpec("a", "m", "s", tools=(*BUILTIN_TOOLS.values(), sts, login))
    files: dict[str, bytes | str] = {
        "creds.txt": ("\ufeffgithub: ghp_" + "a" * 36 + "\n").encode("utf-16-le"),
        "legacy.ini": b"caf\xe9 password = 'hunter22'\n",
    }
    t = Thread.create(
        agent=agent, sandbox=FakeSandbox(files), thread_id="leaky", clock=Clock(1_795_982_400_000)
    )
    at = t.events[-1]["event_id"]
    t.run_turn(
        "set things up",
        ScriptedModel(
            [
                tool_reply(
                    ("t1", "read_file", {"path": "creds.txt"}),
                    ("t2", "read_file", {"path": "legacy.ini"}),
                    ("t3", "sts", {}),
                    ("t4", "login", {"user": "ana", "password": "correct horse battery"}),
                ),
                text_reply("done"),
            ]
        ),
    )
    return t, at


def test_redaction_covers_other_encodings_and_both_halves_of_a_pair(tmp_path: Path) -> None:
    t, at = _leaky_thread()
    refused = t.save_case("c", at=at, dir=tmp_path)
    assert refused.error is not None and refused.error.code == "secret_detected"
    for where in ("as utf-16le", "as latin-1", "password"):
        assert where in refused.error.message, refused.error.message
    raw = t.save_case("raw", at=at, dir=tmp_path, secrets="allow")
    assert raw.ok, raw.error
    found = {(f.kind, f.view) for f in scan_files(read_case_files(tmp_path / "raw"))}
    assert {("github_token", "utf-16le"), ("password", "latin-1")} <= found
    assert {k for k, _ in found} >= {"aws_access_key_id", "aws_secret_access_key", "password"}
    r = t.save_case("c", at=at, dir=tmp_path, secrets="redact")
    assert r.ok, r.error
    case = tmp_path / "c"
    for needle in (SECRET_KEY, "ASIAIOSFODNN7EXAMPLE", "correct horse", "hunter22"):
        assert not _on_disk(case, needle), needle
    assert not any(
        ("ghp_" + "a" * 36).encode("utf-16-le") in p.read_bytes()
        for p in case.rglob("*")
        if p.is_file()
    )
    assert scan_files(read_case_files(case)) == []
    # the same secret has one placeholder wherever it is, whatever its label
    text = b"".join(p.read_bytes() for p in case.rglob("*.json*")).decode()
    assert placeholder(SECRET_KEY) in text and placeholder("correct horse battery") in text
    result = run_case(case)
    # the UTF-16 file is not UTF-8, so read_file answered with its size, which redaction
    # changes: the replay then asks the model a slightly different request (spec: Secrets)
    assert (result.verdict, result.reasons) == ("drifted", ["request_diverged"])


def test_a_redaction_that_would_leave_a_secret_refuses_instead(tmp_path: Path) -> None:
    t, at = _thread()
    r = t.save_case(
        "c",
        at=at,
        dir=tmp_path,
        secrets="redact",
        expect={"must": [{"type": "user_message", "data": {"content": f"use {KEY} please"}}]},
    )
    assert r.error is not None and r.error.code in ("secret_detected", "invalid_request")
    assert KEY not in r.error.message
    assert not (tmp_path / "c").exists()


def test_a_secret_in_an_object_key_is_masked_in_the_message(tmp_path: Path) -> None:
    t = Thread.create(
        agent=AgentSpec("a", "m", "s", tools=tuple(BUILTIN_TOOLS.values())),
        sandbox=FakeSandbox({}),
        thread_id="keys",
        clock=Clock(1_795_982_400_000),
    )
    at = t.events[-1]["event_id"]
    t.run_turn("hi", ScriptedModel([tool_reply(("t1", "nope", {KEY: 1})), text_reply("ok")]))
    r = t.save_case("c", at=at, dir=tmp_path)
    assert r.error is not None and r.error.code == "secret_detected"
    assert KEY not in r.error.message and KEY[:20] not in r.error.message
    assert placeholder(KEY) in r.error.message


def test_the_cli_redacts_utf16_and_paired_secrets_on_real_files(tmp_path: Path) -> None:
    import json

    t, at = _leaky_thread()
    t.write_log(tmp_path / "log.jsonl")
    t.write_artifacts(tmp_path / "arts")
    base = ["save", "log.jsonl", "--at", at, "--dir", "cases", "--artifacts", "arts"]
    refused = _cli(*base, "--name", "a", "--json", cwd=tmp_path)
    assert refused.returncode == 2 and json.loads(refused.stdout)["code"] == "secret_detected"
    assert SECRET_KEY not in refused.stdout + refused.stderr
    done = _cli(*base, "--name", "b", "--redact", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    for needle in (SECRET_KEY, "correct horse", "hunter22"):
        assert not _on_disk(tmp_path / "cases" / "b", needle)
    run = _cli("run", "cases/b", "--impl", "threads-py", "--format", "json", cwd=tmp_path)
    assert run.returncode == 0, run.stdout
    assert '"verdict":"drifted"' in run.stdout.replace(" ", "")


# a service-account file as it sits on disk: the private key's newlines are backslash-n
KEY_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" + "q1W2e3R4t5Y6" * 6
SERVICE_ACCOUNT = (
    '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n'
    + KEY_BODY[:64]
    + "\\n"
    + KEY_BODY[64:]
    + '\\n-----END PRIVATE KEY-----\\n", "client_email": "x@demo.example"}'
)


@pytest.mark.parametrize("encoding", ["utf-8", "latin-1", "utf-16-le"])
def test_redact_removes_a_backslash_n_private_key_whole_everywhere(
    tmp_path: Path, encoding: str
) -> None:
    """spec/case-format.md 10.2: the key body never survives its header, in a message, an
    object key, a model reply and an artifact in each common encoding."""
    data = ("caf\u00e9 " if encoding == "latin-1" else "") + SERVICE_ACCOUNT
    t = Thread.create(
        agent=AgentSpec("a", "m", "s", tools=tuple(BUILTIN_TOOLS.values())),
        sandbox=FakeSandbox({"sa.json": data.encode(encoding)}),
        thread_id="sa",
        clock=Clock(1_795_982_400_000),
    )
    at = t.events[-1]["event_id"]
    t.run_turn(
        f"here it is: {SERVICE_ACCOUNT}",
        ScriptedModel(
            [
                tool_reply(
                    ("t1", "read_file", {"path": "sa.json"}), ("t2", "x", {SERVICE_ACCOUNT: 1})
                ),
                text_reply(f"got {SERVICE_ACCOUNT}"),
            ]
        ),
    )
    refused = t.save_case("c", at=at, dir=tmp_path)
    assert refused.error is not None and refused.error.code == "secret_detected"
    assert KEY_BODY[:20] not in refused.error.message
    r = t.save_case("c", at=at, dir=tmp_path, secrets="redact")
    assert r.ok, r.error
    case = tmp_path / "c"
    for piece in (KEY_BODY[:64], KEY_BODY[64:], KEY_BODY[10:30]):
        assert not _on_disk(case, piece), piece
        assert not any(
            piece.encode("utf-16-le") in p.read_bytes() for p in case.rglob("*") if p.is_file()
        )
    assert scan_files(read_case_files(case)) == []
