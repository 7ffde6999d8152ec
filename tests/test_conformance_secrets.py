"""The data-only secrets tests (spec/conformance/secrets/, spec/conformance.md 2.6): each
input's findings and redacted output, exactly. ts/test/secrets.test.ts runs the same files."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from threads_cases.case.secrets import (
    find_in_value,
    kinds_in,
    redact_bytes,
    redact_text,
    redact_value,
    scan_bytes,
)
from threads_cases.core.strictjson import parse

ROOT = Path(__file__).resolve().parent.parent / "spec" / "conformance" / "secrets"
TESTS = sorted(ROOT.glob("*.json"))


def test_the_suite_has_enough_tests() -> None:
    assert len(TESTS) >= 300


@pytest.mark.parametrize("path", TESTS, ids=[p.stem for p in TESTS])
def test_secrets_conformance(path: Path) -> None:
    t: dict[str, Any] = parse(path.read_bytes())
    assert set(t) - {"description", "findings"} in (
        {"text", "redacted"},
        {"value", "redacted"},
        {"bytes_base64", "redacted_base64"},
    )
    if "text" in t:
        assert kinds_in(t["text"]) == t["findings"]
        assert redact_text(t["text"]) == t["redacted"]
        assert kinds_in(t["redacted"]) == []  # all or nothing
    elif "value" in t:
        found = [{"kind": k, "pointer": p} for k, p in find_in_value(t["value"])]
        assert found == t["findings"]
        assert redact_value(t["value"]) == t["redacted"]
        assert list(find_in_value(t["redacted"])) == []
    else:
        data = base64.b64decode(t["bytes_base64"])
        assert [{"kind": k, "view": v} for v, k in scan_bytes(data)] == t["findings"]
        out = redact_bytes(data)
        assert base64.b64encode(out).decode() == t["redacted_base64"]
        assert scan_bytes(out) == []
