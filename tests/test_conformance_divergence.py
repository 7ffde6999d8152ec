"""The data-only first-divergence tests (spec/conformance/divergence/, spec/reports.md 7.4,
spec/conformance.md 2.8): a recorded turn's replies (with request records) against a real
replay (prefix, replayed events, replayed request hashes), and the divergence record both
implementations compute, compared as canonical bytes. ts/test/divergence.test.ts runs the
same files; tools/make_divergence_tests.py writes them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from threads_cases.case.requests import expand_records
from threads_cases.core.canonical import canonical_document
from threads_cases.core.strictjson import parse
from threads_cases.harness.check.divergence import replayed_requests, request_divergence

SUITE = Path(__file__).resolve().parent.parent / "spec" / "conformance" / "divergence"
TESTS = sorted(SUITE.glob("*.json"))


def test_the_suite_has_enough_tests() -> None:
    assert len(TESTS) >= 15


@pytest.mark.parametrize("path", TESTS, ids=[p.stem for p in TESTS])
def test_divergence_conformance(path: Path) -> None:
    test: dict[str, Any] = parse(path.read_bytes())
    assert set(test) == {"description", "prefix", "events", "requests", "replies", "divergence"}
    hit = request_divergence(
        expand_records(test["replies"]),
        [r["request_sha256"] for r in test["replies"]],
        replayed_requests(test["prefix"], test["events"]),
        test["requests"],
        test["events"],
    )
    got = None if hit is None else hit.to_json()
    assert canonical_document(got) == canonical_document(test["divergence"])
