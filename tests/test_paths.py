"""Paths never escape their directory: case names, sandbox paths and artifact names.

Each hostile path is refused with its reason code: ``invalid_request`` for a case name
given to ``save`` and for a sandbox path (``check_path``), ``case_invalid`` for a case whose
files hold such a path (``sandbox.json``, the name in ``case.json``, an artifact reference,
a symlink inside the case), ``log_invalid`` for a log holding one (spec/thread-log.md 6),
``case_exists`` for a save whose target is a symlink (spec/case-format.md 6.1 step 4), and
an ``is_error`` tool result for a tool input path during a replay (spec/replay.md 3.3).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import cli, ts_built

from threads_cases.case.directory import check_case_name
from threads_cases.case.loader import inspect_case, open_case
from threads_cases.case.sandbox import check_path
from threads_cases.core.canonical import canonical_document, canonical_line
from threads_cases.core.errors import CaseError
from threads_cases.core.log import check_events, validate_log
from threads_cases.harness.run.runner import run_case
from threads_cases.reference.replay import replay_case
from threads_cases.review import validate_case

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "spec" / "conformance" / "cases"
SAMPLE_LOG = ROOT / "tests" / "data" / "sample-thread.jsonl"
ART = "ff7cf6a9d385b78fa031457a9cdfb4547207877e42217c84e2cc08128f176545"
TS_BUILT = ts_built()

DEVICES = [
    "CON",
    "PRN",
    "AUX",
    "NUL",
    *[f"COM{i}" for i in range(1, 10)],
    *[f"LPT{i}" for i in range(1, 10)],
]
#: Each device name in upper, lower and mixed case, bare and with extensions.
DEVICE_NAMES = [
    v
    for d in DEVICES
    for v in (d, d.lower(), d[0] + d[1:].lower() + ".txt", d.lower() + ".tar.gz", d + ".")
]


def copy_case(tmp_path: Path, name: str = "reads-notes") -> Path:
    dest = tmp_path / "cases" / name
    shutil.copytree(CASES / name, dest)
    return dest


def edit(path: Path, pointer: list[str | int], value: Any) -> None:
    doc = json.loads(path.read_bytes())
    cur = doc
    for k in pointer[:-1]:
        cur = cur[k]
    cur[pointer[-1]] = value
    path.write_bytes(canonical_document(doc))


def codes(problems: list[Any]) -> set[tuple[str, str | None]]:
    return {(p.code, p.location.pointer) for p in problems}


def run_error(case: Path) -> tuple[str, str]:
    r = run_case(case)
    assert r.verdict == "error", r.to_json()
    return r.reasons[0], r.message


# --------------------------------------------------------------------------- case names


@pytest.mark.parametrize(
    "name",
    [
        "..",
        ".",
        "../x",
        "a/../b",
        "x/..",
        "/tmp/x",
        "/",
        "a\\b",
        "..\\x",
        "a\x00b",
        "\x00",
        "a/b",
        "",
    ],
)
def test_bad_case_names_are_invalid_request(name: str) -> None:
    with pytest.raises(CaseError) as info:
        check_case_name(name)
    assert info.value.code == "invalid_request"


@pytest.mark.parametrize("name", DEVICE_NAMES)
def test_device_case_names_are_invalid_request(name: str) -> None:
    with pytest.raises(CaseError) as info:
        check_case_name(name)
    assert info.value.code == "invalid_request"
    assert "device" in info.value.message


@pytest.mark.parametrize("name", ["CONSOLE", "com10", "con-x", "lpt", "auxiliary", "nul_", "COM0x"])
def test_names_near_device_names_are_allowed(name: str) -> None:
    assert check_case_name(name) == name


def test_save_refuses_escaping_and_device_names(tmp_path: Path) -> None:
    """The real `save` command: exit 2, invalid_request, nothing written anywhere."""
    (tmp_path / "out").mkdir()
    for name in ("..", "../escaped", "Com1.log"):
        p = cli(
            "save", SAMPLE_LOG, "--at", "e0", "--name", name, "--dir", "out", "--json", cwd=tmp_path
        )
        assert p.returncode == 2, p.stderr
        assert json.loads(p.stdout)["code"] == "invalid_request", p.stdout
    assert sorted(os.listdir(tmp_path)) == ["out"]
    assert os.listdir(tmp_path / "out") == []


NON_ASCII = "café-ñ-日本語"
ASCII_RULE = "must be 1-64 ASCII letters, digits, '.', '_' or '-'"


@pytest.mark.parametrize("name", [NON_ASCII, "é", "x" * 65, "a b"])
def test_the_case_name_message_says_the_rule_is_ascii(name: str) -> None:
    """Letters such as é or 日 are letters to a user: the message says the rule is ASCII."""
    with pytest.raises(CaseError) as info:
        check_case_name(name)
    assert info.value.message.endswith(ASCII_RULE)


def test_save_with_a_non_ascii_name_says_ascii(tmp_path: Path) -> None:
    p = cli("save", SAMPLE_LOG, "--at", "e0", "--name", NON_ASCII, "--dir", ".", cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.startswith(f'error[invalid_request]: case name "{NON_ASCII}" {ASCII_RULE}')
    help_text = cli("save", "--help", cwd=tmp_path).stdout
    assert "ASCII letters" in " ".join(help_text.split())


def test_a_non_ascii_branch_id_says_ascii() -> None:
    from threads_cases.reference.thread import Thread

    t = Thread.open(SAMPLE_LOG)
    with pytest.raises(CaseError) as info:
        t.fork(t.events[0]["event_id"], branch_id="essai-é")
    assert info.value.message.endswith("may hold only ASCII letters, digits, '.', '_' or '-'")


@pytest.mark.skipif(not ts_built(), reason="the TypeScript driver is not built")
def test_both_languages_refuse_a_non_ascii_name_with_the_same_message() -> None:
    """The same refusal, word for word, from the Python and the TypeScript writer."""
    from conftest import reference_drivers

    from threads_cases.core.log import read_log

    log = list(read_log(SAMPLE_LOG))
    messages = {}
    for drv in reference_drivers():
        try:
            with pytest.raises(CaseError) as info:
                drv.request(
                    {
                        "cmd": "write_case",
                        "thread": {"log": log, "dialect": "threads-py", "artifacts": {}},
                        "name": NON_ASCII,
                        "at": log[0]["event_id"],
                        "expect": {"must": [], "expect": []},
                        "external_effects": "stub",
                    }
                )
        finally:
            drv.close()
        message = info.value.message.removeprefix(f"{drv.name}: ")  # the client names it
        messages[drv.name] = (info.value.code, message)
    assert len(set(messages.values())) == 1, messages
    assert messages["threads-py"] == ("invalid_request", f'case name "{NON_ASCII}" {ASCII_RULE}')


@pytest.mark.parametrize("name", ["..", "CON", "nul.txt", "Lpt3.log", ".hidden"])
def test_case_json_name_that_is_not_a_directory_name(tmp_path: Path, name: str) -> None:
    case = copy_case(tmp_path)
    edit(case / "case.json", ["name"], name)
    with pytest.raises(CaseError) as info:
        open_case(case)
    assert (info.value.code, info.value.location.pointer) == ("case_invalid", "/name")
    assert ("case_invalid", "/name") in codes(validate_case(case))
    assert run_error(case)[0] == "case_invalid"


def test_save_into_a_target_that_is_a_symlink(tmp_path: Path) -> None:
    """--dir DIR --name NAME where DIR/NAME is a symlink to a folder outside: case_exists
    (spec/case-format.md 6.1 step 4), and nothing is written through the link."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "mycase").symlink_to(outside)
    p = cli(
        "save", SAMPLE_LOG, "--at", "e0", "--name", "mycase", "--dir", "out", "--json", cwd=tmp_path
    )
    assert p.returncode == 2, p.stderr
    assert json.loads(p.stdout)["code"] == "case_exists"
    assert os.listdir(outside) == []
    assert (tmp_path / "out" / "mycase").is_symlink()
    assert [n for n in os.listdir(tmp_path / "out") if n != "mycase"] == []


