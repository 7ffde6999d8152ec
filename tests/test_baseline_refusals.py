"""``baseline update`` / ``baseline prune`` are never quieter than ``run``: a named
implementation that cannot start is named on stderr and exits 1 (its entries were not
judged); a named baseline that does not exist is refused by prune (update creates it); and
under JSON output every refusal of run, conformance and baseline is one ``{"code",
"message"}`` line on stdout whose message names the file (spec/reports.md 5.2, replay.md 12)."""

from __future__ import annotations

import importlib
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import CONFORMANCE, cli

import threads_cases.cli as cli_package
from threads_cases.core.errors import CaseError
from threads_cases.harness.baseline.file import Entry, read_baseline, write_baseline

MISSING_DRIVER = '[tool.threads-cases.implementations.mine]\ncommand = ["./no-such-driver"]\n'


def _suite(tmp_path: Path) -> Path:
    for name in ("reads-notes", "lists-files"):
        shutil.copytree(CONFORMANCE / name, tmp_path / "cases" / name)
    return tmp_path / "cases"


@pytest.mark.parametrize("command", ["update", "prune"])
def test_a_named_implementation_that_cannot_start_is_an_operational_error(
    tmp_path: Path, command: str
) -> None:
    _suite(tmp_path)
    (tmp_path / "pyproject.toml").write_text(MISSING_DRIVER)
    target = tmp_path / "b.json"
    write_baseline(target, [Entry("reads-notes", "mine", "known")])
    args = ["baseline", command, "cases", "--impl", "mine", "--baseline", "b.json"]
    p = cli(*args, "--isolation", "guard", cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "error[driver_unavailable]: mine could not start (2 case(s))" in p.stderr
    assert "its baseline entries were not judged" in p.stderr
    assert "not judged: mine could not start" in p.stdout
    assert [e.case for e in read_baseline(target)] == ["reads-notes"]  # kept as it was
    quiet = cli(*args, "--isolation", "guard", "-q", cwd=tmp_path)
    assert quiet.returncode == 1 and "error[driver_unavailable]" in quiet.stderr  # an error
    as_json = cli(*args, "--isolation", "guard", "--json", cwd=tmp_path)
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout)["unavailable"] == ["mine"]


