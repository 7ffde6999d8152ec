"""A driver's words never reach a terminal or a GitHub workflow command raw
(spec/reports.md 4): ESC, NUL, CR and bidirectional overrides in a driver's error message or
stderr are written as ``\\xNN`` / ``\\uNNNN`` in ``run``'s terminal view, on stderr, and in
``--format github`` (case strings are quoted as JSON already)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from conftest import cli

CASE = Path(__file__).resolve().parent.parent / "spec" / "conformance" / "cases" / "reads-notes"
HOSTILE = "boom \x1b[31mred\x1b[0m \x00nul \rback \u202eevil"
DRIVER = f"""
import json, sys
sys.stderr.write({json.dumps(HOSTILE)} + "\\n")
sys.stderr.flush()
for line in sys.stdin:
    req = json.loads(line)
    if req["cmd"] == "hello":
        out = {{"id": req["id"], "ok": True, "protocol": 1, "capabilities": ["replay"],
               "implementation": {{"name": "mine", "language": "python", "version": "1",
                                   "dialect": "threads-py", "homepage": "https://x.example"}}}}
    elif req["cmd"] == "shutdown":
        break
    else:
        out = {{"id": req["id"], "ok": False,
               "error": {{"code": "internal_error", "message": {json.dumps(HOSTILE)}}}}}
    sys.stdout.write(json.dumps(out) + "\\n")
    sys.stdout.flush()
"""


#: a driver that writes the same to stderr and dies before answering: driver_crashed, with
#: the tail of its stderr in the message
CRASHING = f"""
import sys
sys.stderr.write({json.dumps(HOSTILE)} + "\\n")
sys.exit(3)
"""


@pytest.mark.parametrize("driver", [DRIVER, CRASHING], ids=["error-answer", "crash"])
@pytest.mark.parametrize("fmt", ["pretty", "github"])
def test_a_drivers_control_characters_are_escaped_in_run_output(
    tmp_path: Path, fmt: str, driver: str
) -> None:
    (tmp_path / "driver.py").write_text(driver)
    shutil.copytree(CASE, tmp_path / "cases" / CASE.name)
    (tmp_path / "pyproject.toml").write_text(
        "[tool.threads-cases.implementations.mine]\n"
        f"command = {json.dumps([sys.executable, str(tmp_path / 'driver.py')])}\n"
    )
    p = cli("run", "cases", "--impl", "mine", "--format", fmt, "--isolation", "guard", cwd=tmp_path)
    assert p.returncode == 3, p.stdout + p.stderr
    shown = p.stdout + p.stderr
    for raw in ("\x1b", "\x00", "\r", "\u202e"):
        assert raw not in shown, (raw, shown)
    assert "\\x1b[31mred" in shown and "\\x00nul" in shown and "\\u202eevil" in shown, shown
    if fmt == "github":
        assert "::error " in p.stdout
