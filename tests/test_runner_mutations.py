"""Mutations of every conformance case and the verdict each must give (run_case, threads-py).

Each case is copied into tmp_path first; the originals are never touched.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import CONFORMANCE, CONFORMANCE_NAMES

from threads_cases.case.directory import computed_fingerprint, read_case_files
from threads_cases.core.canonical import canonical_document
from threads_cases.core.log import encode_log, read_log
from threads_cases.core.strictjson import read_json_file
from threads_cases.harness.run.runner import CaseResult, run_case

CopyCase = Callable[[str], Path]
STUBBED = [n for n in CONFORMANCE_NAMES if read_json_file(CONFORMANCE / n / "stubs.json")["calls"]]


def rewrite(path: Path, change: Callable[[Any], None]) -> None:
    doc = read_json_file(path)
    change(doc)
    path.write_bytes(canonical_document(doc))


def failing(r: CaseResult) -> dict[str, Any]:
    return {c.id: c for c in r.checks if c.result != "pass"}


def test_every_conformance_case_is_here() -> None:
    assert len(CONFORMANCE_NAMES) == 27
    assert set(STUBBED) == {
        "email-write-effect",
        "external-tool-error",
        "parallel-calls",
        "repeated-stub-order",
        "weather-stub",
    }


@pytest.mark.parametrize("name", CONFORMANCE_NAMES)
def test_unmodified_case_passes(conformance_case: CopyCase, name: str) -> None:
    path = conformance_case(name)
    r = run_case(path, "threads-py")
    assert (r.verdict, r.reasons, r.warnings, r.stop) == ("pass", [], [], None), r.to_json()
    assert r.case == name
    assert {c.id for c in r.checks} >= {"state", "model", "stubs", "requests"}
    assert all(c.result == "pass" for c in r.checks)
    # running does not write into the case
    assert read_case_files(path) == read_case_files(CONFORMANCE / name)


# (a) a changed tool result in stubs.json: the next model request differs from the recorded
# one. The musts of these cases do not look at the content, so the verdict is drifted; a
# case whose expect list looks at the content also reports expect_unmatched.
A_REASONS = {
    "email-write-effect": ["request_diverged"],
    "external-tool-error": ["request_diverged"],
    "parallel-calls": ["request_diverged"],
    "repeated-stub-order": ["expect_unmatched", "request_diverged"],
    "weather-stub": ["request_diverged"],
}


@pytest.mark.parametrize("name", STUBBED)
def test_changed_stub_content_drifts(conformance_case: CopyCase, name: str) -> None:
    path = conformance_case(name)
    rewrite(
        path / "stubs.json",
        lambda d: d["calls"][0]["result"].__setitem__("content", "CHANGED by the test"),
    )
    r = run_case(path, "threads-py")
    assert r.verdict == "drifted", r.to_json()
    assert r.reasons == A_REASONS[name]
    assert r.warnings == ["fingerprint_stale"]
    assert r.stop is None
    checks = failing(r)
    assert checks["requests"].code == "request_diverged"
    # request 0 came before the tool ran; the first to differ is the one after its result
    assert "request(s) [1" in checks["requests"].detail
    if name == "repeated-stub-order":
        assert checks["expect"].code == "expect_unmatched"
        assert [d.pointer for d in checks["expect"].differences] == ["/data/content"]
    assert r.passed() and not r.passed(strict=True)


# (a') the stubbed result's is_error flipped: a case whose must covers is_error fails.
A2 = {
    "email-write-effect": ("drifted", ["request_diverged"]),
    "external-tool-error": ("fail", ["must_unmatched", "request_diverged"]),
    "parallel-calls": ("drifted", ["request_diverged"]),
    "repeated-stub-order": ("drifted", ["request_diverged"]),
    "weather-stub": ("fail", ["must_unmatched", "request_diverged"]),
}


@pytest.mark.parametrize("name", STUBBED)
def test_flipped_stub_error_flag_fails_a_covering_must(
    conformance_case: CopyCase, name: str
) -> None:
    path = conformance_case(name)
    rewrite(
        path / "stubs.json",
        lambda d: d["calls"][0]["result"].__setitem__(
            "is_error", not d["calls"][0]["result"]["is_error"]
        ),
    )
    r = run_case(path, "threads-py")
    assert (r.verdict, r.reasons) == A2[name], r.to_json()
    if r.verdict == "fail":
        must = next(c for c in r.checks if c.code == "must_unmatched")
        assert [d.pointer for d in must.differences] == ["/data/is_error"]
        assert must.matcher is not None and must.nearest_event is not None
        assert must.nearest_event["type"] == "tool_result"


@pytest.mark.parametrize("name", CONFORMANCE_NAMES)
def test_dropped_last_reply_is_model_exhausted(conformance_case: CopyCase, name: str) -> None:
    path = conformance_case(name)
    replies = read_json_file(path / "model.json")["replies"]
    rewrite(path / "model.json", lambda d: d["replies"].pop())
    r = run_case(path, "threads-py")
    assert r.verdict == "fail", r.to_json()
    assert r.reasons[0] == "model_exhausted"
    assert r.stop is not None
    assert r.stop["code"] == "model_exhausted"
    assert r.stop["stop_key"] == f"model:{len(replies) - 1}"
    assert failing(r)["stop"].code == "model_exhausted"
    assert r.warnings == ["fingerprint_stale"]
    assert not r.passed()


@pytest.mark.parametrize("name", CONFORMANCE_NAMES)
def test_changed_expected_state_is_state_mismatch(conformance_case: CopyCase, name: str) -> None:
    path = conformance_case(name)
    old = read_json_file(path / "expected.threads-py.json")["usage"]["input_tokens"]
    rewrite(
        path / "expected.threads-py.json", lambda d: d["usage"].__setitem__("input_tokens", old + 1)
    )
    r = run_case(path, "threads-py")
    assert (r.verdict, r.reasons) == ("fail", ["state_mismatch"]), r.to_json()
    state = failing(r)["state"]
    assert state.code == "state_mismatch"
    assert [(d.pointer, d.expected, d.actual) for d in state.differences] == [
        ("/usage/input_tokens", old + 1, old)
    ]


@pytest.mark.parametrize("name", CONFORMANCE_NAMES)
def test_a_nested_expected_state_change_reports_its_pointer(
    conformance_case: CopyCase, name: str
) -> None:
    path = conformance_case(name)
    rewrite(
        path / "expected.threads-py.json",
        lambda d: d["agent"]["tools"][0].__setitem__("name", "renamed_tool"),
    )
    r = run_case(path, "threads-py")
    assert (r.verdict, r.reasons) == ("fail", ["state_mismatch"])
    assert [d.pointer for d in failing(r)["state"].differences] == ["/agent/tools/0/name"]


@pytest.mark.parametrize("name", CONFORMANCE_NAMES)
def test_an_impossible_must_is_must_unmatched(conformance_case: CopyCase, name: str) -> None:
    path = conformance_case(name)
    n = len(read_json_file(path / "case.json")["expect"]["must"])
    impossible = {"type": "sandbox_wrote", "data": {"path": "never-written.txt"}}
    rewrite(path / "case.json", lambda d: d["expect"]["must"].append(impossible))
    r = run_case(path, "threads-py")
    assert (r.verdict, r.reasons) == ("fail", ["must_unmatched"]), r.to_json()
    assert r.warnings == ["fingerprint_stale"]
    check = failing(r)[f"must[{n}]"]
    assert check.code == "must_unmatched" and check.matcher == impossible
    assert f"must[{n}]" in check.detail


def test_a_fixed_fingerprint_is_not_stale(conformance_case: CopyCase) -> None:
    path = conformance_case("reads-notes")
    rewrite(path / "case.json", lambda d: d["expect"]["must"].append({"type": "turn_completed"}))
    assert run_case(path).warnings == ["fingerprint_stale"]
    rewrite(
        path / "case.json",
        lambda d: d.__setitem__("fingerprint", computed_fingerprint(read_case_files(path))),
    )
    r = run_case(path)
    assert (r.verdict, r.warnings) == ("pass", [])


@pytest.mark.parametrize("name", CONFORMANCE_NAMES)
def test_a_changed_system_prompt_is_request_diverged(conformance_case: CopyCase, name: str) -> None:
    path = conformance_case(name)
    events = list(read_log(path / "log.threads-py.jsonl"))
    assert events[0]["type"] == "thread_started"
    events[0]["data"]["agent"]["system"] += " Changed by the test."
    (path / "log.threads-py.jsonl").write_bytes(encode_log(events))
    rewrite(
        path / "expected.threads-py.json",
        lambda d: d["agent"].__setitem__("system", d["agent"]["system"] + " Changed by the test."),
    )
    r = run_case(path, "threads-py")
    assert (r.verdict, r.reasons) == ("drifted", ["request_diverged"]), r.to_json()
    replies = read_json_file(path / "model.json")["replies"]
    assert f"{list(range(len(replies)))}" in failing(r)["requests"].detail  # every request
    assert failing(r).keys() == {"requests"}


def test_the_log_changed_alone_is_state_mismatch(conformance_case: CopyCase) -> None:
    path = conformance_case("reads-notes")
    events = list(read_log(path / "log.threads-py.jsonl"))
    events[0]["data"]["agent"]["system"] = "Other."
    (path / "log.threads-py.jsonl").write_bytes(encode_log(events))
    r = run_case(path, "threads-py")
    assert r.verdict == "fail"
    assert r.reasons == ["state_mismatch", "request_diverged"]
    assert [d.pointer for d in failing(r)["state"].differences] == ["/agent/system"]
