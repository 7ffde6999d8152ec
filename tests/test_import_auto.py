"""``import auto`` (spec/importers.md section 7): the format detected from the file's first
lines, and a file no format fits refused naming every format tried."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from conftest import cli

from threads_cases.core.errors import CaseError
from threads_cases.importers import Stats, import_events
from threads_cases.importers.detect import TRIED, detect_format

HERE = Path(__file__).resolve().parent
IMPORTERS = HERE / "importers"


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("vcr/anthropic-messages-tools.yaml", "vcr"),
        ("vcr/openai-responses-stream.yaml", "vcr"),
        ("vcr/anthropic-parsed-body-output-tool.yaml", "vcr"),
        ("claude-code-fork.jsonl", "claude-code"),
        ("claude-code-sidechain-only.jsonl", "claude-code"),
        ("trials/11c-nul-run-then-record.jsonl", "claude-code"),
        ("codex-exec-basic.jsonl", "codex"),
        ("codex-rollout-basic.jsonl", "codex"),
        ("trials/25a-rollout-string-and-double.jsonl", "codex"),
    ],
)
def test_each_format_is_detected(name: str, fmt: str) -> None:
    assert detect_format(IMPORTERS / name) == fmt
    stats = Stats()
    assert import_events("auto", IMPORTERS / name, stats=stats) == import_events(
        fmt, IMPORTERS / name
    )
    assert stats.notes[0].endswith(f"read as {fmt} (import auto)")


def test_a_gzipped_cassette_is_detected(tmp_path: Path) -> None:
    gz = tmp_path / "c.yaml.gz"
    gz.write_bytes(gzip.compress((IMPORTERS / "vcr" / "openai-chat-tools.yaml").read_bytes()))
    assert detect_format(gz) == "vcr"


@pytest.mark.parametrize(
    ("body", "holds"),
    [
        (b"# notes\nnot json\n", "no JSON line"),
        (b'{"kind": "x", "n": 1}\n[1, 2]\n', "2 JSON line(s) of no known type"),
    ],
)
def test_no_format_fits_names_the_formats_tried(tmp_path: Path, body: bytes, holds: str) -> None:
    src = tmp_path / "x.txt"
    src.write_bytes(body)
    with pytest.raises(CaseError) as exc:
        detect_format(src)
    assert exc.value.code == "import_invalid"
    assert all(f"{fmt} (" in exc.value.message for fmt in TRIED)
    assert exc.value.message.endswith(f"the file holds {holds}")
    p = cli("import", "auto", src, "-o", tmp_path / "t.jsonl", "--format", "json", cwd=tmp_path)
    assert p.returncode == 1 and p.stderr == ""
    out = json.loads(p.stdout)
    assert out["code"] == "import_invalid" and "tried vcr" in out["message"]


def test_a_thread_log_needs_no_import(tmp_path: Path) -> None:
    log = tmp_path / "t.jsonl"
    p = cli("import", "auto", IMPORTERS / "codex-rollout-basic.jsonl", "-o", log, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "read as codex (import auto)" in p.stderr
    with pytest.raises(CaseError) as exc:
        detect_format(log)
    assert exc.value.code == "import_invalid" and "needs no import" in exc.value.message


def test_save_from_auto(tmp_path: Path) -> None:
    src = IMPORTERS / "vcr" / "openai-chat-stream.yaml"
    p = cli(
        "save", "--from", "auto", src, "--turn", "1", "--name", "c", "--dir", "cases", cwd=tmp_path
    )
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "cases" / "c" / "case.json").is_file()