# --------------------------------------------------------------------------- sandbox paths

BAD_SANDBOX_PATHS = [
    "../notes.txt",
    "a/../../notes.txt",
    "./notes.txt",
    "/etc/passwd",
    "a\\notes.txt",
    "..\\notes.txt",
    "notes\x00.txt",
    "a//b",
    "a/",
]


@pytest.mark.parametrize(
    "path", [*BAD_SANDBOX_PATHS, *DEVICE_NAMES, *[f"docs/{d}/x.txt" for d in DEVICE_NAMES[::5]]]
)
def test_check_path_refuses(path: str) -> None:
    with pytest.raises(CaseError) as info:
        check_path(path)
    assert info.value.code == "invalid_request"


@pytest.mark.parametrize("path", [*BAD_SANDBOX_PATHS, "CON", "docs/aux.md", "com9.TXT/x"])
def test_sandbox_json_path_is_case_invalid(tmp_path: Path, path: str) -> None:
    case = copy_case(tmp_path)
    edit(case / "sandbox.json", ["reads", 0, "path"], path)
    assert ("case_invalid", "/reads/0/path") in codes(validate_case(case))
    code, message = run_error(case)
    assert code == "case_invalid"
    assert "sandbox.json" in message and "/reads/0/path" in message
    with pytest.raises(CaseError) as info:  # the library replay checks it too
        replay_case(case)
    assert info.value.code == "case_invalid"


