"""Report writers: JUnit XML stays XML whatever text a result carries."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from hypothesis import given
from hypothesis import strategies as st

from threads_cases.core.errors import CaseError
from threads_cases.core.matchers import Difference
from threads_cases.harness.check.checks import Check
from threads_cases.harness.report.junit import junit_xml, xml_safe
from threads_cases.harness.report.suite import not_listed_lines, unavailable_lines
from threads_cases.harness.run.runner import CaseResult, SuiteResult

LEGAL = st.characters(
    blacklist_categories=("Cs",),
    blacklist_characters="".join(map(chr, [*range(0, 9), 11, 12, *range(14, 32), 0xFFFE, 0xFFFF])),
)


def test_control_characters_are_escaped_visibly() -> None:
    assert xml_safe("\x1b[31mred\x1b[0m") == "\\x1b[31mred\\x1b[0m"
    assert xml_safe("nul\x00 bell\x07 ok\t\n\r") == "nul\\x00 bell\\x07 ok\t\n\r"
    assert xml_safe("lone \ud800 and \ufffe") == "lone \\ud800 and \\ufffe"


@given(st.text())
def test_any_text_gives_a_junit_file_an_xml_parser_reads(text: str) -> None:
    r = CaseResult(
        text or "c",
        f"cases/{text}",
        "threads-py",
        "fail",
        ["state_mismatch"],
        [Check("state", "fail", text, "state_mismatch", (Difference("/a", text, text),))],
        message=text,
    )
    errored = CaseResult("e", "cases/e", "threads-py", "error", ["driver_crashed"], message=text)
    data = junit_xml(SuiteResult([r, errored], ["threads-py"]))
    root = ET.fromstring(data)
    case = root.find("testsuite/testcase")
    assert case is not None
    assert case.get("name") == xml_safe(text or "c")
    failure = case.find("failure")
    # XML parsers read a CR (and CR LF) in text as LF
    kept = xml_safe(text).replace("\r\n", "\n").replace("\r", "\n")
    assert failure is not None and kept in (failure.text or "")


@given(st.text(LEGAL))
def test_legal_text_is_kept_as_it_is(text: str) -> None:
    assert xml_safe(text) == text


def test_error_reason_codes_stay_plain() -> None:
    err = CaseError("driver_crashed", "the driver exited\x1b[0m")
    r = CaseResult("c", "cases/c", "threads-ts", "error", [err.code], message=err.render())
    root = ET.fromstring(junit_xml(SuiteResult([r], ["threads-ts"])))
    error = root.find("testsuite/testcase/error")
    assert error is not None and error.get("type") == "driver_crashed"
    assert "\\x1b[0m" in (error.get("message") or "")


def test_an_unavailable_implementation_gets_one_line_saying_why_skipped_or_named() -> None:
    stale = CaseError(
        "driver_unavailable",
        "the TypeScript driver (ts/dist/driver.js) is older than its source ts/src/a.ts: "
        "the build is stale; rebuild it: cd ts && npm ci && npm run build",
    )
    results = []
    for case in ("a", "b"):
        for impl, verdict in (("threads-ts", "skip"), ("mine", "error")):
            results.append(
                CaseResult(
                    case,
                    f"cases/{case}",
                    impl,
                    verdict,
                    ["driver_unavailable"],
                    message=stale.render(),
                )
            )
    lines = unavailable_lines(SuiteResult(results, ["threads-ts", "mine"]))
    assert lines == [
        "skip[driver_unavailable]: threads-ts could not start (2 case(s) skipped; "
        "`--impl threads-ts` makes this an error): the TypeScript driver (ts/dist/driver.js) is "
        "older than its source ts/src/a.ts: the build is stale; rebuild it: cd ts && npm ci && "
        "npm run build",
        "error[driver_unavailable]: mine could not start (2 case(s)): the TypeScript driver "
        "(ts/dist/driver.js) is older than its source ts/src/a.ts: the build is stale; rebuild "
        "it: cd ts && npm ci && npm run build",
    ]


def test_cases_skipped_for_their_dialects_get_one_line_per_implementation() -> None:
    why = "the case does not list threads-ts's dialect threads-ts (case.json dialects: threads-py)"
    results = [
        CaseResult(c, f"cases/{c}", "threads-ts", "skip", ["not_listed"], message=why)
        for c in ("a", "b")
    ]
    results.append(CaseResult("a", "cases/a", "threads-py", "pass"))
    assert not_listed_lines(SuiteResult(results, ["threads-py", "threads-ts"])) == [
        f"skip[not_listed]: threads-ts skipped 2 case(s) (a, b): {why}"
    ]


def test_an_error_panel_shows_the_errors_hint_under_it() -> None:
    """The terminal view of a case that could not run prints the error's one-line hint
    under it, as every other error of the CLI does (reason-codes.md 1.2)."""
    from rich.console import Console

    from threads_cases.harness.report.suite_view import render_failure
    from threads_cases.harness.run.runner import could_not_run
    from threads_cases.protocol.client import Implementation

    class Impl(Implementation):
        name, dialect, restarts, required = "threads-py", "threads-py", 0, False

    r = CaseResult("a", "cases/a", "threads-py", "error")
    err = CaseError("case_invalid", "model.json is missing", file="cases/a/model.json")
    err.hint = "run `threads-cases validate CASE` to see every problem of the case"
    could_not_run(r, Impl(), err)
    console = Console(width=200, record=True)
    console.print(render_failure(r))
    text = console.export_text()
    assert "error[case_invalid]: cases/a/model.json: model.json is missing" in text
    assert "hint: run `threads-cases validate CASE` to see every problem of the case" in text
    assert r.to_json().get("hint") is None  # the report line is unchanged
