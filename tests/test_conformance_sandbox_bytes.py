"""The data-only sandbox-bytes tests (spec/conformance/sandbox-bytes/, spec/case-format.md 5.9,
spec/conformance.md 2.10): a thread whose log knows sandbox files by sha256 only, saved with
``sandbox_dir=`` a folder built from the test, and the artifacts the case then holds, the
files it leaves hash-only, or the refusal. ts/test/sandboxBytes.test.ts runs the same files;
tools/make_sandbox_bytes_tests.py writes them."""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import Any

import pytest

from threads_cases.case.artifacts import ArtifactStore
from threads_cases.case.save import save_case
from threads_cases.core.strictjson import parse
from threads_cases.harness.check.conformance import load_skips, load_tests, run_test
from threads_cases.harness.check.conformance_saves import lay_out, sandbox_bytes_test, stored
from threads_cases.protocol.client import DriverImplementation
from threads_cases.protocol.server import PythonImplementation
from threads_cases.reference.sandbox import FakeSandbox

SUITE = Path(__file__).resolve().parent.parent / "spec" / "conformance"
ROOT = SUITE / "sandbox-bytes"
TESTS = sorted(ROOT.glob("*.json"))
KEYS = {"description", "log", "at", "artifacts", "secrets", "folder", "outside"}


def saved_by_the_api(test: dict[str, Any], work: Path) -> dict[str, Any]:
    """The same save through the Python API, ``save_case(..., sandbox_dir=)`` (no verification:
    a turn reading a file left hash-only could not pass), its case read back from disk as the
    harness reads a ``write_case`` answer's files."""
    box = lay_out(test, work)
    store = ArtifactStore({k: base64.b64decode(v) for k, v in test["artifacts"].items()})
    r = save_case(
        test["log"],
        sandbox=FakeSandbox({}),
        store=store,
        name="c",
        expect=None,
        at=test["at"],
        dir=work / "cases",
        secrets=test["secrets"],
        verify=False,
        sandbox_dir=box,
    )
    if not r.ok:
        assert r.error is not None
        return {"error": {"code": r.error.code, "message": r.error.message, "hint": r.error.hint}}
    case = work / "cases" / "c"
    files = {p.relative_to(case).as_posix(): p.read_bytes() for p in case.rglob("*") if p.is_file()}
    return {"saved": stored(files)}


def test_the_suite_covers_every_rule() -> None:
    assert len(TESTS) >= 12


@pytest.mark.parametrize("path", TESTS, ids=[p.stem for p in TESTS])
def test_sandbox_bytes_conformance(path: Path) -> None:
    """The harness's runner (``threads-cases conformance --area sandbox-bytes``), in process."""
    check = sandbox_bytes_test(parse(path.read_bytes()), PythonImplementation(), path)
    assert check.result == "pass", check.message


@pytest.mark.parametrize("path", TESTS, ids=[p.stem for p in TESTS])
def test_the_python_api_saves_the_same(path: Path, tmp_path: Path) -> None:
    t: dict[str, Any] = parse(path.read_bytes())
    assert set(t) - KEYS in ({"saved"}, {"error"}), sorted(t)
    got = saved_by_the_api(t, tmp_path)
    if "saved" in t:
        assert got == {"saved": t["saved"]}
    else:
        assert "error" in got, got
        assert got["error"]["code"] == t["error"]["code"]
        assert got["error"]["message"].endswith(t["error"]["message_end"]), got
        assert got["error"]["hint"] == t["error"]["hint"], got


def test_through_the_subprocess_driver() -> None:
    impl = DriverImplementation(
        "threads-py",
        [sys.executable, "-m", "threads_cases.protocol.driver"],
        dialect="threads-py",
        validate_protocol=True,
    )
    try:
        for t in load_tests(SUITE, ["sandbox-bytes"]):
            r = run_test(t, impl, load_skips(SUITE, "threads-py"))
            assert r.verdict == "pass", (t.name, r.message, r.checks)
    finally:
        impl.close()
