"""The data-only case-loader tests (spec/conformance/case-errors/, spec/conformance.md 2.7):
a committed case with some files replaced or removed, and the first problem ``open_case``
gives (code, file relative to the case, line, pointer), or none. ts/test/caseErrors.test.ts
runs the same files through ``openCase``."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from threads_cases.case.loader import open_case
from threads_cases.core.errors import CaseError
from threads_cases.core.strictjson import parse

SUITE = Path(__file__).resolve().parent.parent / "spec" / "conformance"
TESTS = sorted((SUITE / "case-errors").glob("*.json"))


def test_the_suite_has_enough_tests() -> None:
    assert len(TESTS) >= 30


def build(test: dict[str, Any], root: Path) -> Path:
    """The test's case directory under ``root``: its base case with the files replaced."""
    path = root / test["base"]
    shutil.copytree(SUITE / "cases" / test["base"], path)
    for rel, body in test["files"].items():
        if body is None:
            (path / rel).unlink()
        else:
            (path / rel).parent.mkdir(parents=True, exist_ok=True)
            (path / rel).write_bytes(body.encode("utf-8"))
    return path


@pytest.mark.parametrize("path", TESTS, ids=[p.stem for p in TESTS])
def test_case_errors_conformance(path: Path, tmp_path: Path) -> None:
    test: dict[str, Any] = parse(path.read_bytes())
    assert set(test) == {"description", "base", "files", "error"}
    case_dir = build(test, tmp_path)
    expected = test["error"]
    try:
        case = open_case(case_dir)
    except CaseError as err:
        loc = err.location
        rel = Path(loc.file).relative_to(case_dir).as_posix() if loc.file else None
        got = {"code": err.code, "file": "" if rel == "." else rel}
        got.update(line=loc.line, pointer=loc.pointer)
        assert got == expected, err
        return
    assert expected is None, f"the case opened; expected {expected}"
    assert case.name == test["base"]
