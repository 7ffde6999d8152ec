"""An upstream threads conformance case (its case.json has kind, family and clock) is named
for what it is in one line by every command that reads a case, never one schema problem per
key (spec/case-format.md 8.1; the loader's rule is pinned for both languages by
spec/conformance/case-errors/049-upstream-threads-case.json)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import cli

UPSTREAM = {
    "kind": "replay",
    "family": "tool-calls",
    "clock": {"start": "2026-01-01T00:00:00.000Z", "step_ms": 1},
    "name": "weather",
}


def upstream_case(tmp_path: Path) -> Path:
    case = tmp_path / "weather"
    case.mkdir()
    (case / "case.json").write_text(json.dumps(UPSTREAM, indent=2) + "\n")
    (case / "events.jsonl").write_text('{"seq": 0}\n')
    return case


def test_validate_and_run_say_it_in_one_line(tmp_path: Path) -> None:
    case = upstream_case(tmp_path)
    p = cli("validate", case, cwd=tmp_path)
    errors = [x for x in p.stderr.splitlines() if x.startswith("error[")]
    assert p.returncode == 1 and len(errors) == 1, p.stderr
    assert "conformance case of the upstream threads runtime" in errors[0]
    assert "threads runtime's own conformance suite" in p.stderr
    p = cli(
        "run",
        case,
        "--impl",
        "threads-py",
        "--impl",
        "threads-ts",
        "--format",
        "json",
        cwd=tmp_path,
    )
    results = [json.loads(x) for x in p.stdout.splitlines() if '"kind":"result"' in x]
    assert {r["verdict"] for r in results} == {"error"}
    assert all("upstream threads runtime" in json.dumps(r) for r in results)


def test_a_case_json_with_a_format_is_read_as_ours(tmp_path: Path) -> None:
    """The keys alone with a ``format`` are a (broken) case of this tool: its schema problems."""
    case = upstream_case(tmp_path)
    (case / "case.json").write_text(json.dumps({**UPSTREAM, "format": 2}))
    p = cli("validate", case, cwd=tmp_path)
    assert "upstream threads runtime" not in p.stderr and "schema:" in p.stderr


def test_import_and_turns_of_its_case_json_say_it_in_one_line(tmp_path: Path) -> None:
    case = upstream_case(tmp_path)
    for args in (
        ["import", "auto", case / "case.json", "-o", "t.jsonl"],
        ["turns", case / "case.json"],
    ):
        p = cli(*args, cwd=tmp_path)
        errors = [x for x in p.stderr.splitlines() if x.startswith("error[")]
        assert p.returncode == 2 and len(errors) == 1, p.stderr
        assert "conformance case of the upstream threads runtime" in errors[0]
