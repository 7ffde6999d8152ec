"""spec/conformance/case-errors/ is what tools/make_case_error_tests.py writes: a test
changed by hand, or a base case changed without the tool run again, fails here (the tool
refuses a test the Python loader disagrees with, so a fresh folder equal to the committed one
means every committed expectation is still the loader's)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = ROOT / "spec" / "conformance" / "case-errors"


def test_the_committed_case_error_tests_are_the_tools(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location(
        "make_case_error_tests", ROOT / "tools" / "make_case_error_tests.py"
    )
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("make_case_error_tests", tool)
    spec.loader.exec_module(tool)
    out = tmp_path / "case-errors"
    assert tool.write_tests(out) == 0
    fresh = {p.name: p.read_bytes() for p in out.iterdir()}
    committed = {p.name: p.read_bytes() for p in COMMITTED.iterdir()}
    assert sorted(fresh) == sorted(committed)
    stale = [name for name in sorted(fresh) if fresh[name] != committed[name]]
    assert stale == [], "run `python tools/make_case_error_tests.py`"
