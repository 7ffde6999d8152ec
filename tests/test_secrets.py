"""Credential detection and stable redaction (threads_cases.case.secrets)."""

from __future__ import annotations

import re

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from secret_samples import SAMPLES

from threads_cases.case.secrets import (
    find_in_value,
    kinds,
    kinds_in,
    placeholder,
    redact_bytes,
    redact_text,
    redact_value,
    scan_bytes,
    scan_files,
)
from threads_cases.core.resources import spec_dir


def test_every_kind_of_text_rule_has_a_sample() -> None:
    assert set(kinds()) - set(SAMPLES) == {"api_key", "authorization"}  # field rules only
    assert len(kinds()) >= 60


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_each_kind_is_found_inside_surrounding_text(kind: str) -> None:
    text = f"config: {SAMPLES[kind]} (end)"
    assert kinds_in(text) == [kind]


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_redaction_replaces_the_value_with_a_stable_placeholder(kind: str) -> None:
    secret = SAMPLES[kind]
    out = redact_text(f"x {secret} y {secret}")
    found = __import__("re").findall(r"\[REDACTED:[0-9a-f]{16}\]", out)
    assert len(found) == 2 and found[0] == found[1]  # one placeholder, the same twice
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
    assert placeholder(s) == placeholder(s)
    assert placeholder(s) != placeholder(s + "x")
    assert (
        placeholder(s)
        == "[REDACTED:" + __import__("hashlib").sha256(s.encode()).hexdigest()[:16] + "]"
    )


def test_the_placeholder_depends_on_the_secret_alone_not_its_label() -> None:
    value = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    a = redact_text(f"aws_secret_access_key = {value}")
    b = redact_text(f'"SecretAccessKey": "{value}"')
    c = redact_value({"SecretAccessKey": value})
    assert placeholder(value) in a and placeholder(value) in b
    assert c == {"SecretAccessKey": placeholder(value)}


def test_findings_name_the_pointer_never_the_value() -> None:
    value = {
        "data": {"content": [{"type": "text", "text": SAMPLES["stripe_key"]}]},
        SAMPLES["npm_token"]: 1,
    }
    found = sorted(find_in_value(value))
    assert found == [
        ("npm_token", "/" + placeholder(SAMPLES["npm_token"])),  # a key is masked
        ("stripe_key", "/data/content/0/text"),
    ]
    files = {
        "log.threads-py.jsonl": b'{"a":"x"}\n{"b":"' + SAMPLES["jwt"].encode() + b'"}\n',
        "stubs.json": b'{"calls":[{"result":"' + SAMPLES["slack_token"].encode() + b'"}]}',
        "artifacts/ab": SAMPLES["private_key"].encode(),
    }
    got = {(f.kind, f.file, f.line, f.pointer, f.view) for f in scan_files(files)}
    assert got == {
        ("jwt", "log.threads-py.jsonl", 2, "/b", None),
        ("slack_token", "stubs.json", None, "/calls/0/result", None),
        ("private_key", "artifacts/ab", None, None, "utf-8"),
    }
    for f in scan_files(files):
        assert SAMPLES[f.kind][:12] not in f.where()


@pytest.mark.parametrize(
    ("encode", "view"),
    [
        (lambda t: t.encode("utf-16-le"), "utf-16le"),
        (lambda t: t.encode("utf-16-be"), "utf-16be"),
        (lambda t: b"\xff\xfe\x00" + t.encode("latin-1") + b"\xe9", "latin-1"),
    ],
)
def test_artifacts_are_scanned_in_every_common_encoding(encode: object, view: str) -> None:
    text = "key: " + SAMPLES["github_token"] + " and " + SAMPLES["password"]
    data = encode(text)  # type: ignore[operator]
    assert "github_token" in [k for v, k in scan_bytes(data) if v == view]
    out = redact_bytes(data)
    assert scan_bytes(out) == []
    assert redact_bytes(out) == out
    ph = placeholder(SAMPLES["github_token"]).encode(
        "utf-16-le" if view == "utf-16le" else "utf-16-be" if view == "utf-16be" else "latin-1"
    )
    assert ph in out


def test_the_secret_half_of_an_aws_pair_is_found_without_a_label() -> None:
    csv = (
        "Access key ID,Secret access key\n"
        "AKIAIOSFODNN7EXAMPLE,wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"
    )
    assert kinds_in(csv) == ["aws_access_key_id", "aws_secret_access_key"]
    # alone, a 40-character string is not a secret (a git sha, a base64 digest...)
    assert kinds_in("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY") == []
    sts = {
        "Credentials": {
            "AccessKeyId": "ASIAIOSFODNN7EXAMPLE",
            "SecretAccessKey": "x/y+z" * 8,
            "SessionToken": "IQoJb3JpZ2luX2Vj" * 5,
        }
    }
    assert sorted(k for k, _ in find_in_value(sts)) == ["aws_access_key_id", "secret", "token"]
    assert list(find_in_value(redact_value(sts))) == []


@settings(max_examples=50)  # drawn anew every run
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


def _rule_patterns() -> list[tuple[str, str, list[str]]]:
    doc = orjson.loads((spec_dir() / "secrets" / "rules.json").read_bytes())
    return [(r["kind"], r["pattern"], r["keywords"]) for r in doc["text_rules"]]


@pytest.mark.parametrize(("kind", "pattern", "keywords"), _rule_patterns())
def test_every_match_of_a_text_rule_holds_one_of_its_keywords(
    kind: str, pattern: str, keywords: list[str]
) -> None:
    """A rule skipped on a text without its keywords (spec/case-format.md 10.1) loses no
    finding: texts generated to match the pattern always hold a keyword, lower-cased."""
    assert keywords and all(k == k.lower() for k in keywords), kind
    rx = re.compile(pattern)

    @settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.from_regex(rx))
    def check(text: str) -> None:
        m = rx.search(text)
        assert m is not None
        assert any(k in m.group(0).lower() for k in keywords), (kind, m.group(0))

    check()


def test_a_long_text_without_keywords_is_scanned_in_one_pass() -> None:
    """4 MB of letters: every rule is skipped on its keywords (a rule tried at every position
    took seconds); the same text with a key in the middle is still found."""
    text = "a" * 4_000_000
    assert kinds_in(text) == []
    assert kinds_in(text[:2_000_000] + " " + SAMPLES["github_token"] + " " + text[:100]) == [
        "github_token"
    ]
