"""The README's recording snippet runs verbatim and is deterministic: run twice in a fresh
folder, it writes byte-identical cases (fixed ``thread_id`` and ``clock``), so re-recording an
unchanged turn is no noise in review."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def recording_snippet() -> str:
    text = README.read_text(encoding="utf-8")
    m = re.search(r"## Record a thread and save a turn.*?```python\n(.*?)```", text, re.S)
    assert m, "README lost its recording snippet"
    return m.group(1)


def digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_readme_recording_snippet_is_deterministic(tmp_path: Path) -> None:
    snippet = recording_snippet()
    assert "thread_id=" in snippet and "clock=" in snippet
    (tmp_path / "snippet.py").write_text(snippet, encoding="utf-8")
    first = subprocess.run(
        [sys.executable, "snippet.py"], cwd=tmp_path, capture_output=True, text=True
    )
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines()[-1] == "pass"
    before = digest(tmp_path / "cases")
    assert before
    again = subprocess.run(
        [sys.executable, "snippet.py"], cwd=tmp_path, capture_output=True, text=True
    )
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout
    assert digest(tmp_path / "cases") == before