def _thread_started() -> dict[str, Any]:
    return json.loads((CASES / "reads-notes" / "log.threads-py.jsonl").read_bytes())


@pytest.mark.parametrize("path", ["../notes.txt", "/etc/passwd", "a\\b", "a\x00b"])
def test_sandbox_path_in_a_log_is_log_invalid(tmp_path: Path, path: str) -> None:
    """A log is checked by the log reader: such a path is log_invalid at /data/path (the
    log's own reason code, spec/thread-log.md 6), in a log file and inside a case."""
    start = _thread_started()
    read = {
        **start,
        "seq": 1,
        "event_id": "main.1",
        "type": "sandbox_read",
        "actor_kind": "tool",
        "data": {"path": path, "sha256": ART, "size": 27, "artifact": f"sha256:{ART}"},
    }
    with pytest.raises(CaseError) as info:
        list(check_events([start, read]))
    assert (info.value.code, info.value.location.pointer) == ("log_invalid", "/data/path")
    case = copy_case(tmp_path)
    log = case / "log.threads-py.jsonl"
    log.write_bytes(canonical_line(start) + b"\n" + canonical_line(read) + b"\n")
    assert [(p.code, p.location.line, p.location.pointer) for p in validate_log(log)] == [
        ("log_invalid", 2, "/data/path")
    ]
    assert ("log_invalid", "/data/path") in codes(validate_case(case))
    r = run_case(case)
    assert r.verdict == "error" and r.reasons == ["log_invalid"], r.to_json()


TOOL_PATHS = [
    "../notes.txt",
    "/etc/passwd",
    "a\\notes.txt",
    "notes\x00.txt",
    "CON",
    "docs/Lpt1.txt",
    "nul.txt",
]


@pytest.mark.parametrize("path", TOOL_PATHS)
def test_tool_input_path_during_replay_is_an_error_result(tmp_path: Path, path: str) -> None:
    """The model asks read_file for a path outside the sandbox: the tool result is an error
    naming the refusal, the turn goes on, nothing outside is read."""
    case = copy_case(tmp_path)
    edit(case / "model.json", ["replies", 0, "message", "content", 0, "input", "path"], path)
    out = replay_case(case)
    results = [e for e in out["events"] if e["type"] == "tool_result"]
    assert len(results) == 1
    data = results[0]["data"]
    assert data["is_error"] is True
    assert "sandbox path" in data["content"], data["content"]
    assert not [e for e in out["events"] if e["type"] == "sandbox_read"]
    assert out["stop"] is None


@pytest.mark.skipif(
    not TS_BUILT, reason="the TypeScript driver is not built (cd ts && npm run build)"
)
def test_tool_input_paths_cross_language(tmp_path: Path) -> None:
    """Both implementations answer the same refusal for the same hostile tool input path."""
    cases = []
    for i, path in enumerate(TOOL_PATHS):
        case = copy_case(tmp_path / f"p{i}")
        edit(case / "model.json", ["replies", 0, "message", "content", 0, "input", "path"], path)
        cases.append(case)
    out: dict[str, dict[str, Any]] = {}
    for impl in ("threads-py", "threads-ts"):
        p = cli("run", *cases, "--impl", impl, "--format", "json", "--jobs", "1", cwd=tmp_path)
        for line in p.stdout.splitlines():
            doc = json.loads(line)
            if doc.get("kind") == "result":
                out.setdefault(doc["path"], {})[impl] = doc
    for case in cases:
        py, ts = out[str(case)]["threads-py"], out[str(case)]["threads-ts"]
        assert py["verdict"] == ts["verdict"] == "fail", (py, ts)
        assert py["reasons"] == ts["reasons"], (py["reasons"], ts["reasons"])
        # the nearest tool_result (must[1] wants is_error false) holds the refusal text
        near = [c.get("nearest_event") for c in py["checks"] if c["id"] == "must[1]"]
        near_ts = [c.get("nearest_event") for c in ts["checks"] if c["id"] == "must[1]"]
        assert near and near[0]["data"]["content"] == near_ts[0]["data"]["content"]


