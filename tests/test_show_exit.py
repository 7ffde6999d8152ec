"""`show` exits 1 when `run` cannot load the case (README exit table): it still renders what
it can, with the problem inline, then prints the first problem that stops a run. A folder
whose case.json is a folder is a case (as `run` and `list` count it), `case_invalid`, not
"not a case directory" (exit 2)."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import cli

from threads_cases.review.show import render_case

CASES = Path(__file__).resolve().parent.parent / "spec" / "conformance" / "cases"


def copy(tmp_path: Path, name: str = "reads-notes") -> Path:
    case = tmp_path / "cases" / name
    shutil.copytree(CASES / "reads-notes", case)
    return case


def test_render_case_hands_back_the_problems_it_shows(tmp_path: Path) -> None:
    case = copy(tmp_path)
    found: list = []  # type: ignore[type-arg]
    render_case(case, problems=found)
    assert found == []
    log = case / "log.threads-py.jsonl"
    log.write_bytes(log.read_bytes()[:200])
    render_case(case, problems=found)
    assert [p.code for p in found][:1] == ["log_invalid"]


def test_show_exits_1_on_what_run_cannot_load(tmp_path: Path) -> None:
    cut = copy(tmp_path, "cut")
    log = cut / "log.threads-py.jsonl"
    log.write_bytes(log.read_bytes()[:200])
    latin = copy(tmp_path, "latin")
    (latin / "model.json").write_bytes((latin / "model.json").read_bytes() + b"\xff")
    folder = tmp_path / "cases" / "folder"
    (folder / "case.json").mkdir(parents=True)
    for case, code in ((cut, "log_invalid"), (latin, "case_invalid"), (folder, "case_invalid")):
        p = cli("show", case, cwd=tmp_path)
        assert p.returncode == 1, (case, p.stdout, p.stderr)
        assert f"error[{code}]: " in p.stderr and "hint: " in p.stderr
        r = cli("run", case, "--impl", "threads-py", "--format", "json", cwd=tmp_path)
        assert r.returncode == 3 and f'"reasons":["{code}"]' in r.stdout
    # the cut log is still rendered, its problem inline
    p = cli("show", cut, cwd=tmp_path)
    assert "log_invalid" in p.stdout
    p = cli("show", copy(tmp_path, "fine"), cwd=tmp_path)
    assert p.returncode == 0 and p.stderr == ""
