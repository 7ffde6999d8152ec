"""The review commands (show, diff, fmt, list, validate, stale) through the real CLI, as
subprocesses. Cases are copied from spec/conformance/cases into tmp_path before anything
is changed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import cli

from threads_cases.core.canonical import canonical_document, canonical_line
from threads_cases.core.strictjson import read_json_file

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "spec" / "conformance" / "cases"


def copy(tmp_path: Path, name: str, dest: str = "cases") -> Path:
    target = tmp_path / dest / name
    shutil.copytree(CASES / name, target)
    return target


def rewrite(path: Path, change: Callable[[Any], None]) -> None:
    doc = read_json_file(path)
    change(doc)
    path.write_bytes(canonical_document(doc))


def rewrite_event(log: Path, index: int, change: Callable[[dict[str, Any]], None]) -> None:
    lines = log.read_bytes().splitlines()
    ev = json.loads(lines[index])
    change(ev)
    lines[index] = canonical_line(ev)
    log.write_bytes(b"".join(line + b"\n" for line in lines))


# --------------------------------------------------------------------------- show


def test_show_renders_the_case_and_the_users_input_without_values(tmp_path: Path) -> None:
    case = copy(tmp_path, "weather-stub")
    p = cli("show", case, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    for text in (
        "case weather-stub",
        "main.0",
        "threads-py, threads-ts",
        "must (1)",
        '"name":"get_weather"',
        "expect (1)",
        '"kind":"external"',
        "thread_started",
        "model replies (2)",
        "tool_use",
        "end_turn",
        "stubs (1)",
        "get_weather",
        "Weather in Oslo?",  # the user's input is shown by default
        "get_weather [external/read]",
    ):
        assert text in out, (text, out)
    # no other values without --values (a tool result, the model's text)
    assert "light rain" not in out
    assert p.stderr == ""
    # piped: no box, and no line padded to the width
    assert "╭" not in out and "│ name" not in out
    assert all(line == line.rstrip() for line in out.splitlines())
    narrow = cli("show", case, cwd=tmp_path, env={"COLUMNS": "60"})
    widths = [len(line) for line in narrow.stdout.splitlines()]
    # it keeps to the width where words allow, widened only for a word longer than it
    # (the matcher's compact JSON): never a word broken across lines (spec/reports.md 4)
    assert max(widths) < max(len(line) for line in out.splitlines())
    assert sum(w <= 60 for w in widths) > len(widths) * 0.8, narrow.stdout
    assert '{"data":{"is_error":false,"name":"get_weather"},"type":"tool_result"}' in narrow.stdout


def test_show_values_prints_them_and_warns_once(tmp_path: Path) -> None:
    case = copy(tmp_path, "weather-stub")
    p = cli("show", case, "--values", cwd=tmp_path)
    assert p.returncode == 0
    assert "Weather in Oslo?" in p.stdout
    assert "Oslo: 4°C, light rain" in p.stdout
    assert '{"city":"Oslo"}' in p.stdout
    warnings = [line for line in p.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "raw" in warnings[0], p.stderr


def test_show_timeline_is_the_last_20_events_unless_all(tmp_path: Path) -> None:
    case = copy(tmp_path, "multi-turn-prefix")
    short = cli("show", case, cwd=tmp_path)
    assert short.returncode == 0
    assert "23 event(s), the last 20 shown" in short.stdout
    assert "thread_started" not in short.stdout  # seq 0 is cut
    assert "turn-13 end_turn" in short.stdout
    full = cli("show", case, "--all", cwd=tmp_path)
    assert full.returncode == 0
    assert "thread_started" in full.stdout and "the last 20" not in full.stdout
    assert "sandbox reads (1)" in full.stdout and "todo.txt" in full.stdout


def test_show_refuses_a_folder_that_is_not_a_case(tmp_path: Path) -> None:
    p = cli("show", tmp_path, cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.startswith("error[invalid_request]: ")
    assert "hint: expected a case directory" in p.stderr


# --------------------------------------------------------------------------- diff


def _mutated_pair(tmp_path: Path) -> tuple[Path, Path]:
    a = copy(tmp_path, "weather-stub", "a")
    b = copy(tmp_path, "weather-stub", "b")

    def case_change(d: dict[str, Any]) -> None:
        d["expect"]["must"][0]["data"]["is_error"] = True
        d["expect"]["expect"].append({"type": "turn_completed"})

    rewrite(b / "case.json", case_change)
    rewrite(b / "model.json", lambda d: d["replies"][1].update(stop_reason="max_tokens"))
    rewrite(b / "stubs.json", lambda d: d["calls"][0]["result"].update(is_error=True))
    rewrite(b / "expected.threads-py.json", lambda d: d.update(last_seq=7))
    rewrite_event(b / "log.threads-py.jsonl", 0, lambda e: e.update(ts="2027-01-01T00:00:00.000Z"))
    (b / "artifacts").mkdir()
    (b / "artifacts" / ("ab" * 32)).write_bytes(b"new artifact")
    return a, b


def test_diff_equal_cases_exit_0(tmp_path: Path) -> None:
    a = copy(tmp_path, "weather-stub", "a")
    b = copy(tmp_path, "weather-stub", "b")
    p = cli("diff", a, b, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "no difference" in p.stdout


def test_diff_names_a_file_that_is_not_json_by_its_real_path(tmp_path: Path) -> None:
    """A trailing comma in one side's case.json: the note names that file where it is
    (cases/b/case.json:LINE), not a made-up a/ or b/ path; both sides when both are broken."""
    a = copy(tmp_path, "reads-notes", "good")
    b = copy(tmp_path, "reads-notes", "bad")
    text = (b / "case.json").read_text()
    (b / "case.json").write_text(text.rstrip().removesuffix("}") + ",}\n")
    lines = (b / "case.json").read_text().count("\n")
    p = cli("diff", "good/reads-notes", "bad/reads-notes", cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    assert f"error[case_invalid]: bad/reads-notes/case.json:{lines}: " in p.stdout
    assert "b/case.json" not in p.stdout.replace("reads-notes/case.json", "")
    j = cli("diff", "bad/reads-notes", str(a), "--format", "json", cwd=tmp_path)
    assert "error[case_invalid]: bad/reads-notes/case.json:" in j.stdout
    shutil.copy(b / "case.json", a / "case.json")
    (a / "case.json").write_text((a / "case.json").read_text() + " ")
    both = cli("diff", "good/reads-notes", "bad/reads-notes", cwd=tmp_path)
    assert (
        "good/reads-notes/case.json:" in both.stdout and "bad/reads-notes/case.json:" in both.stdout
    )


def test_diff_reports_every_change_by_pointer(tmp_path: Path) -> None:
    a, b = _mutated_pair(tmp_path)
    p = cli("diff", a, b, cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    out = p.stdout
    assert "~ must[0] /data/is_error: false -> true" in out
    assert '+ expect[1]: {"type":"turn_completed"}' in out
    assert "1 id and timestamp change(s) not listed (--all lists them)" in out
    assert "/ts" not in out
    every = cli("diff", "--all", a, b, cwd=tmp_path).stdout
    assert (
        '~ seq 0 thread_started /ts: "2026-11-29T20:00:00.000Z" -> "2027-01-01T00:00:00.000Z"'
    ) in every
    assert "not listed" not in every
    assert "~ /last_seq: 0 -> 7" in out
    assert '~ replies[1] max_tokens /stop_reason: "end_turn" -> "max_tokens"' in out
    assert "~ calls[0] get_weather /result/is_error: false -> true" in out
    assert "artifacts/" + "ab" * 32 in out and "+ added: 12 bytes" in out
    # the threads-ts files were not changed: only their bytes, so they do not appear
    assert "log.threads-ts.jsonl" not in out

    j = cli("diff", "--format", "json", a, b, cwd=tmp_path)
    assert j.returncode == 1
    doc = json.loads(j.stdout)
    assert doc["equal"] is False
    found = {(c["file"], c["kind"], c["item"], c["pointer"]) for c in doc["changes"]}
    assert ("model.json", "changed", "replies[1] max_tokens", "/stop_reason") in found
    assert ("case.json", "added", "expect[1]", None) in found
    assert ("log.threads-py.jsonl", "changed", "seq 0 thread_started", "/ts") in found
    bookkeeping = {(c["file"], c["pointer"]) for c in doc["changes"] if c["bookkeeping"]}
    assert bookkeeping == {("log.threads-py.jsonl", "/ts")}


def test_diff_events_added_and_removed_by_seq(tmp_path: Path) -> None:
    a = copy(tmp_path, "writes-summary", "a")
    b = copy(tmp_path, "writes-summary", "b")
    for name in ("log.threads-py.jsonl", "log.threads-ts.jsonl"):
        lines = (b / name).read_bytes().splitlines(keepends=True)
        (b / name).write_bytes(b"".join(lines[:-1]))
    p = cli("diff", a, b, cwd=tmp_path)
    assert p.returncode == 1
    assert "- seq 5 " in p.stdout
    assert "log.threads-ts.jsonl" in p.stdout
    assert "the same 1 change(s) as log.threads-py.jsonl" in p.stdout
    back = cli("diff", b, a, cwd=tmp_path)
    assert "+ seq 5 " in back.stdout


def test_diff_bad_arguments_exit_2(tmp_path: Path) -> None:
    a = copy(tmp_path, "weather-stub", "a")
    one = cli("diff", a, cwd=tmp_path)
    assert one.returncode == 2 and one.stderr.startswith("error[invalid_request]: ")
    notcase = cli("diff", a, tmp_path, cwd=tmp_path)
    assert notcase.returncode == 2 and "case.json is missing" in notcase.stderr
    missing = cli("diff", a, "nonexist", cwd=tmp_path)
    assert missing.returncode == 2
    assert missing.stderr.startswith("error[invalid_request]: nonexist: no such file or folder")
    assert "case.json is missing" not in missing.stderr
    log = a / "log.threads-py.jsonl"
    for args in ((log, a), (a, log)):
        mixed = cli("diff", *args, cwd=tmp_path)
        assert mixed.returncode == 2, mixed.stderr
        first = mixed.stderr.splitlines()[0]
        assert "cannot compare a" in first and "not a case directory" not in first
        assert f"a thread log ({log})" in first and f"a case directory ({a})" in first
    fmt = cli("diff", "--format", "yaml", a, a, cwd=tmp_path)
    assert fmt.returncode == 2


def test_diff_takes_a_case_json_for_its_case(tmp_path: Path) -> None:
    """A case.json given stands for its case, as `run` reads it (discovery.discover)."""
    a = copy(tmp_path, "weather-stub", "a")
    b = copy(tmp_path, "weather-stub", "b")
    rewrite(b / "stubs.json", lambda d: d["calls"][0]["result"].update(content="sunny"))
    same = cli("diff", a, a / "case.json", cwd=tmp_path)
    assert same.returncode == 0, same.stderr
    assert f"no difference between {a} and {a}" in same.stdout
    p = cli("diff", a / "case.json", b / "case.json", "--format", "json", cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    doc = json.loads(p.stdout)
    assert (doc["a"], doc["b"]) == (str(a), str(b)) and not doc["equal"]


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            "git",
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "-c",
            "commit.gpgsign=false",
            *args,
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_diff_git_revision_and_driver(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    case = copy(repo, "weather-stub")
    (repo / ".gitattributes").write_text(
        "cases/**/*.json diff=threads-cases\ncases/**/*.jsonl diff=threads-cases\n"
    )
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "case")

    same = cli("diff", "--git", "HEAD", "cases/weather-stub", cwd=repo)
    assert same.returncode == 0, same.stderr
    rewrite(case / "model.json", lambda d: d["replies"][1].update(stop_reason="max_tokens"))
    changed = cli("diff", "--git", "HEAD", "cases/weather-stub", cwd=repo)
    assert changed.returncode == 1
    assert "--- HEAD:cases/weather-stub" in changed.stdout
    assert '~ replies[1] max_tokens /stop_reason: "end_turn" -> "max_tokens"' in changed.stdout

    # refusals: unknown revision, a path the revision lacks, outside a work tree
    bad_rev = cli("diff", "--git", "nope", "cases/weather-stub", cwd=repo)
    assert bad_rev.returncode == 2 and "unknown revision" in bad_rev.stderr
    other = copy(repo, "reads-notes")  # a case new since HEAD: shown whole
    added = cli("diff", "--git", "HEAD", other, cwd=repo)
    assert added.returncode == 1, added.stderr
    assert added.stdout.startswith(f"+ {other}: new case since HEAD\n")
    assert "input             What is on my list?" in added.stdout
    assert "model replies (" in added.stdout and "log.threads-py.jsonl: " in added.stdout
    absent = cli("diff", "--git", "HEAD", repo / "cases" / "nope", cwd=repo)
    assert absent.returncode == 2 and "not a case directory, here or in HEAD" in absent.stderr
    outside = copy(tmp_path, "reads-notes", "plain")
    no_git = cli(
        "diff",
        "--git",
        "HEAD",
        outside,
        env={"GIT_CEILING_DIRECTORIES": str(tmp_path)},
        cwd=tmp_path,
    )
    assert no_git.returncode == 2 and no_git.stderr.startswith("error[git_unavailable]: ")

    # as git's external diff driver
    driver = f"{sys.executable} -m threads_cases diff --git-driver"
    out = _git(repo, "-c", f"diff.threads-cases.command={driver}", "diff").stdout
    assert "diff --threads-cases a/cases/weather-stub/model.json" in out
    assert '~ replies[1] max_tokens /stop_reason: "end_turn" -> "max_tokens"' in out


def test_git_driver_on_single_files(tmp_path: Path) -> None:
    old, new = tmp_path / "old.txt", tmp_path / "new.txt"
    old.write_text("a\nb\n")
    new.write_text("a\nc\n")
    p = cli(
        "diff",
        "--git-driver",
        "x/notes.txt",
        old,
        "1" * 40,
        "100644",
        new,
        "2" * 40,
        "100644",
        cwd=tmp_path,
    )
    assert p.returncode == 0
    assert "-b\n+c\n" in p.stdout
    log_a = CASES / "multi-turn-prefix" / "log.threads-py.jsonl"
    log_b = tmp_path / "log.threads-py.jsonl"
    shutil.copy(log_a, log_b)
    rewrite_event(log_b, 12, lambda e: e["data"].update(content="Add more docs"))
    p = cli(
        "diff",
        "--git-driver",
        "c/log.threads-py.jsonl",
        log_a,
        "1" * 40,
        "100644",
        log_b,
        "2" * 40,
        "100644",
        cwd=tmp_path,
    )
    assert p.returncode == 0
    assert '~ seq 12 user_message /data/content: "Add docs to it" -> "Add more docs"' in p.stdout
    added = cli(
        "diff",
        "--git-driver",
        "c/case.json",
        "/dev/null",
        "0" * 40,
        ".",
        CASES / "reads-notes" / "case.json",
        "2" * 40,
        "100644",
        cwd=tmp_path,
    )
    # a new file is shown as show shows it, not as a byte count
    assert added.returncode == 0, added.stderr
    assert "  + new file\n" in added.stdout
    assert "  + input             What is on my list?\n" in added.stdout
    assert "  + must (2)  any order\n" in added.stdout, added.stdout
    wrong = cli("diff", "--git-driver", "a", "b", cwd=tmp_path)
    assert wrong.returncode == 2 and "7 arguments" in wrong.stderr


# --------------------------------------------------------------------------- fmt


def test_fmt_check_and_rewrite(tmp_path: Path) -> None:
    case = copy(tmp_path, "reads-notes")
    artifacts = {p.name: p.read_bytes() for p in (case / "artifacts").iterdir()}
    model = json.loads((case / "model.json").read_text())
    (case / "model.json").write_text(json.dumps(model))  # valid, not canonical
    lines = (case / "log.threads-ts.jsonl").read_text().splitlines()
    (case / "log.threads-ts.jsonl").write_text(
        "".join(json.dumps(json.loads(line), indent=None) + "\n" for line in lines)
    )

    check = cli("fmt", "--check", "cases", cwd=tmp_path)
    assert check.returncode == 1, check.stderr
    assert f"{Path('cases/reads-notes/model.json')}: not canonical" in check.stdout
    assert f"{Path('cases/reads-notes/log.threads-ts.jsonl')}: not canonical" in check.stdout
    # once formatted the bytes are the saved ones again, so the fingerprint is current
    assert "case.json" not in check.stdout
    assert json.loads((case / "model.json").read_text()) == model
    assert (case / "model.json").read_bytes() != canonical_document(model)  # untouched

    done = cli("fmt", cwd=tmp_path)  # default: the current folder
    assert done.returncode == 0, done.stderr
    assert "formatted cases/reads-notes/model.json" in done.stdout
    assert (case / "model.json").read_bytes() == canonical_document(model)
    assert {p.name: p.read_bytes() for p in (case / "artifacts").iterdir()} == artifacts
    assert (case / "log.threads-ts.jsonl").read_bytes() == (
        CASES / "reads-notes" / "log.threads-ts.jsonl"
    ).read_bytes()
    assert cli("fmt", "--check", cwd=tmp_path).returncode == 0
    assert cli("validate", case, cwd=tmp_path).returncode == 0
    # formatting a canonical case with its own fingerprint gives back the saved bytes
    assert (case / "case.json").read_bytes() == (CASES / "reads-notes" / "case.json").read_bytes()


def test_fmt_check_names_a_stale_fingerprint_and_files_stand_for_their_case(tmp_path: Path) -> None:
    case = copy(tmp_path, "weather-stub")
    rewrite(case / "stubs.json", lambda d: d["calls"][0]["result"].update(content="sunny"))
    # a file argument (as pre-commit passes them) stands for its case
    p = cli("fmt", "--check", case / "stubs.json", cwd=tmp_path)
    assert p.returncode == 1
    assert p.stdout.strip() == f"{case / 'case.json'}: fingerprint stale"
    fixed = cli("fmt", case / "stubs.json", cwd=tmp_path)
    assert fixed.returncode == 0
    assert cli("fmt", "--check", case, cwd=tmp_path).returncode == 0
    # files outside any case are ignored; a missing path is refused
    (tmp_path / "other.json").write_text("{}")
    assert cli("fmt", "--check", tmp_path / "other.json", cwd=tmp_path).returncode == 0
    missing = cli("fmt", "--check", tmp_path / "nope", cwd=tmp_path)
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_fmt_refuses_a_file_it_cannot_read_and_writes_nothing(tmp_path: Path) -> None:
    case = copy(tmp_path, "weather-stub")
    (case / "sandbox.json").write_text('{"format": 1, "format": 1, "reads": []}')
    before = (case / "case.json").read_bytes()
    p = cli("fmt", case, cwd=tmp_path)
    assert p.returncode == 1
    assert "error[case_invalid]: " in p.stderr and "duplicate key" in p.stderr
    assert "\n  hint: " in p.stderr
    assert (case / "case.json").read_bytes() == before


@pytest.mark.parametrize(
    ("file", "code"),
    [
        ("case.json", "case_invalid"),
        ("model.json", "case_invalid"),
        ("log.threads-py.jsonl", "log_invalid"),
    ],
)
def test_every_command_gives_one_code_for_a_case_file_that_is_not_json(
    tmp_path: Path, file: str, code: str
) -> None:
    """A trailing comma in a case's JSON file is case_invalid (a broken log line log_invalid)
    in run, validate, fmt --check, show and diff alike (spec/reason-codes.md 3.2), never
    json_invalid, which is for JSON files outside a case."""
    good = copy(tmp_path, "reads-notes", "good")
    case = copy(tmp_path, "reads-notes")
    target = case / file
    if file.endswith(".jsonl"):
        target.write_bytes(target.read_bytes().replace(b"}\n", b",}\n", 1))
    else:
        text = target.read_text().rstrip()
        target.write_text(text[:-1].rstrip() + ",\n}\n")
    where = f"error[{code}]: cases/reads-notes/{file}:"
    run = cli("run", "cases", "--impl", "threads-py", "--format", "json", cwd=tmp_path)
    result = json.loads(run.stdout.splitlines()[1])
    assert result["reasons"] == [code] and result["message"].startswith(where)
    for args in (["validate"], ["fmt", "--check"], ["show"]):
        p = cli(*args, "cases/reads-notes", cwd=tmp_path)
        out = " ".join((p.stdout + p.stderr).split())  # show prints it inline, wrapped
        assert where in out, (args, out)
        assert "json_invalid" not in out
    d = cli("diff", good, "cases/reads-notes", cwd=tmp_path)
    assert where in d.stdout and "json_invalid" not in d.stdout


def test_fmt_check_passes_on_the_repository() -> None:
    p = cli("fmt", "--check", "spec/conformance", cwd=ROOT)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "22 case(s) canonical" in p.stdout or "case(s) canonical" in p.stdout


def test_pre_commit_hook_is_declared() -> None:
    text = (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert "id: threads-cases-fmt" in text
    assert "entry: threads-cases fmt --check" in text
    assert "language: python" in text


# --------------------------------------------------------------------------- list


def test_list_pretty_and_json(tmp_path: Path) -> None:
    a = copy(tmp_path, "weather-stub")
    copy(tmp_path, "reads-notes")
    rewrite(a / "stubs.json", lambda d: d["calls"][0]["result"].update(content="sunny"))
    p = cli("list", "cases", cwd=tmp_path)
    assert p.returncode == 0
    assert "weather-stub" in p.stdout and "reads-notes" in p.stdout
    assert "stale" in p.stdout
    assert "2 case(s)" in p.stdout
    j = cli("list", "cases", "--format", "json", cwd=tmp_path)
    assert j.returncode == 0
    rows = {r["name"]: r for r in json.loads(j.stdout)["cases"]}
    assert set(rows) == {"weather-stub", "reads-notes"}
    notes = rows["reads-notes"]
    folder = tmp_path / "cases" / "reads-notes"
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    assert notes["size"] == size
    assert notes["dialects"] == ["threads-py", "threads-ts"]
    assert notes["portable"] is True and notes["fingerprint_ok"] is True
    assert rows["weather-stub"]["fingerprint_ok"] is False
    assert notes["fingerprint"].startswith("sha256:")
    empty = cli("list", "--format", "json", folder / "artifacts", cwd=tmp_path)
    assert json.loads(empty.stdout) == {"cases": []}


def test_list_names_a_case_it_cannot_read_and_exits_1(tmp_path: Path) -> None:
    copy(tmp_path, "reads-notes")
    broken = copy(tmp_path, "weather-stub")
    text = (broken / "case.json").read_text(encoding="utf-8")
    (broken / "case.json").write_text(text.replace('"name"', '"name": 1, "x"', 1))
    p = cli("list", "cases", cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    row = next(line for line in p.stdout.splitlines() if "weather-stub" in line)
    assert "unreadable" in row and "error[" not in row  # the dialects column holds no error
    assert "error[case_invalid]: cases/weather-stub/case.json" in p.stderr
    assert "2 case(s)" in p.stdout and "1 cannot be read" in p.stdout
    j = cli("list", "cases", "--format", "json", cwd=tmp_path)
    assert j.returncode == 1
    rows = {r["name"]: r for r in json.loads(j.stdout)["cases"]}
    error = rows["weather-stub"]["error"]
    assert error["code"] == "case_invalid" and error["file"].endswith("case.json")
    assert set(error) == {"code", "message", "file", "line", "pointer", "hint"}
    assert rows["reads-notes"]["error"] is None


@pytest.mark.parametrize(
    ("file", "spoil", "says"),
    [
        ("model.json", None, "model.json is missing"),
        ("stubs.json", lambda t: t.replace("}", ",}", 1), "trailing comma"),
        ("model.json", lambda t: t.replace("{", '{"x": 1e400,', 1), "out of the range"),
    ],
)
def test_list_reads_every_file_as_run_does(
    tmp_path: Path, file: str, spoil: Callable[[str], str] | None, says: str
) -> None:
    """spec/case-format.md 8.1: `list` reads each case with the one loader, so a case `run`
    refuses (a missing file, a file that is not strict JSON) is listed with its error."""
    copy(tmp_path, "reads-notes")
    broken = copy(tmp_path, "weather-stub")
    if spoil is None:
        (broken / file).unlink()
    else:
        (broken / file).write_text(spoil((broken / file).read_text(encoding="utf-8")))
    run = cli("run", broken, cwd=tmp_path)
    assert "error[case_invalid]" in run.stdout + run.stderr and says in run.stdout + run.stderr
    p = cli("list", "cases", cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    row = next(line for line in p.stdout.splitlines() if "weather-stub" in line)
    assert "unreadable" in row
    assert f"error[case_invalid]: {Path('cases/weather-stub') / file}" in p.stderr
    assert says in p.stderr and "  hint: " in p.stderr
    assert "1 cannot be read" in p.stdout
    j = cli("list", broken, "--format", "json", cwd=tmp_path)
    assert j.returncode == 1
    (row_json,) = json.loads(j.stdout)["cases"]
    error = row_json["error"]
    assert error["code"] == "case_invalid" and says in error["message"]
    assert error["file"] == str(broken / file) and error["hint"]


# --------------------------------------------------------------------------- validate


def test_validate_a_good_case_and_a_log(tmp_path: Path) -> None:
    case = copy(tmp_path, "multi-turn-prefix")
    p = cli(
        "validate", case, case / "log.threads-ts.jsonl", "--dialect", "threads-ts", cwd=tmp_path
    )
    assert p.returncode == 0, p.stderr
    assert f"{case}: valid" in p.stdout
    assert f"{case / 'log.threads-ts.jsonl'}: valid" in p.stdout
    folder = cli("validate", "--format", "json", "cases", cwd=tmp_path)
    assert folder.returncode == 0
    assert json.loads(folder.stdout) == {
        "case": str(Path("cases/multi-turn-prefix")),
        "problems": [],
        "valid": True,
    }


def test_validate_reports_every_problem_of_a_case(tmp_path: Path) -> None:
    case = copy(tmp_path, "multi-turn-prefix")
    rewrite(case / "model.json", lambda d: d["replies"][0].update(bogus=1))
    rewrite(case / "stubs.json", lambda d: d.update(calls="none"))
    rewrite(case / "expected.threads-py.json", lambda d: d.update(last_seq=5))
    rewrite(case / "case.json", lambda d: d.update(at="main.21"))
    artifact = sorted((case / "artifacts").iterdir())[0]
    artifact.unlink()
    (case / "notes.txt").write_text("stray")
    rewrite_event(case / "log.threads-ts.jsonl", 12, lambda e: e["data"].update(content="changed"))
    p = cli("validate", case, cwd=tmp_path)
    assert p.returncode == 1
    err = p.stderr
    assert "unknown file notes.txt" in err
    assert "model.json: /replies/0: schema: " in err and "'bogus'" in err
    assert "stubs.json: /calls: schema: " in err
    assert f"artifact sha256:{artifact.name} is not in artifacts/" in err
    assert "the fork point 'main.21' is event 21, not the last event" in err
    assert "error[state_mismatch]: " in err and "/last_seq" in err
    assert "log.threads-ts.jsonl:13: /data/content: event differs from log.threads-py.jsonl" in err
    assert "error[fingerprint_stale]: " in err
    count = int(err.strip().splitlines()[-1].split(": ")[1].split()[0])
    assert count >= 10

    j = cli("validate", "--format", "json", case, CASES / "reads-notes", cwd=tmp_path)
    doc = json.loads(j.stdout)
    assert j.returncode == 1 and doc["valid"] is False
    assert [r["valid"] for r in doc["results"]] == [False, True]
    codes = {p["code"] for p in doc["results"][0]["problems"]}
    assert codes == {"case_invalid", "state_mismatch", "fingerprint_stale"}


def test_validate_json_gives_each_problem_the_hint_the_text_shows(tmp_path: Path) -> None:
    """A CI script reading `validate --format json` gets what to do about each problem, the
    same words the text output prints under it."""
    case = copy(tmp_path, "multi-turn-prefix")
    rewrite(case / "model.json", lambda d: d["replies"][0].update(bogus=1))
    rewrite(case / "expected.threads-py.json", lambda d: d.update(last_seq=5))
    (case / "notes.txt").write_text("stray")
    (case / "stubs.json").write_text('{"format": 1, "calls": [],}')
    text = cli("validate", case, cwd=tmp_path)
    assert text.returncode == 1
    errors = [line for line in text.stderr.splitlines() if line.startswith("error[")]
    shown = [line.removeprefix("  hint: ") for line in text.stderr.splitlines() if "hint: " in line]
    j = cli("validate", "--format", "json", case, cwd=tmp_path)
    assert j.returncode == 1
    problems = json.loads(j.stdout)["problems"]
    assert len(problems) == len(errors) >= 4
    assert all(set(p) == {"code", "message", "file", "line", "pointer", "hint"} for p in problems)
    assert all(p["hint"] for p in problems)
    assert problems[0]["hint"] == shown[0]  # the text prints a hint once, under its first problem
    assert sorted({p["hint"] for p in problems}) == sorted(shown)
    not_json = [p for p in problems if p["file"].endswith("stubs.json")]
    assert not_json and "strict JSON" in not_json[0]["hint"]


def test_validate_a_case_json_that_is_a_folder(tmp_path: Path) -> None:
    """`mkdir -p c1/case.json`: not "missing" but what it is, with the same code."""
    (tmp_path / "c1" / "case.json").mkdir(parents=True)
    p = cli("validate", "c1", cwd=tmp_path)
    assert p.returncode == 1
    assert p.stderr.startswith("error[case_invalid]: c1: case.json is a folder, not a file\n")
    assert "  hint: case.json must be a regular file" in p.stderr
    j = json.loads(cli("validate", "--format", "json", "c1", cwd=tmp_path).stdout)
    [problem] = j["problems"]
    assert problem["message"] == "case.json is a folder, not a file"
    assert problem["hint"].startswith("case.json must be a regular file")


def test_fmt_and_diff_name_a_case_json_that_is_a_folder(tmp_path: Path) -> None:
    """fmt and diff check case.json outside the loader: they say what it is, as validate
    does (a missing one keeps its message)."""
    (tmp_path / "c1" / "case.json").mkdir(parents=True)
    good = copy(tmp_path, "weather-stub")
    f = cli("fmt", "--check", "c1", cwd=tmp_path)
    assert f.returncode == 1
    assert "error[case_invalid]: c1: case.json is a folder, not a file\n" in f.stderr
    assert "missing" not in f.stderr
    for args in (["c1", good], [good, "c1"]):
        d = cli("diff", *args, cwd=tmp_path)
        assert d.returncode == 2
        first = d.stderr.splitlines()[0]
        assert first == "error[invalid_request]: c1: case.json is a folder, not a file"
        assert "  hint: case.json must be a regular file" in d.stderr
    (tmp_path / "c2").mkdir()
    d = cli("diff", "c2", good, cwd=tmp_path)
    assert "c2: not a case directory: case.json is missing" in d.stderr


def test_validate_a_case_with_broken_json_and_a_missing_file(tmp_path: Path) -> None:
    case = copy(tmp_path, "weather-stub")
    (case / "model.json").write_text('{"format": 1, "replies": [NaN]}')
    (case / "expected.threads-ts.json").unlink()
    (case / "log.threads-py.jsonl").write_bytes(b"\n")
    p = cli("validate", case, cwd=tmp_path)
    assert p.returncode == 1
    assert "expected.threads-ts.json is missing" in p.stderr
    assert "error[case_invalid]: " in p.stderr and "model.json" in p.stderr
    assert "error[log_invalid]: " in p.stderr and "blank line" in p.stderr
    assert cli("validate", tmp_path / "empty-nothing", cwd=tmp_path).returncode == 2  # no such path


# --------------------------------------------------------------------------- stale


def test_stale_lists_cases_with_unused_recordings(tmp_path: Path) -> None:
    extra = copy(tmp_path, "weather-stub")
    copy(tmp_path, "reads-notes")
    rewrite(extra / "model.json", lambda d: d["replies"].append(d["replies"][-1]))

    none = cli("stale", cwd=tmp_path)
    assert none.returncode == 2 and "no report at" in none.stderr

    run = cli("run", "--impl", "threads-py", "--format", "json", "cases", cwd=tmp_path)
    assert run.returncode == 0, run.stderr  # drifted still passes
    p = cli("stale", cwd=tmp_path)
    assert p.returncode == 0
    assert "weather-stub" in p.stdout and "reads-notes" not in p.stdout
    assert "1 of 3 recorded replies were never used" in p.stdout
    j = cli("stale", "cases", "--format", "json", cwd=tmp_path)
    doc = json.loads(j.stdout)
    assert [e["case"] for e in doc["stale"]] == ["weather-stub"]
    assert doc["stale"][0]["codes"] == ["reply_unused"]
    assert doc["stale"][0]["implementations"] == ["threads-py"]
    other = cli("stale", tmp_path / "cases" / "reads-notes", "--format", "json", cwd=tmp_path)
    assert json.loads(other.stdout)["stale"] == []
    moved = tmp_path / "r.jsonl"
    shutil.copy(tmp_path / ".threads-cases" / "last-report.jsonl", moved)
    assert "weather-stub" in cli("stale", "--report", moved, cwd=tmp_path).stdout
