"""The data-only case-loader tests (spec/conformance/case-errors/, spec/conformance.md 2.7):
a committed case with some files replaced, removed or made a folder or a symlink, and the
first problem ``open_case`` gives (code, file relative to the case, line, pointer, and the
message and hint where the test pins them), or none. ts/test/caseErrors.test.ts
runs the same files through ``openCase``."""

from __future__ import annotations

import os
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


def test_a_case_json_that_is_not_a_file_is_named_for_what_it_is(tmp_path: Path) -> None:
    """A folder, a FIFO or a symlink loop in case.json's place is not "missing"."""
    from threads_cases.case.loader import inspect_case

    made = {"folder": lambda p: p.mkdir(), "symlink": lambda p: os.symlink(p.name, p)}
    if hasattr(os, "mkfifo"):
        made["FIFO"] = os.mkfifo
    for kind, make in made.items():
        case = tmp_path / kind
        case.mkdir()
        make(case / "case.json")
        _, [problem] = inspect_case(case)
        assert (problem.code, problem.message) == (
            "case_invalid",
            f"case.json is a {kind}, not a file",
        )
        assert problem.location.file == str(case) and "regular file" in problem.hint
    _, [missing] = inspect_case(tmp_path / "folder" / "case.json")
    assert missing.message == "not a case directory: case.json is missing"


def build(test: dict[str, Any], root: Path) -> Path:
    """The test's case directory under ``root``: its base case with the files replaced."""
    path = root / test["base"]
    shutil.copytree(SUITE / "cases" / test["base"], path)
    for rel, body in test["files"].items():
        if isinstance(body, dict):  # a folder or a symlink in the file's place
            (path / rel).unlink(missing_ok=True)
            if body["kind"] == "folder":
                (path / rel).mkdir()
                continue
            try:
                os.symlink(body["target"], path / rel)
            except OSError as exc:  # Windows without the privilege to make symlinks
                pytest.skip(f"cannot make a symlink here: {exc}")
        elif body is None:
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
        if "message" in expected:  # pinned: both languages say the same words
            got.update(message=err.message, hint=err.hint)
        assert got == expected, err
        return
    assert expected is None, f"the case opened; expected {expected}"
    assert case.name == test["base"]
