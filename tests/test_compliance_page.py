"""The compliance page (threads_cases/harness/check/compliance.py and compliance_html.py,
spec/conformance.md section 7): what it shows, that report values stay text, refusals, and
the `report html` command on a real run. Its browser test is tests/test_compliance_browser.py.

The fixture reports in tests/data/compliance/ are written by hand to the report schema, with
the baseline's verdicts `xfail`/`xpass` and their `"baseline": {"reason", "issue"?, "check"?}`
(spec/replay.md section 12), and values meant to break out of the page.
"""

from __future__ import annotations

import base64
import hashlib
import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from conftest import cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from threads_cases.core.canonical import canonical_line
from threads_cases.core.errors import CaseError
from threads_cases.core.schemas import schema_document
from threads_cases.harness.check.compliance import build_page
from threads_cases.harness.report.compliance_html import render_page, write_page
from threads_cases.review.filediff import diff_reports

DATA = Path(__file__).parent / "data" / "compliance"
REPORT = DATA / "report.jsonl"
BEFORE = DATA / "before.jsonl"
EVIL_CASE = '<script>alert("case")</script>'
EVIL_VALUE = '<script>alert("value")</script><img src=x onerror=alert(1)>'


class Parsed(HTMLParser):
    """The tags and the text of a page, as a browser's parser sees them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.raw: dict[str, str] = {}
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in = tag if tag in ("script", "style") else None

    def handle_endtag(self, tag: str) -> None:
        self._in = None

    def handle_data(self, data: str) -> None:
        if self._in:
            self.raw[self._in] = data
        else:
            self.text.append(data)


def parse(html: str) -> Parsed:
    p = Parsed()
    p.feed(html)
    return p


def test_fixture_reports_follow_the_report_schema() -> None:
    v = Draft202012Validator(schema_document("report.schema.json"))
    for path in (REPORT, BEFORE):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            errors = [e.message for e in v.iter_errors(json.loads(line))]
            assert not errors, f"{path.name}:{n}: {errors}"


def test_the_page_counts_every_result_by_implementation_and_verdict() -> None:
    page = build_page([REPORT])
    assert page.implementations == ("threads-py", "threads-ts")
    assert page.totals == {
        "pass": 4,
        "drifted": 2,
        "xfail": 2,
        "xpass": 1,
        "fail": 2,
        "error": 2,
        "skip": 1,
    }
    assert page.counts["threads-ts"]["xpass"] == 1 and page.counts["threads-py"]["xpass"] == 0
    assert [r.case for r in page.rows][:3] == ["broken-case", "known-bug", "reads-notes"]
    weather = next(r for r in page.rows if r.case == "weather-stub")
    assert [c.verdict for c in weather.cells if c] == ["fail", "pass"]
    assert len(page.detailed) == 9  # 2 fail, 2 error, 2 drifted, 2 xfail, 1 xpass


def test_a_failure_shows_its_first_divergence_and_its_matcher() -> None:
    page = build_page([REPORT])
    fail = next(e for e in page.detailed if e.case == "weather-stub")
    assert fail.divergence is not None
    assert (fail.divergence.kind, fail.divergence.pointer) == ("matcher", "/data/is_error")
    assert (fail.divergence.recorded, fail.divergence.replayed) == ("true", "false")
    assert fail.divergence.where == "event 5 tool_result"
    (check,) = fail.checks
    assert check.code == "must_unmatched" and check.matcher is not None
    assert '"is_error": true' in check.matcher
    assert check.nearest_event is not None and "weather-stub.6" in check.nearest_event
    # a multi-line string is shown as its text, with the differing line named
    drift = next(e for e in page.detailed if e.case == "system-prompt")
    assert drift.divergence is not None and drift.divergence.line == 2
    assert drift.divergence.replayed == "You are a careful assistant.\nWrite first."


def test_expected_failures_carry_their_reason_and_only_web_links() -> None:
    page = build_page([REPORT])
    expected = {(e.case, e.implementation): e for e in page.expected}
    assert sorted(e.verdict for e in expected.values()) == ["xfail", "xfail", "xpass"]
    bug = expected[("known-bug", "threads-py")].baseline
    assert bug is not None and bug.check == "must[0]"
    assert bug.issue_url == "https://github.com/example/agent/issues/12"
    ts = expected[("known-bug", "threads-ts")].baseline
    assert ts is not None and ts.issue == "javascript:alert(1)" and ts.issue_url is None
    html = render_page(page)
    assert 'href="https://github.com/example/agent/issues/12"' in html
    assert 'href="javascript:' not in html
    assert "threads-ts &lt;b&gt;orders&lt;/b&gt; parallel results differently" in html


def test_report_values_are_escaped_text_never_markup() -> None:
    html = render_page(build_page([REPORT], compare=BEFORE))
    doc = parse(html)
    assert [t for t, _ in doc.tags].count("script") == 1  # the page's own
    assert not any("onerror" in attrs for _, attrs in doc.tags)
    assert not any(t == "img" for t, _ in doc.tags)
    text = "".join(doc.text)
    assert EVIL_CASE in text  # shown as the characters it is
    assert json.dumps(EVIL_VALUE) in text  # the recorded value, as JSON
    assert "&lt;script&gt;alert(&#34;case&#34;)&lt;/script&gt;" in html


def test_the_page_requests_nothing_and_pins_its_inline_code_by_hash() -> None:
    html = render_page(build_page([REPORT]))
    doc = parse(html)
    for tag, attrs in doc.tags:
        assert "src" not in attrs, tag
        if tag == "link":
            assert attrs.get("href") == "data:,"
        if tag == "a":
            href = attrs.get("href") or ""
            assert href.startswith(("#", "https://github.com/example/")), href
    csp = next(
        a["content"] for t, a in doc.tags if a.get("http-equiv") == "Content-Security-Policy"
    )
    assert csp is not None and csp.startswith("default-src 'none';")
    for kind in ("script", "style"):
        digest = base64.b64encode(hashlib.sha256(doc.raw[kind].encode()).digest()).decode()
        assert f"{kind}-src 'sha256-{digest}'" in csp
    assert render_page(build_page([REPORT])) == html  # the same reports, the same bytes


def test_changes_are_what_diff_computes_for_the_two_reports() -> None:
    page = build_page([REPORT], compare=BEFORE)
    cmp = page.comparison
    assert cmp is not None
    diff = diff_reports(BEFORE, REPORT)
    # paired by case folder name, as `diff` pairs them; shown by case name
    folder = {EVIL_CASE: "script>"}
    labels = [f"{folder.get(c.case, c.case)} [{c.implementation}]" for c in cmp.changes]
    assert labels == diff["summary"]["different"]
    assert (cmp.results, cmp.changed) == ((14, 14), diff["summary"]["changed"])
    assert (cmp.only_old, cmp.only_new) == (2, 2)
    by = {(c.case, c.implementation): c for c in cmp.changes}
    stale = by[("stale-entry", "threads-ts")]
    assert (stale.what, stale.before, stale.after) == (
        "verdict changed",
        ("xfail", ("must_unmatched",)),
        ("xpass", ()),
    )
    assert by[("gone-case", "threads-py")].after is None
    evil = by[(EVIL_CASE, "threads-py")]
    assert evil.what == "reasons changed"


def test_shards_make_one_page_and_a_result_twice_is_refused(tmp_path: Path) -> None:
    lines = REPORT.read_text().splitlines(keepends=True)
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text("".join(lines[:5]))
    b.write_text(lines[0] + "".join(lines[5:]))
    page = build_page([a, b])
    assert page.totals == build_page([REPORT]).totals
    assert len(page.sources) == 2
    with pytest.raises(CaseError) as twice:
        build_page([a, REPORT])
    assert twice.value.code == "invalid_request" and "in two reports" in twice.value.message
    with pytest.raises(CaseError, match="given twice"):
        build_page([a, a])


@pytest.mark.parametrize(
    ("text", "code", "line", "pointer"),
    [
        ('{"kind": "result"}\n', "invalid_request", 1, None),
        ("", "invalid_request", 1, None),
        ("{not json\n", "invalid_request", 1, None),  # not JSON at all: not a report
        ("from pathlib import Path\n", "invalid_request", 1, None),  # a Python file
        ("\ufeff{}\n", "invalid_request", 1, None),
        ('{"kind": "header"}\n{"kind": "resu\n', "json_invalid", 2, None),  # a cut report
    ],
)
def test_a_file_that_is_not_a_report_is_refused(
    tmp_path: Path, text: str, code: str, line: int, pointer: str | None
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(text)
    with pytest.raises(CaseError) as err:
        build_page([bad])
    assert err.value.code == code and err.value.location.line == line


def test_a_result_without_a_verdict_is_refused_with_its_line_and_pointer(tmp_path: Path) -> None:
    lines = REPORT.read_text().splitlines()
    broken = json.loads(lines[3])
    del broken["verdict"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([*lines[:3], json.dumps(broken), *lines[4:]]) + "\n")
    with pytest.raises(CaseError) as err:
        build_page([bad])
    assert err.value.code == "invalid_request"
    assert (err.value.location.line, err.value.location.pointer) == (4, "/verdict")
    with pytest.raises(CaseError, match="no report"):
        build_page([])


def test_a_huge_value_is_cut_with_a_note(tmp_path: Path) -> None:
    lines = REPORT.read_text().splitlines()
    r = json.loads(lines[-2 - 1])  # the <script> case on threads-py: a fail
    r["divergence"]["recorded"] = "x" * 50_000
    path = tmp_path / "big.jsonl"
    path.write_bytes(canonical_line(json.loads(lines[0])) + b"\n" + canonical_line(r) + b"\n")
    (entry,) = build_page([path]).detailed
    assert entry.divergence is not None and entry.divergence.recorded is not None
    assert entry.divergence.recorded.endswith("(30002 more characters in the report)")


def _report(case: str, value: Any, reason: str) -> bytes:
    head = json.loads(REPORT.read_text().splitlines()[0])
    r = json.loads(REPORT.read_text().splitlines()[-3])
    r.update(case=case, path=f"cases/{case}")
    r["divergence"]["recorded"] = value
    r["baseline"] = {"reason": reason, "issue": case}
    return b"".join(canonical_line(x) + b"\n" for x in (head, r))


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    case=st.text(min_size=1, max_size=40),
    value=st.recursive(
        st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | st.text(max_size=30),
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
        ),
        max_leaves=8,
    ),
    reason=st.text(max_size=40),
)
def test_any_text_in_a_report_stays_text(
    tmp_path: Path, case: str, value: Any, reason: str
) -> None:
    path = tmp_path / "r.jsonl"
    try:
        path.write_bytes(_report(case, value, reason))
    except CaseError:
        return  # a value canonical JSON refuses (lone surrogates) cannot be in a report
    html = render_page(build_page([path]))
    doc = parse(html)
    assert [t for t, _ in doc.tags].count("script") == 1
    assert {t for t, _ in doc.tags} <= ALLOWED_TAGS
    text = "".join(doc.text)
    assert case in text


ALLOWED_TAGS = {
    "html", "head", "meta", "title", "link", "style", "body", "a", "header", "h1", "h2", "h3",
    "h4", "p", "ul", "li", "code", "main", "section", "div", "table", "caption", "thead", "tr",
    "th", "td", "tbody", "tfoot", "span", "dl", "dt", "dd", "form", "fieldset", "legend",
    "label", "input", "button", "article", "pre", "figure", "figcaption", "footer", "script",
}  # fmt: skip


def _add_must(case: Path, matcher: dict[str, Any]) -> None:
    doc = json.loads((case / "case.json").read_text())
    doc["expect"]["must"].append(matcher)
    (case / "case.json").write_text(json.dumps(doc))


def test_report_html_on_real_runs_with_a_baseline(tmp_path: Path, conformance_case: Any) -> None:
    """Two real runs: without a baseline, then with one listing a failure (xfail) and a case
    that passes (xpass); the page of the second, compared with the first."""
    _add_must(conformance_case("weather-stub"), {"type": "tool_result", "data": {"name": "nope"}})
    _add_must(conformance_case("reads-notes"), {"type": "tool_result", "data": {"name": "nope"}})
    conformance_case("writes-summary")
    run = ["run", "cases", "--impl", "threads-py", "--format", "json"]
    first = cli(*run, cwd=tmp_path)
    assert first.returncode == 3, first.stderr
    (tmp_path / "before.jsonl").write_text(first.stdout)
    entries = [
        {
            "case": "weather-stub",
            "implementation": "threads-py",
            "check": "must[1]",
            "reason": "the <b>weather</b> tool is not called by that name",
            "issue": "https://example.com/agent/issues/7",
        },
        {"case": "writes-summary", "implementation": "threads-py", "reason": "was flaky"},
    ]
    (tmp_path / "baseline.json").write_text(json.dumps({"format": 1, "entries": entries}))
    second = cli(*run, "--baseline", "baseline.json", cwd=tmp_path)
    assert second.returncode == 3, second.stderr
    (tmp_path / "now.jsonl").write_text(second.stdout)

    p = cli("report", "html", "now.jsonl", "--compare", "before.jsonl", "-o", "site", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout == (
        "wrote site/index.html: 3 case(s) x 1 implementation(s): 1 xfail, 1 xpass, 1 fail\n"
    )
    page = build_page([tmp_path / "now.jsonl"], compare=tmp_path / "before.jsonl")
    (xfail,) = [e for e in page.expected if e.verdict == "xfail"]
    assert xfail.baseline is not None and xfail.baseline.check == "must[1]"
    assert xfail.divergence is not None and xfail.divergence.kind == "matcher"
    assert page.comparison is not None
    moved = {(c.case, c.before, c.after) for c in page.comparison.changes}
    assert moved == {
        ("weather-stub", ("fail", ("must_unmatched",)), ("xfail", ("must_unmatched",))),
        ("writes-summary", ("pass", ()), ("xpass", ())),
    }
    html = (tmp_path / "site" / "index.html").read_text()
    assert "the &lt;b&gt;weather&lt;/b&gt; tool is not called by that name" in html
    assert '<a href="https://example.com/agent/issues/7" rel="noreferrer">' in html
    assert "First divergence: matcher" in html and "<code>must_unmatched</code>" in html

    bad = cli("report", "html", "now.jsonl", "-o", "now.jsonl", cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.startswith("error[invalid_request]: ")
    twice = cli("report", "html", "now.jsonl", "now.jsonl", "-o", "x", cwd=tmp_path)
    assert twice.returncode == 2 and "given twice" in twice.stderr
    assert not (tmp_path / "x").exists()


def test_write_page_refuses_a_folder_it_cannot_create(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(CaseError) as err:
        write_page([REPORT], tmp_path / "file" / "site")
    assert err.value.code == "io_error"
    assert not list(tmp_path.glob("**/.index.html.tmp-*"))


def test_a_conformance_report_with_several_tests_in_one_file_makes_a_page(tmp_path: Path) -> None:
    """A listed area's file holds several tests (``depth-1``, ``depth-2``: one path, two
    cases): they are two results, not one result in two reports."""
    report = tmp_path / "conformance.jsonl"
    suite = Path(__file__).resolve().parent.parent / "spec" / "conformance"
    proc = cli(
        "conformance", str(suite), "--impl", "threads-py", "--area", "driver-requests",
        "--format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    report.write_text(proc.stdout)
    results = [json.loads(x) for x in proc.stdout.splitlines() if '"kind":"result"' in x]
    paths = [r["path"] for r in results]
    assert len(set(paths)) < len(paths)  # some file holds several tests
    page = build_page([report])
    assert page.totals["pass"] == len(results)
    html = tmp_path / "page"
    shown = cli("report", "html", str(report), "-o", str(html), cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
