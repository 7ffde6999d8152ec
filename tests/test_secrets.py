"""Credential detection and stable redaction (threads_cases.case.secrets)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from threads_cases.case.secrets import (
    PATTERNS,
    find_in_value,
    kinds_in,
    placeholder,
    redact_text,
    redact_value,
    scan_files,
)

# Fabricated values of the right shape; none of them is a real credential.
SAMPLES = {
    "anthropic_api_key": "sk-ant-api03-" + "a1B2" * 20,
    "openai_api_key": "sk-proj-" + "Ab3d" * 12,
    "aws_access_key_id": "AKIAIOSFODNN7EXAMPLE",
    "aws_secret_access_key": "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "github_token": "ghp_" + "a" * 36,
    "gitlab_token": "glpat-" + "x" * 20,
    "google_api_key": "AIza" + "B" * 35,
    "google_oauth_token": "ya29." + "c" * 30,
    "slack_token": "xoxb-1234567890-abcdef",
    "stripe_key": "sk_live_" + "d" * 24,
    "huggingface_token": "hf_" + "e" * 34,
    "npm_token": "npm_" + "f" * 36,
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "bearer_token": "Bearer abcdefghijklmnopqrstuvwxyz012345",
    "url_credentials": "postgres://admin:hunter22@db.internal/app",
    "private_key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n"
    "-----END RSA PRIVATE KEY-----",
}


def test_every_pattern_has_a_sample() -> None:
    assert set(SAMPLES) == set(PATTERNS)
    assert len(PATTERNS) >= 12


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_each_kind_is_found_inside_surrounding_text(kind: str) -> None:
    text = f"config: {SAMPLES[kind]} (end)"
    assert kinds_in(text) == [kind]


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_redaction_replaces_the_value_with_a_stable_placeholder(kind: str) -> None:
    secret = SAMPLES[kind]
    out = redact_text(f"x {secret} y {secret}")
    assert secret not in out
    assert out.count(f"[REDACTED:{kind}:") == 2
    assert redact_text(out) == out  # placeholders are not secrets themselves
    assert kinds_in(out) == []


@pytest.mark.parametrize(
    "text",
    [
        "sk-ant is short",
        "the word bearer alone",
        "tasks like this",
        "AKIA-not-a-key",
        "https://example.com/path",
        "eyJ.only.dots",
        "hf_short",
        "ghp_short",
    ],
)
def test_ordinary_text_is_not_a_finding(text: str) -> None:
    assert kinds_in(text) == []


def test_the_same_secret_always_gives_the_same_placeholder() -> None:
    s = SAMPLES["github_token"]
    assert placeholder("github_token", s) == placeholder("github_token", s)
    assert placeholder("github_token", s) != placeholder("github_token", s + "x")


def test_findings_name_the_pointer_never_the_value() -> None:
    value = {
        "data": {"content": [{"type": "text", "text": SAMPLES["stripe_key"]}]},
        SAMPLES["npm_token"]: 1,
    }
    found = sorted(find_in_value(value))
    assert found == [
        ("npm_token", "/" + SAMPLES["npm_token"]),
        ("stripe_key", "/data/content/0/text"),
    ]
    files = {
        "log.threads-py.jsonl": b'{"a":"x"}\n{"b":"' + SAMPLES["jwt"].encode() + b'"}\n',
        "stubs.json": b'{"calls":[{"result":"' + SAMPLES["slack_token"].encode() + b'"}]}',
        "artifacts/ab": SAMPLES["private_key"].encode(),
    }
    got = {(f.kind, f.file, f.line, f.pointer) for f in scan_files(files)}
    assert got == {
        ("jwt", "log.threads-py.jsonl", 2, "/b"),
        ("slack_token", "stubs.json", None, "/calls/0/result"),
        ("private_key", "artifacts/ab", None, None),
    }
    for f in scan_files(files):
        assert SAMPLES[f.kind][:12] not in f.where()


@given(
    st.recursive(
        st.text() | st.integers() | st.booleans() | st.none(),
        lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(), c, max_size=4),
        max_leaves=20,
    )
)
def test_redaction_keeps_the_shape_and_is_idempotent(value: object) -> None:
    once = redact_value(value)
    assert redact_value(once) == once
    assert list(find_in_value(once)) == []
