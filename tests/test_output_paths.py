"""Outputs never destroy inputs nor break cases (a new user's trial), all checked before
anything runs: an output that is one of the command's input files (``import s.jsonl -o
s.jsonl``, also through ``./`` or a symlink), a folder written into a case (``save --dir
cases/<case>``, ``report html -o cases/<case>/site``), and an output below a file
(``run --junit afile/j.xml``, which ran the whole suite and then crashed with
``internal_error``) are ``invalid_request``, exit 2, nothing written, the inputs intact."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import cli

ROOT = Path(__file__).resolve().parents[1]
SESSION = ROOT / "examples" / "sessions" / "claude-code-session.jsonl"
CASES = ROOT / "spec" / "conformance" / "cases"
REPORT = ROOT / "tests" / "data" / "compliance" / "report.jsonl"
SAVE = ["save", "t.jsonl", "--from", "claude-code", "--turn", "1", "--name", "n", "--dir"]


def _refused(p: subprocess.CompletedProcess[str], message: str) -> None:
    out = p.stdout + p.stderr
    assert p.returncode == 2, out
    assert p.stdout == "", out
    first, hint = p.stderr.splitlines()
    assert first == f"error[invalid_request]: {message}", out
    assert hint.startswith("  hint: ") and len(hint) > len("  hint: "), out


@pytest.mark.parametrize("out", ["s.jsonl", "./s.jsonl", "link.jsonl", "sub/../s.jsonl"])
def test_import_onto_its_own_transcript_is_refused(tmp_path: Path, out: str) -> None:
    shutil.copy(SESSION, tmp_path / "s.jsonl")
    (tmp_path / "link.jsonl").symlink_to("s.jsonl")
    (tmp_path / "sub").mkdir()
    p = cli("import", "claude-code", "s.jsonl", "-o", out, cwd=tmp_path)
    _refused(p, f"{Path(out)}: is the transcript file s.jsonl")
    assert "would replace the transcript" in p.stderr
    assert (tmp_path / "s.jsonl").read_bytes() == SESSION.read_bytes()
    j = cli("import", "claude-code", "s.jsonl", "-o", out, "--format", "json", cwd=tmp_path)
    assert j.returncode == 2 and j.stderr == "", j.stderr
    assert json.loads(j.stdout)["code"] == "invalid_request"
    assert (tmp_path / "s.jsonl").read_bytes() == SESSION.read_bytes()


def test_report_outputs_onto_their_inputs_are_refused(tmp_path: Path) -> None:
    shutil.copy(REPORT, tmp_path / "r.jsonl")
    shutil.copy(REPORT, tmp_path / "index.html")  # a report named as the page would be
    _refused(
        cli("report", "merge", "r.jsonl", "-o", "./r.jsonl", cwd=tmp_path),
        "r.jsonl: is the report file r.jsonl",
    )
    _refused(
        cli("report", "html", "index.html", "-o", ".", cwd=tmp_path),
        "index.html: is the report file index.html",
    )
    _refused(
        cli("report", "html", "r.jsonl", "--compare", "index.html", "-o", ".", cwd=tmp_path),
        "index.html: is the report file index.html",
    )
    assert (tmp_path / "r.jsonl").read_bytes() == REPORT.read_bytes()
    assert (tmp_path / "index.html").read_bytes() == REPORT.read_bytes()


def test_run_junit_onto_its_baseline_is_refused(tmp_path: Path) -> None:
    shutil.copytree(CASES / "reads-notes", tmp_path / "cases" / "reads-notes")
    baseline = tmp_path / "bl.json"
    baseline.write_text('{"entries": []}\n')
    p = cli("run", "cases", "--junit", "bl.json", "--baseline", "./bl.json", cwd=tmp_path)
    _refused(p, "bl.json: is the input file bl.json")
    assert baseline.read_text() == '{"entries": []}\n'


def _save(tmp_path: Path, name: str, dir: str, *more: str) -> subprocess.CompletedProcess[str]:
    args = ["t.jsonl", "--from", "claude-code", "--turn", "1", "--name", name, "--dir", dir]
    return cli("save", *args, *more, cwd=tmp_path)


@pytest.mark.parametrize(
    ("dir", "where"),
    [
        ("cases/c", "is the case directory"),
        ("cases/c/artifacts", "is inside the case directory"),
        ("cases/c/artifacts/new", "is inside the case directory"),
    ],
)
def test_save_into_a_case_is_refused_and_the_case_stays_valid(
    tmp_path: Path, dir: str, where: str
) -> None:
    shutil.copy(SESSION, tmp_path / "t.jsonl")
    p = _save(tmp_path, "c", "cases", "--no-verify")
    assert p.returncode == 0, p.stdout + p.stderr
    case = tmp_path / "cases" / "c"
    before = sorted(case.rglob("*"))
    _refused(_save(tmp_path, "nested", dir, "--no-verify"), f"{dir}: {where} {case}")
    assert sorted(case.rglob("*")) == before
    v = cli("validate", "cases/c", cwd=tmp_path)
    assert v.returncode == 0, v.stdout + v.stderr
    j = _save(tmp_path, "n", dir, "--format", "json")
    assert j.returncode == 2 and j.stderr == "", j.stderr
    assert json.loads(j.stdout)["message"] == f"{dir}: {where} {case}"


def test_report_html_into_a_case_is_refused(tmp_path: Path) -> None:
    shutil.copytree(CASES / "reads-notes", tmp_path / "cases" / "reads-notes")
    shutil.copy(REPORT, tmp_path / "r.jsonl")
    case = tmp_path / "cases" / "reads-notes"
    p = cli("report", "html", "r.jsonl", "-o", "cases/reads-notes/site", cwd=tmp_path)
    _refused(p, f"cases/reads-notes/site: is inside the case directory {case}")
    assert not (case / "site").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "cases", "--junit", "afile/j.xml"], "afile/j.xml: afile is a file, not a folder"),
        (
            ["coverage", "cases", "-o", "afile/c.json"],
            "afile/c.json: afile is a file, not a folder",
        ),
        (
            ["import", "claude-code", "t.jsonl", "-o", "afile/x.jsonl"],
            "afile/x.jsonl: afile is a file, not a folder",
        ),
        (["report", "html", "r.jsonl", "-o", "afile/site"], "afile/site: {afile} is a file"),
        (
            [*SAVE, "afile"],
            "afile: is a file, not a folder",
        ),
        (
            [*SAVE, "afile/sub"],
            "afile/sub: {afile} is a file",
        ),
    ],
)
def test_an_output_below_a_file_is_refused_before_anything_runs(
    tmp_path: Path, args: list[str], message: str
) -> None:
    """Was: the whole suite ran, then error[internal_error]: FileExistsError, exit 1."""
    shutil.copytree(CASES / "reads-notes", tmp_path / "cases" / "reads-notes")
    shutil.copy(SESSION, tmp_path / "t.jsonl")
    shutil.copy(REPORT, tmp_path / "r.jsonl")
    (tmp_path / "afile").write_text("x")
    message = message.replace("{afile}", str(tmp_path / "afile"))
    p = cli(*args, cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stdout == "" and "internal_error" not in p.stderr, p.stdout + p.stderr
    assert p.stderr.startswith(f"error[invalid_request]: {message}"), p.stderr
    assert len(p.stderr.splitlines()) == 2 and "  hint: " in p.stderr, p.stderr
    if args[0] in ("run", "coverage", "import", "save"):  # their JSON refusal (reports.md 5.2)
        j = cli(*args, "--format", "json", cwd=tmp_path)
        assert j.returncode == 2 and j.stderr == "", j.stderr
        doc = json.loads(j.stdout)
        assert doc["code"] == "invalid_request" and doc["message"].startswith(message), doc
    assert (tmp_path / "afile").read_text() == "x"
