"""Golden files for rendered output: ``assert_golden("name.txt", text)`` compares ``text``
with tests/data/golden/name.txt byte for byte. ``THREADS_CASES_UPDATE_GOLDEN=1`` rewrites the
file instead (then review its diff like any change of output)."""

from __future__ import annotations

import os
from pathlib import Path

GOLDEN = Path(__file__).resolve().parent / "data" / "golden"


def assert_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("THREADS_CASES_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"no golden file {path}; write it with THREADS_CASES_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8"), f"differs from {path}"
