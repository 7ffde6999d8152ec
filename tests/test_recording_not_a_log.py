"""A recording given where a thread log is wanted (spec/importers.md section 7, "A recording
where a thread log is wanted"): `turns`, `validate`, `draft`, `reduce` and `save` say what
the file is and the command that imports it, once, instead of a JSON error per line; `save
--from` out of range says how to list a recording's turns."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import cli
from recording_files import RECORDINGS

HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize("name", list(RECORDINGS))
@pytest.mark.parametrize("command", ["turns", "validate", "draft", "reduce", "save"])
def test_a_recording_is_named_with_the_command_that_imports_it(
    tmp_path: Path, name: str, command: str
) -> None:
    src, fmt, what = RECORDINGS[name]
    shutil.copyfile(src, tmp_path / name)
    extra = {"draft": ["--turn", "1"], "save": ["--turn", "1", "--name", "c", "--dir", "cases"]}
    p = cli(command, name, *extra.get(command, []), cwd=tmp_path)
    assert p.returncode != 0
    errors = [x for x in p.stderr.splitlines() if x.startswith("error[")]
    assert errors == [
        f"error[log_invalid]: {name}: not a thread log: this looks like {what} ({fmt})"
    ], p.stderr
    assert (
        f"  hint: import it first: `threads-cases import {fmt} {name} -o LOG`, then pass LOG "
        f"in its place; or save a turn from it directly with `save --from {fmt}`"
    ) in p.stderr
    assert "list them with `threads-cases turns LOG`" not in p.stderr


def test_validate_json_gives_one_problem_for_a_cassette(tmp_path: Path) -> None:
    p = cli("validate", RECORDINGS["cassette.yaml"][0], "--format", "json", cwd=tmp_path)
    assert p.returncode == 1
    doc = json.loads(p.stdout)
    (problem,) = doc["problems"]
    assert problem["code"] == "log_invalid" and "looks like a VCR cassette" in problem["message"]
    assert "threads-cases import vcr " in problem["hint"]


def test_a_thread_log_keeps_the_readers_own_refusal(tmp_path: Path) -> None:
    """Not a recording: a damaged thread log, a log in another dialect, bytes of no format."""
    imported = cli("import", "vcr", RECORDINGS["cassette.yaml"][0], "-o", "t.jsonl", cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr
    lines = (tmp_path / "t.jsonl").read_text().splitlines()
    (tmp_path / "damaged.jsonl").write_text("\n".join(["{,", *lines[1:]]) + "\n")
    p = cli("turns", "damaged.jsonl", cwd=tmp_path)
    assert p.returncode == 1 and "damaged.jsonl:1: not valid JSON" in p.stderr
    assert "looks like" not in p.stderr
    ts = (
        HERE.parent
        / "spec"
        / "conformance"
        / "cases"
        / "overwrite-then-read"
        / "log.threads-ts.jsonl"
    )
    p = cli("turns", ts, cwd=tmp_path)
    assert "pass --dialect threads-ts" in p.stderr and "not a thread log" not in p.stderr
    (tmp_path / "noise.bin").write_bytes(bytes(range(256)) * 4)
    p = cli("validate", "noise.bin", cwd=tmp_path)
    assert p.returncode == 1 and "error[log_invalid]: noise.bin:1: " in p.stderr
    assert "not a thread log" not in p.stderr


def test_save_from_a_recording_out_of_range_says_how_to_list_its_turns(tmp_path: Path) -> None:
    src = RECORDINGS["cassette.yaml"][0]
    p = cli("save", src, "--from", "vcr", "--turn", "9", "--name", "c", "--dir", "d", cwd=tmp_path)
    assert p.returncode == 2 and "error[invalid_request]: --turn 9 is out of range" in p.stderr
    assert (
        f"  hint: to list its turns, import it first: `threads-cases import vcr {src} -o LOG`, "
        "then `threads-cases turns LOG`"
    ) in p.stderr
    assert "list them with `threads-cases turns LOG`" not in p.stderr


def test_the_api_words_the_hint_for_the_api(tmp_path: Path) -> None:
    from threads_cases.save_log import save_log

    r = save_log(RECORDINGS["run.traj"][0], name="c", dir=tmp_path, turn=1)
    assert r.error is not None and r.error.code == "log_invalid"
    assert "looks like a SWE-agent trajectory" in r.error.message
    assert 'from_format="swe-agent"' in r.error.hint and "threads-cases" not in r.error.hint
