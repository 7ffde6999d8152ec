"""Import parses each line once (issue 37): pass 1 keeps what it read and pass 2 maps it
without reading the file again; with the budget spent (a transcript past HOLD_BYTES), pass 2
parses the lines not held, and the log is the same bytes either way."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

import orjson
import pytest

import threads_cases.importers.source as source
from threads_cases.importers import import_to_file

ROOT = Path(__file__).resolve().parent.parent
SESSION = ROOT / "examples" / "sessions" / "claude-code-session.jsonl"


def counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]

    def loads(data: Any) -> Any:
        calls[0] += 1
        return orjson.loads(data)

    proxy = types.SimpleNamespace(**{k: getattr(orjson, k) for k in dir(orjson) if k[0] != "_"})
    proxy.loads = loads
    monkeypatch.setattr(source, "orjson", proxy)
    return calls


def test_each_line_is_parsed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = len(SESSION.read_bytes().splitlines())
    calls = counting(monkeypatch)
    import_to_file("claude-code", SESSION, tmp_path / "a.jsonl")
    assert calls[0] == lines


def test_past_the_budget_pass_2_parses_again_to_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import_to_file("claude-code", SESSION, tmp_path / "a.jsonl")
    monkeypatch.setattr(source, "HOLD_BYTES", 2000)
    calls = counting(monkeypatch)
    import_to_file("claude-code", SESSION, tmp_path / "b.jsonl")
    assert calls[0] > len(SESSION.read_bytes().splitlines())
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
