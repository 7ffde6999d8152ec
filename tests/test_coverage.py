"""Coverage of a suite (spec/conformance.md section 8): the defined sets come from the spec's
data, a suite's exercised sets from its replays, and the shipped suite's committed
coverage file is current."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import CONFORMANCE, cli, ts_built
from golden import assert_golden
from hypothesis import given, settings
from hypothesis import strategies as st

from threads_cases.core.canonical import canonical_document
from threads_cases.core.strictjson import read_json_file
from threads_cases.harness.check import spec_inventory
from threads_cases.harness.check.coverage import coverage_document, matcher_features, suite_coverage
from threads_cases.harness.run.registry import resolve_implementations

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "spec" / "conformance"


def thread_log_types() -> set[str]:
    """The event types in the table of spec/thread-log.md section 3.3."""
    text = (ROOT / "spec" / "thread-log.md").read_text(encoding="utf-8")
    table = text.split("### 3.3 The types", 1)[1].split("\n#", 1)[0]
    return set(re.findall(r"^\| `([a-z_]+)` \|", table, re.M)) - {"type"}  # the header


def test_the_defined_event_types_are_those_of_the_thread_log_spec() -> None:
    assert set(spec_inventory.event_types()) == thread_log_types()
    assert len(thread_log_types()) == 15


def test_the_defined_reason_codes_are_the_fail_and_drift_codes() -> None:
    codes = spec_inventory.reason_codes()
    assert {"must_unmatched", "state_mismatch", "model_exhausted", "request_diverged"} <= set(codes)
    assert not {"case_invalid", "driver_crashed", "not_listed", "fingerprint_stale"} & set(codes)


keys = st.sampled_from(["seq", "epoch", "actor_kind", "branch_id", "critical"])
values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=2), inner),
    max_leaves=6,
)


@settings(deadline=None)  # no wall-clock judgement: on a loaded machine it failed the run
@given(
    st.dictionaries(keys, st.integers(), max_size=3),
    st.none() | st.dictionaries(st.text(max_size=3), values, max_size=3),
)
def test_matcher_features_are_defined_features(envelope: dict[str, int], data: object) -> None:
    matcher: dict[str, object] = {"type": "tool_result", **envelope}
    if data is not None:
        matcher["data"] = data
    found = matcher_features(matcher)
    assert set(found) <= set(spec_inventory.matcher_features())
    assert {f"envelope:{k}" for k in envelope} <= set(found)
    assert ("data" in found) == (data is not None)
    text = json.dumps(data)
    if isinstance(data, dict) and any(isinstance(v, list) for v in data.values()):
        assert "data_array" in found, text


def test_a_failing_case_exercises_its_reason_codes(tmp_path: Path) -> None:
    for name in ("reads-notes", "weather-stub"):
        shutil.copytree(CONFORMANCE / name, tmp_path / "cases" / name)
    model = tmp_path / "cases" / "weather-stub" / "model.json"
    doc = read_json_file(model)
    doc["replies"].pop()
    model.write_bytes(canonical_document(doc))
    cov = suite_coverage([tmp_path / "cases"], resolve_implementations(["threads-py"]))
    cats = cov.categories("threads-py")
    assert "model_exhausted" in cats["reason_codes"]["exercised"]
    assert cats["tool_kinds"]["missing"] == []  # a sandbox and an external tool
    seen = cov.to_json()["implementations"]["threads-py"]["seen"]
    assert {"read_file", "get_weather"} <= set(seen["tool_names"])
    assert "forked" in cats["event_types"]["missing"]  # no case of these two forks


@pytest.mark.skipif(
    not ts_built(),
    reason="the TypeScript driver is not built: run `nox -s ts`",
)
def test_the_committed_coverage_of_the_shipped_suite_is_current() -> None:
    impls = resolve_implementations(["threads-py", "threads-ts"], isolation="guard")
    cov = suite_coverage([SUITE], impls, jobs=2)
    assert coverage_document(cov) == (SUITE / "coverage.json").read_bytes(), (
        "spec/conformance/coverage.json is out of date: run `threads-cases coverage "
        "spec/conformance --impl threads-py --impl threads-ts --format json "
        "-o spec/conformance/coverage.json`"
    )
    for name in ("threads-py", "threads-ts"):
        exercised = set(cov.categories(name)["event_types"]["exercised"])
        assert thread_log_types() <= exercised, name


def test_the_coverage_command_writes_json_and_fails_under_a_threshold(tmp_path: Path) -> None:
    for name in ("reads-notes", "lists-files"):
        shutil.copytree(CONFORMANCE / name, tmp_path / "cases" / name)
    out = tmp_path / "coverage.json"
    proc = cli(
        "coverage", "cases", "--impl", "threads-py", "--format", "json", "-o", out,
        "--fail-under", "100", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 3, proc.stderr
    assert "under --fail-under 100" in proc.stderr
    doc = json.loads(out.read_text())
    mine = doc["implementations"]["threads-py"]
    assert mine["cases"] == 2 and 0 < mine["percent"] < 100
    assert mine["categories"]["event_types"]["missing"]  # two cases do not fork or restore
    assert out.read_bytes() == canonical_document(doc)  # sorted, canonical: fit to commit
    pretty = cli("coverage", "cases", "--impl", "threads-py", "--fail-under", "10", cwd=tmp_path)
    assert pretty.returncode == 0, pretty.stderr
    assert "event_types" in pretty.stdout and "not exercised event_types: " in pretty.stdout
    refused = cli("coverage", "cases", "--format", "xml", cwd=tmp_path)
    assert refused.returncode == 2


def test_fail_under_says_what_it_counts_and_gates_one_category(tmp_path: Path) -> None:
    """A green suite exercises no fail/drifted reason code, so its total is low by design:
    the failure says what the total counts, and CATEGORY=PERCENT gates one category (issue
    38, spec/conformance.md 8.4)."""
    shutil.copytree(CONFORMANCE / "reads-notes", tmp_path / "cases" / "reads-notes")
    gated = cli(
        "coverage", "cases", "--impl", "threads-py", "--fail-under", "tool_kinds=50",
        "--fail-under", "dialect_fields=100", cwd=tmp_path,
    )  # fmt: skip
    assert gated.returncode == 0, gated.stderr
    assert "total counts every item the spec defines, in every category" in gated.stdout
    low = cli(
        "coverage", "cases", "--impl", "threads-py", "--fail-under", "90",
        "--fail-under", "event_types=100", "--fail-under", "reason_codes=0", cwd=tmp_path,
    )  # fmt: skip
    assert low.returncode == 3, low.stderr
    assert_golden("coverage-fail-under.txt", low.stderr)
    bad = cli("coverage", "cases", "--fail-under", "events=100", cwd=tmp_path)
    assert bad.returncode == 2 and "no category 'events'" in bad.stderr
    assert "CATEGORY one of event_types, tool_kinds" in bad.stderr