# --------------------------------------------------------------------------- artifacts


@pytest.mark.parametrize(
    "ref", ["../../secret", "../secret", "/etc/passwd", "..%2F..%2Fsecret", "a\\b", "0" * 63 + "/"]
)
def test_artifact_reference_never_leaves_the_case(tmp_path: Path, ref: str) -> None:
    """sandbox.json naming an artifact by a path: refused by the schema (case_invalid), by
    the run, the library replay and the case loader alike; the loaded case never reads the
    file outside the case."""
    case = copy_case(tmp_path)
    secret = b"secret bytes outside the case\n"
    (tmp_path / "secret").write_bytes(secret)
    (case.parent / "secret").write_bytes(secret)
    edit(case / "sandbox.json", ["reads", 0, "sha256"], ref)
    edit(case / "sandbox.json", ["reads", 0, "artifact"], f"sha256:{ref}")
    found = codes(validate_case(case))
    assert ("case_invalid", "/reads/0/sha256") in found
    assert ("case_invalid", "/reads/0/artifact") in found
    assert run_error(case)[0] == "case_invalid"
    with pytest.raises(CaseError) as info:
        replay_case(case)
    assert info.value.code == "case_invalid"
    with pytest.raises(CaseError):
        open_case(case)  # the loader refuses the case; what it read never leaves the case
    opened = inspect_case(case)[0]
    assert opened is not None and opened.artifact(f"sha256:{ref}") is None


def test_artifact_id_with_dotdot_in_a_log_is_log_invalid() -> None:
    start = _thread_started()
    added = {
        **start,
        "seq": 1,
        "event_id": "main.1",
        "type": "artifact_added",
        "actor_kind": "system",
        "data": {"artifact_id": "sha256:../../etc/passwd", "media_type": "text/plain", "size": 1},
    }
    with pytest.raises(CaseError) as info:
        list(check_events([start, added]))
    assert info.value.code == "log_invalid"
    assert info.value.location.pointer is not None and "artifact_id" in info.value.location.pointer


# --------------------------------------------------------------------------- symlinks


def test_symlink_to_a_file_outside_the_case(tmp_path: Path) -> None:
    case = copy_case(tmp_path)
    outside = tmp_path / "model-outside.json"
    shutil.move(case / "model.json", outside)
    (case / "model.json").symlink_to(outside)
    problems = validate_case(case)
    assert any(
        p.code == "case_invalid"
        and p.location.file == str(case / "model.json")
        and "symlink" in p.message
        for p in problems
    ), problems
    code, message = run_error(case)
    assert code == "case_invalid" and "symlink" in message and "model.json" in message


def test_symlinked_artifacts_folder(tmp_path: Path) -> None:
    case = copy_case(tmp_path)
    outside = tmp_path / "artifacts-outside"
    shutil.move(case / "artifacts", outside)
    (case / "artifacts").symlink_to(outside, target_is_directory=True)
    problems = validate_case(case)
    assert any(
        p.code == "case_invalid"
        and p.location.file == str(case / "artifacts")
        and "symlink" in p.message
        for p in problems
    ), problems
    code, message = run_error(case)
    assert code == "case_invalid" and "artifacts" in message


def test_symlinked_artifact_file(tmp_path: Path) -> None:
    case = copy_case(tmp_path)
    outside = tmp_path / "bytes"
    shutil.move(case / "artifacts" / ART, outside)
    (case / "artifacts" / ART).symlink_to(outside)
    assert any(p.code == "case_invalid" and "symlink" in p.message for p in validate_case(case))
    assert run_error(case)[0] == "case_invalid"
    opened = inspect_case(case)[0]
    assert opened is not None and opened.artifact(f"sha256:{ART}") is None


def test_validate_cli_reports_symlinks(tmp_path: Path) -> None:
    """The real `validate` command on a case with a symlink: exit 1, case_invalid, the file."""
    case = copy_case(tmp_path)
    outside = tmp_path / "stubs-outside.json"
    shutil.move(case / "stubs.json", outside)
    (case / "stubs.json").symlink_to(outside)
    p = cli("validate", case, "--format", "json", cwd=tmp_path)
    assert p.returncode == 1
    problems = json.loads(p.stdout)["problems"]
    assert any(
        q["code"] == "case_invalid" and q["file"] == str(case / "stubs.json") for q in problems
    ), problems
