"""Runs the data-only canonical JSON cases of spec/conformance/canonical/ (spec/strict-json.md)
through the Python strict reader and canonical writer."""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any

import pytest

from threads_cases import CaseError
from threads_cases.core.canonical import canonical_document, canonical_line
from threads_cases.core.strictjson import parse

ROOT = Path(__file__).resolve().parent.parent
CASE_DIR = ROOT / "spec" / "conformance" / "canonical"
FILES = sorted(CASE_DIR.glob("*.json"))
NAME = re.compile(r"^[0-9]{3}-[a-z0-9]+(-[a-z0-9]+)*\.json$")
INPUT_KEYS = ("input_text", "input_base64")


def load(path: Path) -> dict[str, Any]:
    case: dict[str, Any] = parse(path.read_bytes(), code="json_invalid", file=str(path))
    return case


def input_bytes(case: dict[str, Any]) -> bytes:
    if "input_text" in case:
        return str(case["input_text"]).encode("utf-8")
    return base64.b64decode(case["input_base64"], validate=True)


def test_there_are_enough_cases() -> None:
    assert len(FILES) >= 25
    cases = [load(p) for p in FILES]
    assert sum("error" in c for c in cases) >= 4
    assert sum("line" in c for c in cases) >= 20


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_case_shape(path: Path) -> None:
    assert NAME.match(path.name), "file names are NNN-short-slug.json"
    case = load(path)
    assert path.read_bytes() == canonical_document(case), "case files are canonical documents"
    assert isinstance(case["description"], str) and case["description"]
    assert sum(k in case for k in INPUT_KEYS) == 1
    given = {k for k in INPUT_KEYS if k in case}
    if "error" in case:
        assert set(case) == {"description", "error", *given}
        assert case["error"] == "json_invalid"
    else:
        assert set(case) == {"description", "line", "document", *given}


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_canonical_case(path: Path) -> None:
    case = load(path)
    data = input_bytes(case)
    if "error" in case:
        with pytest.raises(CaseError) as info:
            parse(data, code="json_invalid")
        assert info.value.code == case["error"], info.value.render()
        return
    value = parse(data, code="json_invalid")
    line = canonical_line(value)
    assert line == case["line"].encode("utf-8")
    assert canonical_document(value) == case["document"].encode("utf-8")
