"""spec/conformance/save-errors/ is what tools/make_save_errors_tests.py writes: each test's
refusal is threads-py's own answer when the tool runs, so a test changed by hand, a refusal
that changed without the tool run again, or a tool that no longer runs (its import of a moved
helper once broke it unnoticed) fails here."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from threads_cases.core.canonical import canonical_document

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = ROOT / "spec" / "conformance" / "save-errors"


def test_the_committed_save_error_tests_are_the_tools() -> None:
    spec = importlib.util.spec_from_file_location(
        "make_save_errors_tests", ROOT / "tools" / "make_save_errors_tests.py"
    )
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("make_save_errors_tests", tool)
    spec.loader.exec_module(tool)
    fresh = {
        f"{i:03d}-{slug}.json": canonical_document(tool.build(description, change))
        for i, (slug, description, change) in enumerate(tool.TESTS, start=1)
    }
    committed = {p.name: p.read_bytes() for p in COMMITTED.iterdir()}
    assert sorted(fresh) == sorted(committed)
    stale = [name for name in sorted(fresh) if fresh[name] != committed[name]]
    assert stale == [], "run `python tools/make_save_errors_tests.py`"
