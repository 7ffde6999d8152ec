"""Runs the data-only matcher conformance cases of spec/conformance/match/ (spec/matchers.md,
section 10) through the Python implementation."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from threads_cases import canonical_document, parse_json
from threads_cases.core.canonical import canonical_line
from threads_cases.core.matchers import (
    differences,
    find_all,
    match_in_order,
    matches,
    nearest,
    validate_matcher,
    values_equal,
)
from threads_cases.core.schemas import validator

ROOT = Path(__file__).resolve().parent.parent
CASE_DIR = ROOT / "spec" / "conformance" / "match"
FILES = sorted(CASE_DIR.glob("*.json"))
NAME = re.compile(r"^[0-9]{3}-[a-z0-9]+(-[a-z0-9]+)*\.json$")
REQUIRED = {"description", "matcher", "event", "matched", "differences"}
ALLOWED = {*REQUIRED, "matcher_text", "event_text"}


def load(path: Path) -> dict[str, Any]:
    case: dict[str, Any] = parse_json(path.read_bytes(), file=str(path))
    return case


def matcher_of(case: dict[str, Any]) -> dict[str, Any]:
    if "matcher_text" in case:
        value: dict[str, Any] = parse_json(case["matcher_text"].encode("utf-8"))
        return value
    matcher: dict[str, Any] = case["matcher"]
    return matcher


def event_of(case: dict[str, Any]) -> dict[str, Any]:
    if "event_text" in case:
        value: dict[str, Any] = parse_json(case["event_text"].encode("utf-8"))
        return value
    event: dict[str, Any] = case["event"]
    return event


def test_there_are_enough_cases() -> None:
    assert len(FILES) >= 70
    cases = [load(p) for p in FILES]
    matched = [c["matched"] for c in cases]
    assert matched.count(True) >= 25 and matched.count(False) >= 25
    assert sum("matcher_text" in c or "event_text" in c for c in cases) >= 5
    numbers = [int(p.name[:3]) for p in FILES]
    assert numbers == list(range(1, len(FILES) + 1)), "files are numbered 001, 002, ... in order"


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_case_shape_and_canonical_bytes(path: Path) -> None:
    assert NAME.match(path.name), "file names are NNN-short-slug.json"
    case = load(path)
    assert path.read_bytes() == canonical_document(case), "case files are canonical documents"
    assert REQUIRED <= set(case) <= ALLOWED
    assert isinstance(case["description"], str) and case["description"]
    assert isinstance(case["matched"], bool)
    assert validate_matcher(case["matcher"]) is case["matcher"]
    errors = list(validator("matcher.schema.json").iter_errors(case["matcher"]))
    assert not errors, errors[0].message
    errors = list(validator("event.schema.json", "event.threads-py").iter_errors(case["event"]))
    assert not errors, errors[0].message
    # a text spelling is the same value as the readable one beside it (spec 10.2)
    for key in ("matcher", "event"):
        if f"{key}_text" in case:
            parsed = parse_json(case[f"{key}_text"].encode("utf-8"))
            assert values_equal(parsed, case[key])
            assert canonical_document(parsed) == canonical_document(case[key])
            if key == "matcher":
                validate_matcher(parsed)


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_match_case(path: Path) -> None:
    case = load(path)
    matcher, event = matcher_of(case), event_of(case)
    assert matches(matcher, event) is case["matched"]
    diffs = differences(matcher, event)
    assert (diffs == []) is case["matched"], diffs
    # the explanation is data too (spec/matchers.md 7.2, 10.1): byte for byte
    assert canonical_line([d.to_json() for d in diffs]) == canonical_line(case["differences"])
    # the readable spelling gives the same result as the text spelling
    assert matches(case["matcher"], case["event"]) is case["matched"]
    # the list functions agree with the single-event ones
    assert find_all([matcher], [event]) == [0 if case["matched"] else None]
    assert match_in_order([matcher], [event]) == (case["matched"], int(case["matched"]))
    found = nearest(matcher, [event])
    assert found is not None and found[0] == 0 and found[1] == diffs
