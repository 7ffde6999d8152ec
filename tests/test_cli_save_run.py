"""The `save` and `run` commands, run as real subprocesses (cwd = tmp_path, so the last
report goes to tmp_path/.threads-cases/)."""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import EXPECT, build_thread, cli

from threads_cases.core.canonical import canonical_document, canonical_line
from threads_cases.core.schemas import validator
from threads_cases.core.strictjson import read_json_file

CopyCase = Callable[[str], Path]


def cli_many(cwd: Path, *argvs: tuple[str | Path, ...]) -> list[subprocess.CompletedProcess[str]]:
    """Several independent invocations, one after the other: the worker's fork server takes
    one call at a time, and a call made meanwhile from another thread is a real subprocess
    (about four times the CPU of a forked one)."""
    return [cli(*a, cwd=cwd) for a in argvs]


def parse_run(p: subprocess.CompletedProcess[str]) -> tuple[int, list[dict[str, Any]]]:
    """A JSON Lines report, or a refusal: the one line ``{"code","message","hint"}``."""
    assert "Traceback" not in p.stderr, p.stderr
    if p.returncode == 2:
        return 2, [json.loads(p.stdout)]
    lines = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    return p.returncode, lines


def run_json(cwd: Path, *args: str | Path) -> tuple[int, list[dict[str, Any]]]:
    return parse_run(cli("run", "--impl", "threads-py", "--format", "json", *args, cwd=cwd))


def results(lines: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["case"]: r for r in lines if r.get("kind") == "result"}


def rewrite(path: Path, change: Callable[[Any], None]) -> None:
    doc = read_json_file(path)
    change(doc)
    path.write_bytes(canonical_document(doc))


def drop_last_reply(case: Path) -> dict[str, Any]:
    doc = read_json_file(case / "model.json")
    dropped = doc["replies"].pop()
    (case / "model.json").write_bytes(canonical_document(doc))
    return {k: dropped[k] for k in ("message", "stop_reason", "usage")}


def files_of(path: Path) -> dict[str, bytes]:
    return {
        p.relative_to(path).as_posix(): p.read_bytes()
        for p in sorted(path.rglob("*"))
        if p.is_file()
    }


# --------------------------------------------------------------------------- save


@pytest.fixture
def log_on_disk(tmp_path: Path) -> tuple[Path, Path, str, Path]:
    """A recorded thread written as a log and an artifacts folder, and the same case saved
    through the API (for comparison)."""
    t, at = build_thread()
    t.write_log(tmp_path / "thread.jsonl")
    t.write_artifacts(tmp_path / "artifacts")
    assert t.save_case("api", at=at, expect=EXPECT, dir=tmp_path / "api").ok
    return tmp_path / "thread.jsonl", tmp_path / "artifacts", at, tmp_path / "api" / "api"


def musts() -> list[str]:
    args = []
    for m in EXPECT.must:
        args += ["--must", json.dumps(m, ensure_ascii=False)]
    for m in EXPECT.expect:
        args += ["--expect", json.dumps(m)]
    return args


