"""Bad-input corpus for the inspect-ai and OpenHands importers: the real CLI refuses each
file cleanly.

Every file under tests/badinput/importers/inspect-ai/ and openhands/ is a log or trajectory
with one hostile part (or a hostile whole file); the big ones (100,000 levels of nesting, a
10 MB string that never closes, a zip archive of garbage, an archive whose sample is not
JSON) are made here. ``python -m threads_cases import FORMAT FILE -o OUT --strict`` must exit
1 with ``error[import_invalid]`` (or ``log_invalid`` for a time that does not exist) naming
the file, print no traceback, never hang and leave nothing at OUT. Without ``--strict``
(in process) the import either writes a valid thread log or refuses cleanly.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from conftest import cli

from threads_cases.core.errors import CaseError
from threads_cases.core.log import validate_log
from threads_cases.importers import import_to_file

CORPUS = Path(__file__).resolve().parent / "badinput" / "importers"
FORMATS = ("inspect-ai", "openhands")
COMMITTED = sorted(f"{p.parent.name}/{p.name}" for f in FORMATS for p in (CORPUS / f).glob("*"))
GENERATED = [
    "inspect-ai/nesting-100000.json",
    "openhands/nesting-100000.json",
    "inspect-ai/string-10mb-unclosed.json",
    "openhands/string-10mb-unclosed.json",
    "inspect-ai/garbage.eval",
    "inspect-ai/sample-not-json.eval",
]


def generated(name: str, directory: Path) -> Path:
    fmt, stem = name.split("/")
    path = directory / fmt / stem
    path.parent.mkdir(parents=True, exist_ok=True)
    head = b'{"version": 2, "status": "success", "samples": [' if fmt == "inspect-ai" else b"["
    if stem.startswith("nesting"):
        path.write_bytes(head + b"[" * 100_000 + b"]" * 100_000 + b"]}")
    elif stem.startswith("string"):
        path.write_bytes(head + b'{"id": "' + b"a" * (10 * 1024 * 1024))
    elif stem == "garbage.eval":
        path.write_bytes(b"PK\x03\x04" + bytes(range(256)) * 64)
    else:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            zf.writestr("header.json", '{"version": 2, "eval": {"model": "m"}}')
            zf.writestr("samples/1_epoch_1.json", "this is not JSON at all")
        path.write_bytes(buf.getvalue())
    return path


def test_corpus_size() -> None:
    assert len(COMMITTED) >= 8
    assert {n.split("/")[0] for n in COMMITTED} == set(FORMATS)


@pytest.mark.parametrize("name", [*COMMITTED, *GENERATED])
def test_import_refuses_cleanly(name: str, tmp_path: Path) -> None:
    fmt = name.split("/")[0]
    src = generated(name, tmp_path) if name in GENERATED else CORPUS / name
    out = tmp_path / "out" / "thread.jsonl"
    out.parent.mkdir()
    p = cli("import", fmt, str(src), "-o", str(out), "--strict", cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    assert not out.exists() and list(out.parent.iterdir()) == []
    first = p.stderr.splitlines()[0]
    assert first.startswith((f"error[import_invalid]: {src}", f"error[log_invalid]: {src}")), first
    assert "Traceback" not in p.stderr and "  hint: " in p.stderr

    try:
        import_to_file(fmt, src, out)
    except CaseError as err:
        assert err.code in ("import_invalid", "log_invalid", "io_error"), err.render()
        assert err.location.file == str(src), err.render()
        assert not out.exists()
    else:
        assert validate_log(out) == []
