"""The data-only sandbox-bytes tests (spec/conformance/sandbox-bytes/, spec/case-format.md 5.9,
spec/conformance.md 2.10): a thread whose log knows sandbox files by sha256 only, saved with
``sandbox_dir=`` a folder built from the test, and the artifacts the case then holds, the
files it leaves hash-only, or the refusal. ts/test/sandboxBytes.test.ts runs the same files;
tools/make_sandbox_bytes_tests.py writes them."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest

from threads_cases.case.artifacts import ArtifactStore
from threads_cases.case.save import save_case
from threads_cases.core.strictjson import parse
from threads_cases.reference.sandbox import FakeSandbox

ROOT = Path(__file__).resolve().parent.parent / "spec" / "conformance" / "sandbox-bytes"
TESTS = sorted(ROOT.glob("*.json"))
KEYS = {"description", "log", "at", "artifacts", "secrets", "folder", "outside"}


def entry_bytes(entry: dict[str, str]) -> bytes:
    """A folder entry's bytes: ``{"text"}`` (UTF-8) or ``{"base64"}``."""
    return entry["text"].encode() if "text" in entry else base64.b64decode(entry["base64"])


def lay_out(test: dict[str, Any], work: Path) -> Path:
    """``work/box`` holding the test's folder (not made when ``folder`` is null), and its
    ``outside`` files in ``work`` beside it; returns ``work/box``."""
    box = work / "box"
    for name, entry in test["outside"].items():
        (work / name).write_bytes(entry_bytes(entry))
    if test["folder"] is None:
        return box
    box.mkdir()
    for rel, entry in test["folder"].items():
        target = box / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if "symlink" in entry:
            os.symlink(entry["symlink"], target)
        else:
            target.write_bytes(entry_bytes(entry))
    return box


def outcome(case: Path) -> dict[str, Any]:
    """What a saved case holds: its artifacts (sha256 hex, sorted), and the paths of the files
    the replay starts with (the expected state's files and sandbox.json's reads) whose bytes
    it lacks (sorted)."""
    arts = sorted(p.name for p in (case / "artifacts").glob("*"))
    state = parse((case / "expected.threads-py.json").read_bytes())
    reads = parse((case / "sandbox.json").read_bytes())["reads"]
    pairs = list(state["sandbox"]["files"].items()) + [(r["path"], r["sha256"]) for r in reads]
    return {"artifacts": arts, "hash_only": sorted({p for p, sha in pairs if sha not in arts})}


def run_test(test: dict[str, Any], work: Path) -> dict[str, Any]:
    """Save the test's thread with ``sandbox_dir`` its folder (no verification: a turn reading
    a file left hash-only could not pass); ``{"saved": outcome}`` or ``{"error": {"code",
    "message", "hint"}}``."""
    box = lay_out(test, work)
    store = ArtifactStore({k: base64.b64decode(v) for k, v in test["artifacts"].items()})
    r = save_case(
        test["log"],
        sandbox=FakeSandbox({}),
        store=store,
        name="c",
        expect=None,
        at=test["at"],
        dir=work / "cases",
        secrets=test["secrets"],
        verify=False,
        sandbox_dir=box,
    )
    if not r.ok:
        assert r.error is not None
        return {"error": {"code": r.error.code, "message": r.error.message, "hint": r.error.hint}}
    return {"saved": outcome(work / "cases" / "c")}


def test_the_suite_covers_every_rule() -> None:
    assert len(TESTS) >= 12


@pytest.mark.parametrize("path", TESTS, ids=[p.stem for p in TESTS])
def test_sandbox_bytes_conformance(path: Path, tmp_path: Path) -> None:
    t: dict[str, Any] = parse(path.read_bytes())
    assert set(t) - KEYS in ({"saved"}, {"error"}), sorted(t)
    got = run_test(t, tmp_path)
    if "saved" in t:
        assert got == {"saved": t["saved"]}
    else:
        assert "error" in got, got
        assert got["error"]["code"] == t["error"]["code"]
        assert got["error"]["message"].endswith(t["error"]["message_end"]), got
        assert got["error"]["hint"] == t["error"]["hint"], got
