"""Case format 2 (spec/case-format.md 1.3): case.json lists its ``dialects`` (format 1 called
them ``implementations``). A format-1 case still runs on both implementations, unchanged on
disk; every command that rewrites a case (``fmt``, ``accept``, ``save``) writes format 2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import CONFORMANCE, cli, ts_built

from threads_cases.case.directory import finish_case_files, read_case_files, upgraded_meta
from threads_cases.case.loader import inspect_case, open_case
from threads_cases.core.canonical import canonical_document
from threads_cases.harness.run.runner import run_case

TS_BUILT = ts_built()


def as_format_1(case: Path) -> None:
    """Rewrite ``case`` as a format-1 case would have been written: ``implementations`` in
    place of ``dialects``, ``format`` 1, and its fingerprint over those bytes."""
    meta = json.loads((case / "case.json").read_bytes())
    meta = {k: v for k, v in meta.items() if k not in ("dialects", "fingerprint")}
    meta.update(format=1, implementations=["threads-py", "threads-ts"])
    files = {k: v for k, v in read_case_files(case).items() if k != "case.json"}
    body = dict(files)
    body["case.json"] = canonical_document(meta)
    from threads_cases.case.directory import fingerprint

    meta["fingerprint"] = fingerprint(body)
    (case / "case.json").write_bytes(canonical_document(meta))


@pytest.fixture
def old_case(tmp_path: Path) -> Path:
    case = tmp_path / "cases" / "reads-notes"
    shutil.copytree(CONFORMANCE / "reads-notes", case)
    as_format_1(case)
    return case


def _meta(case: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((case / "case.json").read_bytes())
    return doc


def test_the_shipped_cases_are_format_2() -> None:
    for case in sorted(CONFORMANCE.iterdir()):
        meta = _meta(case)
        assert meta["format"] == 2 and "implementations" not in meta, case.name
        assert meta["dialects"] and open_case(case).dialects == meta["dialects"]


def test_a_format_1_case_is_read_as_format_2_and_runs_unchanged(old_case: Path) -> None:
    before = read_case_files(old_case)
    case, problems = inspect_case(old_case)
    assert problems == [] and case is not None and case.fingerprint_ok
    assert case.meta["format"] == 2 and case.dialects == ["threads-py", "threads-ts"]
    assert "implementations" not in case.meta
    impls = ["threads-py", "threads-ts"] if TS_BUILT else ["threads-py"]
    for impl in impls:
        r = run_case(old_case, impl)
        assert r.verdict == "pass" and r.warnings == [], (impl, r.to_json())
    assert read_case_files(old_case) == before  # a run never rewrites a case


def test_format_1_problems_point_into_the_file_as_written(old_case: Path) -> None:
    meta = _meta(old_case)
    meta["implementations"] = ["threads-py", "no-such-dialect"]
    (old_case / "case.json").write_bytes(canonical_document(meta))
    problems = inspect_case(old_case)[1]
    assert ("dialect_unknown", "/implementations/1") in [
        (p.code, p.location.pointer) for p in problems
    ]
    meta["implementations"] = []
    (old_case / "case.json").write_bytes(canonical_document(meta))
    pointers = [p.location.pointer for p in inspect_case(old_case)[1] if p.code == "case_invalid"]
    assert "/implementations" in pointers
    # a format-1 file spelled with the format-2 key is refused, and so is the reverse
    meta["implementations"] = ["threads-py", "threads-ts"]
    meta["dialects"] = ["threads-py"]
    (old_case / "case.json").write_bytes(canonical_document(meta))
    assert ("case_invalid", "/dialects") in [
        (p.code, p.location.pointer) for p in inspect_case(old_case)[1]
    ]
    meta = {k: v for k, v in meta.items() if k != "dialects"}
    meta["format"] = 2
    (old_case / "case.json").write_bytes(canonical_document(meta))
    messages = [p.message for p in inspect_case(old_case)[1] if p.code == "case_invalid"]
    assert any("implementations" in m for m in messages), messages
    assert any("dialects" in m for m in messages), messages


def test_upgraded_meta_renames_only_format_1() -> None:
    old = {"format": 1, "implementations": ["threads-py"], "name": "x"}
    assert upgraded_meta(old) == {"format": 2, "dialects": ["threads-py"], "name": "x"}
    new = {"format": 2, "dialects": ["threads-ts"]}
    assert upgraded_meta(new) == new and upgraded_meta(new) is not new
    files = finish_case_files(old, {})
    assert json.loads(files["case.json"])["format"] == 2


def test_fmt_upgrades_a_format_1_case(old_case: Path, tmp_path: Path) -> None:
    p = cli("fmt", "--check", "cases", cwd=tmp_path)
    assert p.returncode == 1 and "format 1 -> 2" in p.stdout + p.stderr, p.stdout + p.stderr
    p = cli("fmt", "cases", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    meta = _meta(old_case)
    assert meta["format"] == 2 and meta["dialects"] == ["threads-py", "threads-ts"]
    assert "implementations" not in meta
    # the same bytes as the shipped format-2 case: nothing else changed
    assert read_case_files(old_case) == read_case_files(CONFORMANCE / "reads-notes")
    assert cli("fmt", "--check", "cases", cwd=tmp_path).returncode == 0


def test_accept_writes_format_2(old_case: Path) -> None:
    from threads_cases.harness.run.accept import accept_case
    from threads_cases.harness.run.registry import open_implementation

    stubs = json.loads((old_case / "sandbox.json").read_bytes())
    assert stubs["format"] == 1  # the recordings keep their own format
    model = json.loads((old_case / "model.json").read_bytes())
    model["replies"][0]["request_sha256"] = "0" * 64  # a drift accept rewrites
    (old_case / "model.json").write_bytes(canonical_document(model))
    impl = open_implementation("threads-py", required=True)
    try:
        done = accept_case(old_case, impl, force=True)
    finally:
        impl.close()
    assert done.changed
    meta = _meta(old_case)
    assert (meta["format"], meta["dialects"]) == (2, ["threads-py", "threads-ts"])
    assert json.loads((old_case / "model.json").read_bytes())["format"] == 1
    assert run_case(old_case, "threads-py").verdict == "pass"
