"""A hint names what its reader types (issue: a CLI hint said ``overwrite=True``): the
``save`` command's refusals name its flags (``--overwrite``, ``--no-verify``), the Python
API's name the keyword beside them (the text every implementation's API gives,
spec/conformance/save-errors/). The command passes the wording down
(``save_log(..., hints="cli")``, threads_cases/case/wording.py)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import EXPECT, build_thread, cli

from threads_cases.case.directory import CaseExpectation
from threads_cases.save_log import save_log

NEVER = CaseExpectation(
    must=list(EXPECT.must), expect=[{"type": "tool_called", "data": {"name": "nope"}}]
)


def _logged(tmp_path: Path) -> tuple[Path, str]:
    t, at = build_thread()
    log = tmp_path / "log.jsonl"
    t.write_log(log)
    t.write_artifacts(tmp_path / "artifacts")
    return log, at


def test_case_exists_names_the_flag_on_the_command_line_and_the_keyword_in_the_api(
    tmp_path: Path,
) -> None:
    log, at = _logged(tmp_path)
    args = ["save", log, "--at", at, "--name", "c", "--dir", "cases"]
    assert cli(*args, cwd=tmp_path).returncode == 0
    other = [*args, "--must", '{"type": "turn_completed"}']
    text = cli(*other, cwd=tmp_path)
    assert text.returncode == 2 and "error[case_exists]" in text.stderr
    assert "  hint: pass --overwrite to replace it\n" in text.stderr
    as_json = cli(*other, "--format", "json", cwd=tmp_path)
    assert json.loads(as_json.stdout)["hint"] == "pass --overwrite to replace it"
    for out in (text.stderr, as_json.stdout):
        assert "overwrite=True" not in out
    api = save_log(log, name="c", dir=tmp_path / "cases", at=at, must=[{"type": "turn_completed"}])
    assert api.error is not None and api.error.hint == (
        "pass --overwrite (overwrite=True) to replace it"
    )


def test_replay_failed_names_no_verify_without_the_keyword_on_the_command_line(
    tmp_path: Path,
) -> None:
    log, at = _logged(tmp_path)
    never = json.dumps(NEVER.expect[0])
    p = cli(
        "save", log, "--at", at, "--name", "bad", "--dir", "cases", "--expect", never, cwd=tmp_path
    )
    assert p.returncode == 2 and "error[replay_failed]" in p.stderr, p.stderr
    assert "--no-verify" in p.stderr and "verify=False" not in p.stderr
    t, at2 = build_thread()
    api = t.save_case("bad", at=at2, expect=NEVER, dir=tmp_path / "api")
    assert api.error is not None and "--no-verify (verify=False)" in api.error.hint


def test_a_file_in_the_way_is_not_told_to_overwrite(tmp_path: Path) -> None:
    """--overwrite never replaces a file that is not a case directory: its hint says so."""
    log, at = _logged(tmp_path)
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "c").write_text("a file\n")
    p = cli("save", log, "--at", at, "--name", "c", "--dir", "cases", cwd=tmp_path)
    assert p.returncode == 2 and "error[case_exists]" in p.stderr
    assert "--overwrite" not in p.stderr and "choose another name" in p.stderr


def test_no_command_line_hint_names_a_python_keyword() -> None:
    """The texts the command line prints as hints (the reason codes' general hints) name
    save's flags, never its keywords (``overwrite=True``, ``verify=False``...; a hint may
    still show code the user writes, as handler_failed's ``ToolResult(..., is_error=True)``)."""
    import re

    from threads_cases.core.errors import REASON_HINTS

    keyword = re.compile(r"\b(overwrite|verify|draft|secrets|redact)=")
    assert {c: h for c, h in REASON_HINTS.items() if keyword.search(h)} == {}
