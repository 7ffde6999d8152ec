"""Each importer given a file of another known format says what the file is and the command
that imports it; an empty file is "the file is empty"; bytes that are not text are named by
their offset, never a raw parser error (spec/importers.md section 7, "An importer given
another format"). The MCP supply source does the same for a VCR cassette."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import cli
from recording_files import RECORDINGS

from threads_cases.core.errors import CaseError
from threads_cases.importers import import_events
from threads_cases.importers.mcp import mcp_supply

HERE = Path(__file__).resolve().parent

FORMATS = ["claude-code", "codex", "vcr", "swe-agent", "inspect-ai", "openhands", "threads"]


def _refusal(fmt: str, path: Path) -> CaseError:
    with pytest.raises(CaseError) as exc:
        import_events(fmt, path)
    return exc.value


@pytest.mark.parametrize("name", list(RECORDINGS))
@pytest.mark.parametrize("asked", FORMATS)
def test_a_file_of_another_format_is_named_with_its_command(
    tmp_path: Path, name: str, asked: str
) -> None:
    src, fmt, what = RECORDINGS[name]
    if fmt == asked:
        return  # its own importer reads it
    path = tmp_path / name
    shutil.copyfile(src, path)
    err = _refusal(asked, path)
    assert err.code == "import_invalid"
    assert err.message.startswith(f"this looks like {what} ({fmt}), not "), err.message
    assert f"`threads-cases import {fmt} {path} -o LOG`" in err.hint


def test_the_cli_says_it_in_one_line_and_in_json(tmp_path: Path) -> None:
    shutil.copyfile(RECORDINGS["run.traj"][0], tmp_path / "run.traj")
    p = cli("import", "inspect-ai", "run.traj", "-o", "t.jsonl", cwd=tmp_path)
    assert p.returncode == 1 and not (tmp_path / "t.jsonl").exists()
    assert p.stderr.splitlines() == [
        "error[import_invalid]: run.traj: this looks like a SWE-agent trajectory (swe-agent), "
        "not an inspect-ai eval log",
        "  hint: import it with `threads-cases import swe-agent run.traj -o LOG` (or `save "
        "--from swe-agent`); `import auto` detects it",
    ]
    j = cli("import", "inspect-ai", "run.traj", "-o", "t.jsonl", "--format", "json", cwd=tmp_path)
    assert "this looks like a SWE-agent trajectory" in json.loads(j.stdout)["message"]


@pytest.mark.parametrize("asked", [*FORMATS, "auto"])
def test_an_empty_file_is_the_file_is_empty(tmp_path: Path, asked: str) -> None:
    for body, why in ((b"", "the file is empty"), (b"\n  \n", "the file holds only blank lines")):
        path = tmp_path / "empty.jsonl"
        path.write_bytes(body)
        err = _refusal(asked, path)
        assert err.code == "import_invalid" and err.message.startswith(why), err.message
        assert "holds an empty file" not in err.message and "zero-length" not in err.message


@pytest.mark.parametrize("asked", [*FORMATS, "auto"])
def test_bytes_that_are_not_text_are_named_by_their_offset(tmp_path: Path, asked: str) -> None:
    path = tmp_path / "blob.bin"
    path.write_bytes(b"abc\n\xff\xfe\x00\x9a rest")
    err = _refusal(asked, path)
    assert err.code == "import_invalid" and err.location.file == str(path)
    if asked == "threads":  # read line by line, strictly: the first line's refusal, located
        assert err.location.line == 1 and err.message.startswith("not strict JSON: ")
        return
    assert err.message == "not text: the byte at offset 4 (0xff) is not UTF-8", err.message
    assert "\n" not in err.message and "<byte string>" not in err.message
    p = cli("import", asked, path, "-o", tmp_path / "t.jsonl", cwd=tmp_path)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert p.stderr.startswith(f"error[import_invalid]: {path}: not text: the byte at offset 4")


def test_a_control_byte_is_named_too(tmp_path: Path) -> None:
    path = tmp_path / "ctl.yaml"
    path.write_bytes(b"interactions\x03: []\n")
    err = _refusal("vcr", path)
    assert err.message == "not text: a control byte (0x03) at offset 12", err.message


def test_a_damaged_line_of_the_right_format_keeps_its_refusal(tmp_path: Path) -> None:
    """--strict on a later damaged line of a real transcript: the line's own refusal."""
    lines = RECORDINGS["session.jsonl"][0].read_bytes().splitlines()
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join([lines[0], b'{"type": "user",', *lines[1:]]) + b"\n")
    with pytest.raises(CaseError) as exc:
        import_events("claude-code", path, strict=True)
    assert exc.value.location.line == 2 and "looks like" not in exc.value.message


def test_supply_on_a_vcr_cassette_says_what_it_is(tmp_path: Path) -> None:
    path = tmp_path / "cassette.yaml"
    shutil.copyfile(RECORDINGS["cassette.yaml"][0], path)
    with pytest.raises(CaseError) as exc:
        mcp_supply(path)
    err = exc.value
    assert err.code == "invalid_request"
    assert err.message == "this looks like a VCR cassette (vcr), not an MCP session cassette"
    assert "no interactions list" not in err.message
    assert f"`threads-cases import vcr {path} -o LOG`" in err.hint
    p = cli("supply", "cassette.yaml", "-o", "s.json", cwd=tmp_path)
    assert p.returncode == 2 and "this looks like a VCR cassette (vcr)" in p.stderr
    (tmp_path / "empty.json").write_bytes(b"")
    p = cli("supply", "empty.json", "-o", "s.json", cwd=tmp_path)
    assert "empty.json: the file is empty" in p.stderr


def test_run_supply_with_a_vcr_cassette_says_what_it_is(tmp_path: Path) -> None:
    """`run --supply cassette.yaml` read the cassette as a supply document: "not valid JSON"."""
    cases = HERE.parent / "spec" / "conformance" / "cases" / "reads-notes"
    shutil.copytree(cases, tmp_path / "cases" / "reads-notes")
    shutil.copyfile(RECORDINGS["cassette.yaml"][0], tmp_path / "cassette.yaml")
    p = cli("run", "cases", "--impl", "threads-py", "--supply", "cassette.yaml", cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith(
        "error[invalid_request]: cassette.yaml: this looks like a VCR cassette (vcr), "
        "not an MCP session cassette\n"
    ), p.stderr
    assert "not valid JSON" not in p.stderr
