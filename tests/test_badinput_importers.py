"""Bad-input corpus for the importers: the real CLI refuses each transcript cleanly.

Every file under tests/badinput/importers/<format>/ is a Claude Code or Codex transcript
with one hostile line (or a hostile whole file). ``python -m threads_cases import FORMAT
FILE -o OUT --strict`` must exit 1 with ``error[import_invalid]: FILE:LINE: ...`` (no line for a
problem of the whole file), print no traceback, never hang and leave nothing at
OUT. Without ``--strict`` (checked in process) the import either writes a valid thread
log or refuses cleanly (again without a file at OUT). Files too big to commit (100,000
levels of nesting, a 10 MB line) are made here in a temporary folder.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import cli

from threads_cases.core.errors import CaseError
from threads_cases.core.log import validate_log
from threads_cases.importers import import_to_file

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(__file__).resolve().parent / "badinput" / "importers"

#: Inputs whose problem is the whole file: the error names the file without a line.
WHOLE_FILE = {
    "claude-code/empty.jsonl",
    "codex/empty.jsonl",
    "claude-code/unknown-types-only.jsonl",
    "codex/unknown-types-only.jsonl",
}

COMMITTED = sorted(f"{p.parent.name}/{p.name}" for p in CORPUS.glob("*/*.jsonl"))
GENERATED = [
    "claude-code/nesting-100000.jsonl",
    "codex/nesting-100000.jsonl",
    "claude-code/string-10mb-unclosed.jsonl",
    "codex/string-10mb-unclosed.jsonl",
]


def generated(name: str, directory: Path) -> Path:
    """A big input, built from the first line of the format's 'nan' sample."""
    fmt, stem = name.split("/")
    first = (CORPUS / fmt / "array-line.jsonl").read_bytes().splitlines(keepends=True)[0]
    if stem.startswith("nesting"):
        bad = b'{"type":"user","x":' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
    else:
        bad = b'{"type":"user","x":"' + b"a" * (10 * 1024 * 1024) + b"}\n"
    path = directory / fmt / stem
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(first + bad)
    return path


def test_corpus_size() -> None:
    assert len(COMMITTED) >= 25
    assert {n.split("/")[0] for n in COMMITTED} == {"claude-code", "codex"}


@pytest.mark.parametrize("name", [*COMMITTED, *GENERATED])
def test_import_refuses_cleanly(name: str, tmp_path: Path) -> None:
    fmt = name.split("/")[0]
    src = generated(name, tmp_path) if name in GENERATED else CORPUS / name
    out = tmp_path / "out" / "thread.jsonl"
    out.parent.mkdir()
    p = cli("import", fmt, str(src), "-o", str(out), "--strict", cwd=tmp_path)  # no traceback
    rc, stderr = p.returncode, p.stderr
    assert rc == 1, stderr
    assert not out.exists(), "a refused import must write nothing"
    assert list(out.parent.iterdir()) == [], "no temporary file may be left behind"
    first = stderr.splitlines()[0]
    prefix = f"error[import_invalid]: {src}"
    assert first.startswith(prefix), first
    rest = first[len(prefix) :]
    if name in WHOLE_FILE:
        assert rest.startswith(": "), first
    else:
        assert re.match(r":\d+: ", rest), f"no line number: {first}"
    assert "  hint: " in stderr

    # by default (in process, to keep the suite fast): a valid log, or a clean refusal
    try:
        import_to_file(fmt, src, out)
    except CaseError as err:
        assert err.code in ("import_invalid", "invalid_request", "io_error"), err.render()
        assert err.location.file == str(src), err.render()
        assert not out.exists()
    else:
        assert out.is_file()
        assert validate_log(out) == []