def test_prune_refuses_a_named_baseline_that_does_not_exist_and_update_creates_it(
    tmp_path: Path,
) -> None:
    _suite(tmp_path)
    args = ["cases", "--impl", "threads-py", "--baseline", "b/none.json"]
    p = cli("baseline", "prune", *args, cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "error[invalid_request]: b/none.json: no baseline file here" in p.stderr
    assert p.stdout == ""
    p = cli("baseline", "prune", *args, "--json", cwd=tmp_path)
    assert p.returncode == 2
    assert json.loads(p.stdout) == {
        "code": "invalid_request",
        "message": "b/none.json: no baseline file here",
        "hint": "create it with `threads-cases baseline update PATHS` (or fix the path)",
    }
    assert not (tmp_path / "b").exists()
    p = cli("baseline", "update", *args, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert read_baseline(tmp_path / "b" / "none.json").entries == ()


@pytest.mark.parametrize(
    "args",
    [
        ["run", "cases", "--format", "json"],
        ["baseline", "update", "cases", "--json"],
        ["baseline", "prune", "cases", "--json"],
    ],
)
def test_a_malformed_baseline_under_json_is_one_line_naming_the_file(
    tmp_path: Path, args: list[str]
) -> None:
    _suite(tmp_path)
    (tmp_path / "bad.json").write_text('{"format": 1,}')
    p = cli(*args, "--impl", "threads-py", "--baseline", "bad.json", cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stderr == ""
    [line] = p.stdout.splitlines()
    doc = json.loads(line)
    assert doc["code"] == "baseline_invalid"
    assert doc["message"].startswith("bad.json:1: not valid JSON: trailing comma"), doc


@pytest.mark.parametrize(
    "args",
    [
        ["run", "cases", "--jobs", "0", "--format", "json"],
        ["run", "cases", "--format=json", "--no-such-option"],
        ["run", "no-such-folder", "--format", "json"],
        ["run", "cases", "--junit", "cases", "--format", "json"],
        ["baseline", "update", "cases", "--json", "--timeout", "0"],
        ["baseline", "update", "cases", "--json", "--reason", " "],
        ["baseline", "prune", "no-such-folder", "--json"],
    ],
)
def test_usage_errors_under_json_are_one_line_on_stdout(tmp_path: Path, args: list[str]) -> None:
    _suite(tmp_path)
    p = cli(*args, cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stderr == ""
    [line] = p.stdout.splitlines()
    doc = json.loads(line)
    assert set(doc) == {"code", "message", "hint"} and doc["code"] == "invalid_request", doc
    pretty = [a for a in args if a not in ("--json", "--format=json")]
    pretty = [a for i, a in enumerate(pretty) if a != "json" or pretty[i - 1] != "--format"]
    pretty = [a for a in pretty if a != "--format"]
    p = cli(*pretty, cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == "" and "error[invalid_request]" in p.stderr
    assert f"\n  hint: {doc['hint']}\n" in p.stderr  # the JSON line's hint is the text's


def _cli_module(name: str) -> Any:
    """A command module, loaded as the CLI does (cli._load keeps `threads_cases.cli.app`
    the Typer object, which importing the submodule directly would rebind)."""
    cli_package._load(name)
    return importlib.import_module(f"threads_cases.cli.{name}")


def test_json_refusals_are_asked_by_the_commands_that_promise_them() -> None:
    _json_refusals = _cli_module("native")._json_refusals
    assert _json_refusals(["run", "--format", "json", "-j", "0"])
    assert _json_refusals(["run", "x", "--format=json"])
    assert _json_refusals(["baseline", "prune", "--json"])
    assert _json_refusals(["conformance", "--format", "json"])
    assert not _json_refusals(["run", "--format", "pretty", "json"])
    assert not _json_refusals(["baseline", "update"])
    assert _json_refusals(["import", "claude-code", "t.jsonl", "--format", "json"])
    assert _json_refusals(["stale", "--format=json"])
    assert _json_refusals(["coverage", "cases", "--format", "json"])
    assert _json_refusals(["diff", "a", "b", "--format", "json"])
    assert not _json_refusals(["diff", "a", "b"])
    assert not _json_refusals(["turns", "t.jsonl", "--format", "json"])


def test_refuse_puts_the_location_in_the_json_message(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    refuse = _cli_module("run_commands").refuse
    out = io.BytesIO()
    monkeypatch.setattr("sys.stdout", io.TextIOWrapper(out))
    err = CaseError("baseline_invalid", "duplicate entry", file="b.json", pointer="/entries/1")
    assert refuse(err, "json").exit_code == 2
    assert json.loads(out.getvalue()) == {
        "code": "baseline_invalid",
        "message": "b.json: /entries/1: duplicate entry",
        "hint": err.hint,
    }
    assert err.hint  # the reason code's own hint, as the text prints it


READ_HINT = "a baseline is one JSON file (spec/replay.md section 12)"
WRITE_HINT = "`baseline update` writes the baseline as one JSON file at this path"


@pytest.mark.parametrize(
    ("command", "hint"),
    [
        (["run", "cases"], READ_HINT),
        (["baseline", "prune", "cases"], READ_HINT),
        (["baseline", "update", "cases"], WRITE_HINT),
    ],
)
@pytest.mark.parametrize("named", [False, True])
def test_a_baseline_path_that_is_a_folder_is_refused_not_read_as_no_baseline(
    tmp_path: Path, command: list[str], hint: str, named: bool
) -> None:
    """The default .threads-cases/baseline.json or a --baseline path that is a folder is
    baseline_invalid (exit 2, the path named, one hint fitting reading or writing), never a
    run without a baseline nor an io_error when update writes it."""
    _suite(tmp_path)
    (tmp_path / ".git").mkdir()
    where = "cases" if named else ".threads-cases/baseline.json"
    (tmp_path / where).mkdir(parents=True, exist_ok=True)
    args = [*command, "--impl", "threads-py", *(["--baseline", where] if named else [])]
    p = cli(*args, cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stderr.splitlines() == [
        f"error[baseline_invalid]: {where}: a folder, not a baseline file",
        f"  hint: {p.stderr.splitlines()[1].removeprefix('  hint: ')}",
    ]
    assert p.stderr.splitlines()[1].startswith(f"  hint: {hint}")
    as_json = cli(*args, "--json" if command[0] == "baseline" else "--format=json", cwd=tmp_path)
    assert as_json.returncode == 2 and as_json.stderr == ""
    [line] = as_json.stdout.splitlines()
    doc = json.loads(line)
    assert doc["code"] == "baseline_invalid"
    assert doc["message"] == f"{where}: a folder, not a baseline file"
    assert doc["hint"].startswith(hint)
    assert (tmp_path / where).is_dir()  # untouched


def test_read_baseline_refuses_a_broken_symlink(tmp_path: Path) -> None:
    (tmp_path / "b.json").symlink_to(tmp_path / "gone.json")
    with pytest.raises(CaseError) as err:
        read_baseline(tmp_path / "b.json")
    assert err.value.code == "baseline_invalid"
    assert "a broken symbolic link, not a baseline file" in str(err.value)


def test_entries_of_unknown_implementations_warn_on_run_and_prune_removes_them(
    tmp_path: Path,
) -> None:
    """An entry naming an implementation that is neither built in nor configured can never
    match: run warns once per such entry (naming it and the implementation), prune removes it
    and says why; an entry of a case outside the run's paths stays, named as not judged."""
    _suite(tmp_path)
    (tmp_path / "pyproject.toml").write_text(MISSING_DRIVER)  # "mine" is configured: known
    target = tmp_path / "b.json"
    entries = [
        Entry("reads-notes", "threads-go", "no go runtime"),
        Entry("reads-notes", "mine", "configured, only not run here"),
        Entry("elsewhere", "threads-py", "a case of another folder"),
    ]
    write_baseline(target, entries)
    args = ["cases", "--impl", "threads-py", "--isolation", "guard", "--baseline", "b.json"]
    p = cli("run", *args, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    warnings = [line for line in p.stderr.splitlines() if "baseline_implementation_unknown" in line]
    assert warnings == [
        "warning[baseline_implementation_unknown]: b.json: the entry reads-notes [threads-go] "
        "names the implementation 'threads-go', which is not known (threads-py, threads-ts or "
        "one configured in the settings' implementations): it can never match; "
        "`threads-cases baseline prune` removes it"
    ]
    assert [e.implementation for e in read_baseline(target)] == ["threads-py", "mine", "threads-go"]
    pruned = cli("baseline", "prune", *args, cwd=tmp_path)
    assert pruned.returncode == 0, pruned.stdout + pruned.stderr
    assert pruned.stdout.splitlines() == [
        "- reads-notes [threads-go]: no go runtime (the implementation 'threads-go' is not known)",
        "b.json: 1 removed, 2 entries; 2 not judged by this run: elsewhere [threads-py], "
        "reads-notes [mine]",
    ]
    assert [e.label for e in read_baseline(target)] == [
        "elsewhere [threads-py]",
        "reads-notes [mine]",
    ]


def test_prune_json_names_unknown_and_unjudged_entries(tmp_path: Path) -> None:
    _suite(tmp_path)
    write_baseline(
        tmp_path / "b.json", [Entry("reads-notes", "gone", "r"), Entry("x", "threads-py", "r")]
    )
    args = ["cases", "--impl", "threads-py", "--isolation", "guard", "--baseline", "b.json"]
    p = cli("baseline", "prune", *args, "--json", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    doc = json.loads(p.stdout)
    assert (
        doc["removed"]
        == doc["unknown_implementation"]
        == [{"case": "reads-notes", "implementation": "gone", "reason": "r"}]
    )
    assert doc["not_judged"] == [{"case": "x", "implementation": "threads-py", "reason": "r"}]
    assert doc["unjudged"] == 1
