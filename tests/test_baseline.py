"""Expected failures (spec/replay.md section 12): the baseline file, the judgement of a
result (xfail / xpass / fails differently), and update + prune as pure functions."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from threads_cases.core.errors import CaseError
from threads_cases.core.schemas import schema_problems
from threads_cases.core.strictjson import read_json_file
from threads_cases.harness.baseline.file import (
    TODO_REASON,
    Baseline,
    Entry,
    baseline_document,
    load_baseline,
    read_baseline,
    write_baseline,
)
from threads_cases.harness.check.checks import Check
from threads_cases.harness.check.expected import apply_baseline, judge, new_entries, stale_entries
from threads_cases.harness.run.runner import CaseResult


def result(
    verdict: str, *checks: tuple[str, str, str], reasons: list[str] | None = None
) -> CaseResult:
    """A result of case ``c`` on ``py`` with checks ``(id, result, code)``."""
    cs = [Check(i, res, "", code) for i, res, code in checks]
    codes = [c.code or c.id for c in cs if c.result in ("fail", "warn")]
    return CaseResult("c", "cases/c", "py", verdict, reasons if reasons is not None else codes, cs)


FAILS_MUST_2 = ("fail", ("state", "pass", ""), ("must[2]", "fail", "must_unmatched"))


def test_a_listed_failure_is_xfail_with_the_entry_as_its_record() -> None:
    entry = Entry("c", "py", "known", "must[2]", "must_unmatched", "https://x.org/1")
    r = apply_baseline(result(*FAILS_MUST_2), Baseline(None, (entry,)))
    assert r.verdict == "xfail" and r.passed()
    assert r.to_json()["baseline"] == {
        "reason": "known",
        "issue": "https://x.org/1",
        "check": "must[2]",
    }


@pytest.mark.parametrize(
    "entry",
    [
        Entry("c", "py", "another check", "must[1]"),
        Entry("c", "py", "another code", "must[2]", "state_mismatch"),
        Entry("c", "py", "whole case, another code", None, "missing_stub"),
    ],
    ids=["another check", "another code", "whole case, another code"],
)
def test_a_listed_case_that_fails_differently_stays_a_failure(entry: Entry) -> None:
    r = apply_baseline(result(*FAILS_MUST_2), Baseline(None, (entry,)))
    assert r.verdict == "fail" and not r.passed()
    assert "baseline" not in r.to_json()
    assert "stale baseline entry" in r.message  # the entry no longer matches anything
    assert [(f.check, f.code) for f in r.judgement.uncovered] == [("must[2]", "must_unmatched")]


def test_a_second_failure_beside_a_listed_one_is_a_failure() -> None:
    checks = (("must[1]", "fail", "must_unmatched"), ("must[2]", "fail", "must_unmatched"))
    r = apply_baseline(
        result("fail", *checks), Baseline(None, (Entry("c", "py", "known", "must[2]"),))
    )
    assert r.verdict == "fail"
    assert "fails differently: must[1] must_unmatched" in r.message


def test_a_listed_case_that_passes_is_xpass_and_fails_the_run() -> None:
    r = apply_baseline(
        result("pass", ("state", "pass", "")), Baseline(None, (Entry("c", "py", "old"),))
    )
    assert r.verdict == "xpass" and not r.passed()
    assert r.baseline == {"reason": "old"}
    assert "threads-cases baseline prune" in r.message


def test_one_of_two_listed_checks_passing_is_xpass() -> None:
    entries = (Entry("c", "py", "a", "must[1]"), Entry("c", "py", "b", "must[2]"))
    r = apply_baseline(result(*FAILS_MUST_2), Baseline(None, entries))
    assert r.verdict == "xpass" and r.baseline == {"reason": "a", "check": "must[1]"}
    assert stale_entries([r]) == [entries[0]]


def test_warnings_fail_only_under_strict() -> None:
    drifted = ("drifted", ("requests", "warn", "request_diverged"))
    entry = Entry("c", "py", "hashes move", "requests", "request_diverged")
    loose = apply_baseline(result(*drifted), Baseline(None, (entry,)))
    assert loose.verdict == "drifted" and not loose.judgement.stale  # passing, entry in use
    strict = apply_baseline(result(*drifted), Baseline(None, (entry,)), strict=True)
    assert strict.verdict == "xfail" and strict.passed(strict=True)


def test_errors_match_entries_without_a_check_and_unavailable_drivers_are_not_judged() -> None:
    crash = result("error", reasons=["driver_crashed"])
    whole = Baseline(None, (Entry("c", "py", "crashes", None, "driver_crashed"),))
    assert apply_baseline(crash, whole).verdict == "xfail"
    by_check = Baseline(None, (Entry("c", "py", "x", "must[0]"),))
    assert apply_baseline(result("error", reasons=["driver_crashed"]), by_check).verdict == "error"
    down = apply_baseline(result("error", reasons=["driver_unavailable"]), whole)
    assert down.verdict == "error" and not down.judgement.judged and not stale_entries([down])
    skip = apply_baseline(result("skip", reasons=["not_listed"]), whole)
    assert skip.verdict == "skip" and not stale_entries([skip])


def _unreadable(code: str = "case_invalid") -> CaseResult:
    r = result("error", reasons=[code])
    r.unreadable = True  # the harness could not read the case: its error, not the impl's
    return r


@pytest.mark.parametrize("code", ["case_invalid", "json_invalid", "log_invalid"])
def test_a_case_that_cannot_be_read_is_never_covered_nor_added(code: str) -> None:
    same = Entry("c", "py", "tracked upstream", None, code)
    anything = Entry("c", "py", "any failure")
    by_check = Entry("c", "py", "x", "must[0]", "must_unmatched")
    r = apply_baseline(_unreadable(code), Baseline(None, (same, anything, by_check)))
    assert r.verdict == "error" and not r.passed() and r.baseline is None
    assert new_entries([r]) == []  # baseline update adds nothing for it
    # the entry that records the read error is wrong: prune removes it; the others wait
    assert stale_entries([r]) == [same]
    assert "never lists a case that cannot be read" in r.message
    assert "threads-cases baseline prune" in r.message
    alone = apply_baseline(_unreadable(code), Baseline(None, (anything,)))
    assert alone.verdict == "error" and stale_entries([alone]) == []
    assert "apply again once it can be read" in alone.message
    # the same code answered by the implementation (the harness read the case) is listable
    refused = apply_baseline(result("error", reasons=[code]), Baseline(None, (same,)))
    assert refused.verdict == "xfail"


def test_entries_of_other_cases_and_implementations_do_not_apply() -> None:
    others = Baseline(None, (Entry("d", "py", "x"), Entry("c", "ts", "x")))
    r = apply_baseline(result(*FAILS_MUST_2), others)
    assert r.verdict == "fail" and r.message == ""


# --------------------------------------------------------------------------- property

CHECK_IDS = ["state", "stop", "must[0]", "must[1]", "expect", "requests"]
CODES = ["must_unmatched", "state_mismatch", "missing_stub", "request_diverged"]
failure = st.tuples(
    st.sampled_from(CHECK_IDS), st.sampled_from(["fail", "warn"]), st.sampled_from(CODES)
)
entry = st.builds(
    Entry,
    st.just("c"),
    st.just("py"),
    st.just("r"),
    st.none() | st.sampled_from(CHECK_IDS),
    st.none() | st.sampled_from(CODES),
)


def _result(failures: list[tuple[str, str, str]]) -> CaseResult:
    unique = {f[0]: f for f in failures}.values()  # one check per id
    verdict = "fail" if any(f[1] == "fail" for f in unique) else "drifted" if unique else "pass"
    return result(verdict, *unique)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(failure, max_size=4),
    st.lists(entry, max_size=4, unique_by=lambda e: e.key),
    st.booleans(),
)
def test_update_then_prune_leaves_a_clean_baseline(
    failures: list[tuple[str, str, str]], entries: list[Entry], strict: bool
) -> None:
    original = _result(failures)
    first = apply_baseline(_result(failures), Baseline(None, tuple(entries)), strict)
    j = judge(original, entries, strict)
    assert first.verdict == (j.verdict if entries else original.verdict)
    if first.verdict == "xfail":
        assert not j.uncovered and j.covering
    # update adds exactly what is uncovered; prune removes what is stale
    updated = [*entries, *new_entries([first])]
    pruned = [
        e
        for e in updated
        if e
        not in stale_entries(
            [apply_baseline(_result(failures), Baseline(None, tuple(updated)), strict)]
        )
    ]
    final = apply_baseline(_result(failures), Baseline(None, tuple(pruned)), strict)
    assert final.verdict in ("pass", "drifted", "xfail")
    assert final.passed(strict)
    assert not final.judgement.uncovered and not final.judgement.stale
    assert all(e.reason == TODO_REASON for e in new_entries([first]))


# --------------------------------------------------------------------------- the file


def test_the_file_is_written_sorted_canonical_and_atomically(tmp_path: Path) -> None:
    target = tmp_path / ".threads-cases" / "baseline.json"
    entries = [Entry("b", "ts", "why"), Entry("a", "py", "why", "must[1]", "must_unmatched")]
    assert write_baseline(target, entries)
    assert target.read_bytes() == baseline_document(reversed(entries))
    doc = read_json_file(target)
    assert [e["case"] for e in doc["entries"]] == ["a", "b"]
    assert schema_problems(doc, "baseline.schema.json") == []
    assert not write_baseline(target, entries)  # same bytes: not rewritten
    assert [p.name for p in target.parent.iterdir()] == ["baseline.json"]  # no temp file left
    assert read_baseline(target).entries == tuple(sorted(entries, key=lambda e: e.key))


@pytest.mark.parametrize(
    ("text", "pointer"),
    [
        ('{"format": 1, "entries": [{"case": "a", "implementation": "py"}]}', "/entries/0"),
        (
            '{"format": 1, "entries": [{"case": "a", "implementation": "py", "reason": " "}]}',
            "/entries/0/reason",
        ),
        (
            '{"format": 1, "entries": [{"case": "a", "implementation": "py", "reason": "r",'
            ' "issue": "#12"}]}',
            "/entries/0/issue",
        ),
        ('{"format": 2, "entries": []}', "/format"),
        (
            '{"format": 1, "entries": [{"case": "a", "implementation": "py", "reason": "r"},'
            ' {"case": "a", "implementation": "py", "reason": "s"}]}',
            "/entries/1",
        ),
    ],
    ids=["reason missing", "blank reason", "issue not a link", "unknown format", "repeated entry"],
)
def test_a_malformed_baseline_is_refused_with_a_pointer(
    tmp_path: Path, text: str, pointer: str
) -> None:
    p = tmp_path / "baseline.json"
    p.write_text(text)
    with pytest.raises(CaseError) as err:
        read_baseline(p)
    assert err.value.code == "baseline_invalid"
    assert err.value.location.pointer == pointer and err.value.location.file == str(p)


def test_a_baseline_that_is_not_strict_json_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "baseline.json"
    p.write_text('{"format": 1, "format": 1, "entries": []}')
    with pytest.raises(CaseError) as err:
        read_baseline(p)
    assert err.value.code == "baseline_invalid"


def test_where_the_baseline_is_found(tmp_path: Path) -> None:
    assert load_baseline(start=tmp_path).entries == ()  # no default file: no entries
    with pytest.raises(CaseError) as err:
        load_baseline(tmp_path / "missing.json", start=tmp_path)
    assert err.value.code == "invalid_request"
    (tmp_path / "pyproject.toml").write_text('[tool.threads-cases]\nbaseline = "ci/xfail.json"\n')
    with pytest.raises(CaseError):
        load_baseline(start=tmp_path)  # configured but missing
    write_baseline(tmp_path / "ci" / "xfail.json", [Entry("a", "py", "why")])
    assert [e.case for e in load_baseline(start=tmp_path)] == ["a"]
    (tmp_path / "pyproject.toml").write_text("[tool.threads-cases]\nbaseline = 3\n")
    with pytest.raises(CaseError) as err:
        load_baseline(start=tmp_path)
    assert err.value.code == "invalid_request"


def test_init_ignores_the_run_files_but_not_the_baseline(tmp_path: Path) -> None:
    from threads_cases.review.setup import init_project

    (tmp_path / ".gitignore").write_text("build/\n.threads-cases/\n")  # an earlier init's line
    init_project(tmp_path)
    lines = (tmp_path / ".gitignore").read_text().splitlines()
    assert ".threads-cases/" not in lines
    assert lines.count("**/.threads-cases/*") == 1 and "!**/.threads-cases/baseline.json" in lines
    # the later init's top-level-only lines become the ones for every folder
    (tmp_path / ".gitignore").write_text(
        "build/\n.threads-cases/*\n!.threads-cases/baseline.json\n"
    )
    init_project(tmp_path)
    lines = (tmp_path / ".gitignore").read_text().splitlines()
    assert lines == ["build/", "**/.threads-cases/*", "!**/.threads-cases/baseline.json"]
    before = (tmp_path / ".gitignore").read_text()
    init_project(tmp_path)
    assert (tmp_path / ".gitignore").read_text() == before  # idempotent
