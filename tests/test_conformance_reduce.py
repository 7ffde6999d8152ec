"""Runs the data-only reduce conformance cases of spec/conformance/reduce/ (spec/reducer.md,
section "Conformance cases") through the Python implementation."""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any

import pytest

import threads_cases
from threads_cases import CaseError, canonical_document, canonical_line, get_dialect, parse_json
from threads_cases.core.schemas import validator

ROOT = Path(__file__).resolve().parent.parent
CASE_DIR = ROOT / "spec" / "conformance" / "reduce"
FILES = sorted(CASE_DIR.glob("*.json"))
NAME = re.compile(r"^[0-9]{3}-[a-z0-9]+(-[a-z0-9]+)*\.json$")
LOG_KEYS = ("log", "log_text", "log_base64")
RESULT_KEYS = ("state", "error")
ALLOWED = {
    "description",
    "dialect",
    "error_line",
    "error_column",
    "error_pointer",
    *LOG_KEYS,
    *RESULT_KEYS,
}


def load(path: Path) -> dict[str, Any]:
    case: dict[str, Any] = parse_json(path.read_bytes(), file=str(path))
    return case


def log_bytes(case: dict[str, Any]) -> bytes:
    if "log_text" in case:
        return str(case["log_text"]).encode("utf-8")
    if "log_base64" in case:
        return base64.b64decode(case["log_base64"], validate=True)
    # the events exactly as written (already in the case's dialect), one JCS line each
    return b"".join(canonical_line(ev) + b"\n" for ev in case["log"])


def test_there_are_enough_cases() -> None:
    assert len(FILES) >= 45
    dialects = [load(p)["dialect"] for p in FILES]
    assert dialects.count("threads-ts") >= 8


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_case_shape_and_canonical_bytes(path: Path) -> None:
    assert NAME.match(path.name), "file names are NNN-short-slug.json"
    raw = path.read_bytes()
    case = load(path)
    assert raw == canonical_document(case), "case files are canonical documents"
    assert set(case) <= ALLOWED
    assert isinstance(case["description"], str) and case["description"]
    assert case["dialect"] in threads_cases.dialect_names()
    assert sum(k in case for k in LOG_KEYS) == 1
    assert sum(k in case for k in RESULT_KEYS) == 1
    if "error" in case:
        assert case["error"] == "log_invalid"
    if "error_line" in case:
        assert "error" in case
        assert isinstance(case["error_line"], int) and case["error_line"] >= 1


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_case_is_valid_against_the_schemas(path: Path) -> None:
    case = load(path)
    dialect = case["dialect"]
    if "state" in case:
        errors = list(validator("state.schema.json", f"state.{dialect}").iter_errors(case["state"]))
        assert not errors, errors[0].message
    if "log" not in case:
        return
    bad_index = case.get("error_line", 0) - 1
    for index, ev in enumerate(case["log"]):
        if "error" in case and index == bad_index:
            continue  # the line the case is about may break the schema on purpose
        v = validator("event.schema.json", f"event.{dialect}" if "state" in case else None)
        errors = list(v.iter_errors(ev))
        assert not errors, f"event {index}: {errors[0].message}"


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_reduce_case(path: Path, tmp_path: Path) -> None:
    case = load(path)
    dialect = case["dialect"]
    d = get_dialect(dialect)

    # 1. through the file reader (every case)
    log_file = tmp_path / "log.jsonl"
    log_file.write_bytes(log_bytes(case))
    if "state" in case:
        assert d.encode_state(threads_cases.reduce(log_file, dialect=dialect)) == case["state"]
    else:
        with pytest.raises(CaseError) as info:
            threads_cases.reduce(log_file, dialect=dialect)
        assert info.value.code == case["error"], info.value.render()
        if "error_line" in case:
            assert info.value.location.file == str(log_file)
            assert info.value.location.line == case["error_line"], info.value.render()
        if "error_column" in case:  # a syntax refusal: line and column, never a pointer
            assert info.value.location.pointer is None, info.value.render()
            assert info.value.message.endswith(f"(column {case['error_column']})"), info.value
        if "error_pointer" in case:  # a value refusal: located by its pointer
            assert info.value.location.pointer == case["error_pointer"], info.value.render()

    # 2. through the in-memory API (cases given as values)
    if "log" not in case:
        return
    if "state" in case:
        state = threads_cases.reduce(case["log"], dialect=dialect)
        assert d.encode_state(state) == case["state"]
        # Reducer(state) resumes: an empty continuation leaves the state as it is
        assert threads_cases.Reducer(state).state == state
    else:
        with pytest.raises(CaseError) as info:
            threads_cases.reduce(case["log"], dialect=dialect)
        assert info.value.code == case["error"]
        if "error_line" in case:
            assert info.value.location.file == f"event {case['error_line'] - 1}"