def test_cli_save_writes_the_same_case_as_the_api(tmp_path: Path, log_on_disk) -> None:  # type: ignore[no-untyped-def]
    log, arts, at, api_case = log_on_disk
    p = cli(
        "save",
        log,
        "--at",
        at,
        "--name",
        "api",
        "--dir",
        "out",
        "--artifacts",
        arts,
        "--json",
        *musts(),
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["outcome"] == "created" and out["portable"] is True
    assert Path(out["path"]) == Path("out") / "api"
    assert "unredacted" in p.stderr  # the raw-data warning
    assert files_of(tmp_path / "out" / "api") == files_of(api_case)
    assert out["fingerprint"] == json.loads((api_case / "case.json").read_bytes())["fingerprint"]
    # again: unchanged; a different case: case_exists (exit 2) unless --overwrite
    p = cli(
        "save",
        log,
        "--at",
        at,
        "--name",
        "api",
        "--dir",
        "out",
        "--artifacts",
        arts,
        "--json",
        *musts(),
        cwd=tmp_path,
    )
    assert p.returncode == 0 and json.loads(p.stdout)["outcome"] == "unchanged"
    p = cli(
        "save",
        log,
        "--at",
        at,
        "--name",
        "api",
        "--dir",
        "out",
        "--artifacts",
        arts,
        "--json",
        cwd=tmp_path,
    )
    assert p.returncode == 2
    assert json.loads(p.stdout)["code"] == "case_exists"
    p = cli(
        "save",
        log,
        "--at",
        at,
        "--name",
        "api",
        "--dir",
        "out",
        "--artifacts",
        arts,
        "--overwrite",
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("replaced ")


def test_cli_save_refusals_exit_2_with_code_and_message(tmp_path: Path, log_on_disk) -> None:  # type: ignore[no-untyped-def]
    log, arts, at, _ = log_on_disk
    lines = log.read_bytes().splitlines(keepends=True)
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(b"".join(lines[:3] + lines[4:]))  # a seq gap
    t, _ = build_thread()
    t.write_log(tmp_path / "ts.jsonl", dialect="threads-ts")
    alone = tmp_path / "alone" / "thread.jsonl"
    alone.parent.mkdir()
    alone.write_bytes(log.read_bytes())
    cases = [
        ((broken, "--at", at, "--name", "x", "--dir", "out", "--artifacts", arts), "log_invalid"),
        (
            ("ts.jsonl", "--at", at, "--name", "x", "--dir", "out", "--artifacts", arts),
            "log_invalid",
        ),  # a threads-ts log read as threads-py: keys of another dialect
        (
            (log, "--at", at, "--name", "CON", "--dir", "out", "--artifacts", arts),
            "invalid_request",
        ),
        (
            (log, "--at", at, "--name", "x", "--dir", "out", "--artifacts", arts, "--must", "{bad"),
            "invalid_request",
        ),
        # no artifacts: no --artifacts, and no artifacts/ folder beside the log
        ((alone, "--at", at, "--name", "x", "--dir", "out"), "invalid_request"),
    ]
    procs = cli_many(tmp_path, *[("save", *args, "--json") for args, _ in cases])
    texts = cli_many(tmp_path, *[("save", *args) for args, _ in cases])
    for (args, code), p, text in zip(cases, procs, texts, strict=True):
        assert p.returncode == text.returncode == 2, (args, p.stdout, p.stderr)
        assert "Traceback" not in p.stderr
        assert p.stdout.count("\n") == 1, p.stdout  # one line, as run's refusal
        doc = json.loads(p.stdout)
        assert p.stdout == canonical_line(doc).decode() + "\n"
        assert set(doc) == {"code", "message", "hint"} and doc["code"] == code, (args, doc)
        assert doc["message"] and doc["hint"]
        # the same words as the text refusal: the message (led by the location) and the hint
        [error, hint] = [x for x in text.stderr.splitlines() if not x.startswith("warning")]
        assert (error, hint) == (f"error[{code}]: {doc['message']}", f"  hint: {doc['hint']}")
    assert procs[0].stdout.startswith('{"code":"log_invalid","hint":')
    assert f'"message":"{broken}:4: /seq: seq gap' in procs[0].stdout  # file, line, pointer
    assert not (tmp_path / "out" / "x").exists()
    # without --json: one error line on stderr, nothing on stdout
    p = cli("save", broken, "--at", at, "--name", "x", "--dir", "out", cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.startswith("error[log_invalid]: ")
    assert "seq" in p.stderr and "Traceback" not in p.stderr


def test_a_refused_save_result_carries_its_hint_and_location(tmp_path: Path, log_on_disk) -> None:  # type: ignore[no-untyped-def]
    """``SaveResult.to_json`` of a refusal: ``{"ok": false, "code", "message", "hint"}`` and
    the keys of ``Problem.to_json`` for the location parts the refusal has."""
    from threads_cases.case.save import SaveError, SaveResult
    from threads_cases.core.errors import CaseError
    from threads_cases.save_log import save_log

    log, arts, at, _ = log_on_disk
    lines = log.read_bytes().splitlines(keepends=True)
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(b"".join(lines[:3] + lines[4:]))  # a seq gap
    doc = save_log(broken, name="x", dir=tmp_path / "out", at=at, artifacts=arts).to_json()
    assert doc.pop("message").startswith("seq gap"), doc
    assert doc == {
        "ok": False,
        "code": "log_invalid",
        "hint": CaseError("log_invalid", "").hint,
        "file": str(broken),
        "line": 4,
        "pointer": "/seq",
    }
    bare = SaveResult(False, error=SaveError("case_exists", "out/x is a file")).to_json()
    assert bare == {"ok": False, "code": "case_exists", "message": "out/x is a file"}
    hinted = SaveError.of(CaseError("invalid_request", "bad name", pointer=""))
    assert hinted.to_json() == {
        "code": "invalid_request",
        "message": "bad name",
        "hint": "check the command's arguments with --help",
        "pointer": "",
    }
    assert str(hinted.error()) == "/: bad name"


def test_cli_save_reads_a_threads_ts_log(tmp_path: Path, log_on_disk) -> None:  # type: ignore[no-untyped-def]
    _log, arts, at, api_case = log_on_disk
    t, _ = build_thread()
    t.write_log(tmp_path / "ts.jsonl", dialect="threads-ts")
    p = cli(
        "save",
        "ts.jsonl",
        "--dialect",
        "threads-ts",
        "--at",
        at,
        "--name",
        "api",
        "--dir",
        "ts-out",
        "--artifacts",
        arts,
        "--json",
        *musts(),
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert files_of(tmp_path / "ts-out" / "api") == files_of(api_case)


# --------------------------------------------------------------------------- run


@pytest.fixture
def mixed_suite(tmp_path: Path, conformance_case: CopyCase) -> Path:
    """cases/: reads-notes (pass), weather-stub (fail: a reply dropped), broken (error)."""
    conformance_case("reads-notes")
    drop_last_reply(conformance_case("weather-stub"))
    broken = tmp_path / "cases" / "broken"
    broken.mkdir()
    (broken / "case.json").write_text('{"format": 1, "name": ')
    return tmp_path / "cases"


def test_run_json_report_junit_and_exit_3(tmp_path: Path, mixed_suite: Path) -> None:
    status, lines = run_json(tmp_path, mixed_suite, "--junit", tmp_path / "out" / "junit.xml")
    assert status == 3
    v = validator("report.schema.json")
    for line in lines:
        assert list(v.iter_errors(line)) == [], line
    assert [line["kind"] for line in lines] == ["header", "result", "result", "result", "footer"]
    header, footer = lines[0], lines[-1]
    assert header["command"] == "run" and header["implementations"] == ["threads-py"]
    by = results(lines)
    assert by["reads-notes"]["verdict"] == "pass"
    assert by["weather-stub"]["verdict"] == "fail"
    assert by["weather-stub"]["stop"]["stop_key"] == "model:1"
    assert by["broken"]["verdict"] == "error" and by["broken"]["reasons"] == ["case_invalid"]
    assert footer["counts"] == {
        "pass": 1,
        "drifted": 0,
        "fail": 1,
        "error": 1,
        "skip": 0,
        "xfail": 0,
        "xpass": 0,
    }
    assert footer["total"] == 3 and footer["exit_status"] == 3
    # the last report holds the same lines
    last = [
        json.loads(x)
        for x in (tmp_path / ".threads-cases" / "last-report.jsonl").read_text().splitlines()
    ]
    assert results(last).keys() == by.keys()
    # JUnit
    root = ET.parse(tmp_path / "out" / "junit.xml").getroot()
    assert root.tag == "testsuites"
    assert {k: root.get(k) for k in ("tests", "failures", "errors", "skipped")} == {
        "tests": "3",
        "failures": "1",
        "errors": "1",
        "skipped": "0",
    }
    (suite,) = root.findall("testsuite")
    assert suite.get("name") == "threads-py"
    cases = {tc.get("name"): tc for tc in suite.findall("testcase")}
    assert set(cases) == {"reads-notes", "weather-stub", "broken"}
    assert list(cases["reads-notes"]) == []
    failure = cases["weather-stub"].find("failure")
    assert failure is not None and "model_exhausted" in (failure.get("type") or "")
    error = cases["broken"].find("error")
    assert error is not None and error.get("type") == "case_invalid"


def test_run_all_pass_exits_0(tmp_path: Path, conformance_case: CopyCase) -> None:
    for n in ("reads-notes", "on-a-fork", "binary-file"):
        conformance_case(n)
    status, lines = run_json(tmp_path, "cases")
    assert status == 0
    assert lines[-1]["counts"]["pass"] == 3 and lines[-1]["exit_status"] == 0
    # the pretty format and the default path (the current folder)
    p = cli("run", "--impl", "threads-py", cwd=tmp_path / "cases")
    assert p.returncode == 0, p.stderr
    assert "3 pass" in p.stdout


def test_run_refuses_a_malformed_supply(tmp_path: Path, conformance_case: CopyCase) -> None:
    """The CLI's path for a refused supply file; every malformed shape is checked through
    the API (test_runner.py::test_a_malformed_supply_is_invalid_request)."""
    conformance_case("reads-notes")
    (tmp_path / "supply.json").write_text('{"calls": {"model:1": "not a reply"}}')
    p = cli(
        "run", "cases", "--impl", "threads-py", "--format", "json", "--supply", "supply.json",
        cwd=tmp_path,
    )  # fmt: skip
    status, lines = parse_run(p)
    assert status == 2, (p.stdout, p.stderr)
    assert len(lines) == 1 and set(lines[0]) == {"code", "message", "hint"}
    assert lines[0]["code"] == "invalid_request"
    assert not (tmp_path / ".threads-cases").exists()


def test_run_refusals_before_start_exit_2(tmp_path: Path, conformance_case: CopyCase) -> None:
    (tmp_path / "empty").mkdir()
    conformance_case("reads-notes")
    js = ("--format", "json")
    empty, impl, nothing = cli_many(
        tmp_path,
        ("run", "empty", "--impl", "threads-py", *js),
        ("run", "cases", "--impl", "no-such-impl", *js),
        ("run", "cases", "--impl", "threads-py", "-k", "no-case-has-this-name", *js),
    )
    hint = "pass a directory holding case directories (each with a case.json), or check -k"
    none = {"code": "invalid_request", "message": "no cases found", "hint": hint}
    assert parse_run(empty) == (2, [none])
    status, (doc,) = parse_run(impl)
    assert status == 2 and set(doc) == {"code", "message", "hint"}
    assert "no-such-impl" in doc["message"]
    status, (doc,) = parse_run(nothing)
    assert status == 2 and doc["code"] == "invalid_request"
    assert not (tmp_path / ".threads-cases").exists()  # nothing ran, nothing reported


def test_drifted_passes_unless_strict(tmp_path: Path, conformance_case: CopyCase) -> None:
    path = conformance_case("weather-stub")
    rewrite(path / "stubs.json", lambda d: d["calls"][0]["result"].__setitem__("content", "x"))
    status, lines = run_json(tmp_path, "cases")
    assert status == 0 and results(lines)["weather-stub"]["verdict"] == "drifted"
    assert results(lines)["weather-stub"]["reasons"] == ["request_diverged"]
    status, lines = run_json(tmp_path, "cases", "--strict", "--junit", "j.xml")
    assert status == 3 and lines[-1]["exit_status"] == 3
    assert ET.parse(tmp_path / "j.xml").getroot().get("failures") == "1"


def test_max_fail_marks_the_runs_it_never_started(
    tmp_path: Path, conformance_case: CopyCase
) -> None:
    conformance_case("lists-files")
    drop_last_reply(tmp_path / "cases" / "lists-files")  # fails on threads-py, run first
    run = ("run", "cases", "--max-fail", "1", "-j", "1")
    p = cli(*run, cwd=tmp_path)
    assert p.returncode == 3, p.stdout + p.stderr
    row = next(line for line in p.stdout.splitlines() if line.startswith("│ lists-files"))
    assert "fail" in row and "- not run" in row  # threads-ts's cell, not a blank
    assert "1 run(s) not started" in p.stdout
    summary = tmp_path / "summary.md"
    cli(*run, "--format", "github", cwd=tmp_path, env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert "| - not run |" in summary.read_text(encoding="utf-8")


def test_k_max_fail_and_last_failed(tmp_path: Path, conformance_case: CopyCase) -> None:
    for n in ("reads-notes", "weather-stub", "writes-summary", "lists-files"):
        conformance_case(n)
    dropped = {n: drop_last_reply(tmp_path / "cases" / n) for n in ("weather-stub", "lists-files")}
    status, lines = run_json(tmp_path, "cases", "-k", "w*")
    assert status == 3 and set(results(lines)) == {"weather-stub", "writes-summary"}
    status, lines = run_json(tmp_path, "cases", "--max-fail", "1", "-j", "1")
    assert status == 3
    assert [(r["case"], r["verdict"]) for r in results(lines).values()] == [("lists-files", "fail")]
    # the full run, then --last-failed runs only what failed
    status, lines = run_json(tmp_path, "cases")
    assert status == 3 and len(results(lines)) == 4
    status, lines = run_json(tmp_path, "cases", "--last-failed")
    assert status == 3
    assert set(results(lines)) == {"weather-stub", "lists-files"}
    # repair one: --last-failed now runs the two that failed, one passes
    rewrite(
        tmp_path / "cases" / "lists-files" / "model.json",
        lambda d: d["replies"].append({"request_sha256": "0" * 64, **dropped["lists-files"]}),
    )
    status, lines = run_json(tmp_path, "cases", "--last-failed")
    assert {r["case"]: r["verdict"] for r in results(lines).values()} == {
        "weather-stub": "fail",
        "lists-files": "drifted",
    }


def test_supply_and_missing_stub_on_the_cli(tmp_path: Path, conformance_case: CopyCase) -> None:
    weather = conformance_case("weather-stub")
    reply = drop_last_reply(weather)
    email = conformance_case("email-write-effect")
    rewrite(email / "stubs.json", lambda d: d.__setitem__("calls", []))
    status, lines = run_json(tmp_path, "cases")
    assert status == 3
    by = results(lines)
    assert by["weather-stub"]["stop"]["code"] == "model_exhausted"
    assert by["email-write-effect"]["verdict"] == "fail"
    assert by["email-write-effect"]["reasons"][0] == "missing_stub"
    assert by["email-write-effect"]["stop"]["stop_key"] == "tool:send_email"
    (tmp_path / "supply.json").write_text(
        json.dumps(
            {"calls": {"model:1": reply, "tool:send_email": "queued message to ana@example.com"}}
        )
    )
    status, lines = run_json(tmp_path, "cases", "--supply", "supply.json")
    by = results(lines)
    assert by["weather-stub"]["stop"] is None
    assert by["weather-stub"]["verdict"] == "pass", by["weather-stub"]
    assert by["weather-stub"]["warnings"] == ["fingerprint_stale"]
    assert by["email-write-effect"]["stop"] is None
    assert by["email-write-effect"]["verdict"] == "pass", by["email-write-effect"]
    assert status == 0


@pytest.mark.parametrize(
    ("supply", "message"),
    [
        ({"x": 1}, 'supply.json: a supply must be {"calls": {...}}'),
        ({"calls": {"zz": 1}}, "supply.json: /calls/zz: the supply's key 'zz' must be"),
    ],
)
def test_a_malformed_supply_is_named_once_with_its_shape(
    tmp_path: Path, conformance_case: CopyCase, supply: object, message: str
) -> None:
    conformance_case("weather-stub")
    (tmp_path / "supply.json").write_text(json.dumps(supply))
    p = cli("run", "cases", "--impl", "threads-py", "--supply", "supply.json", cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    assert f"error[invalid_request]: {message}" in p.stderr
    assert p.stderr.count("supply.json") == 1  # the place, not the place again as the subject
    shape = '{"calls": {"model:<n>": <reply>, "tool:<name>": <result>}}'
    assert f"hint: a supply is {shape}" in p.stderr


def test_run_schema_prints_the_report_schema(tmp_path: Path) -> None:
    p = cli("run", "--schema", cwd=tmp_path)
    assert p.returncode == 0
    doc = json.loads(p.stdout)
    assert doc["$id"].endswith("/report.schema.json")
    assert set(doc["$defs"]) >= {"header", "result", "footer"}
