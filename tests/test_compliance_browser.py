"""The compliance page in a real browser: headless Chromium (Debian's `chromium` package,
installed by .ci/run) driven by Playwright, on the page of the fixture reports
(tests/data/compliance/). It checks the DOM (counts, a failure's divergence, the filters by
click and by keyboard, the page without scripts), that no request leaves the page, and saves
screenshots at 360 and 1,440 px wide.

Screenshots and the page go to $THREADS_CASES_ARTIFACTS when set, else to
.threads-cases/artifacts/compliance/ under CI (CI=true), else to pytest's tmp dir. Without
Chromium (or Playwright) the test fails under CI and skips, saying why, elsewhere.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chromium import IN_CI, launched

from threads_cases.harness.report.compliance_html import write_page

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data" / "compliance"


def artifacts(tmp_path: Path) -> Path:
    """Where the screenshots go (module docstring)."""
    given = os.environ.get("THREADS_CASES_ARTIFACTS")
    if given:
        out = Path(given)
    elif IN_CI:
        out = ROOT / ".threads-cases" / "artifacts" / "compliance"
    else:
        out = tmp_path / "artifacts"
    out.mkdir(parents=True, exist_ok=True)
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium (tests/chromium.py)."""
    with launched() as b:
        yield b


def visible(page: Any, selector: str) -> int:
    return int(
        page.evaluate(
            "s => Array.from(document.querySelectorAll(s)).filter(e => !e.closest('[hidden]'))"
            ".filter(e => e.getClientRects().length > 0).length",
            selector,
        )
    )


def test_the_compliance_page_in_chromium(browser: Any, tmp_path: Path) -> None:
    out = artifacts(tmp_path)
    index, _ = write_page([DATA / "report.jsonl"], out, compare=DATA / "before.jsonl")
    requests: list[str] = []
    problems: list[str] = []
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    context.on("request", lambda r: requests.append(r.url))
    page = context.new_page()
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("dialog", lambda d: problems.append(f"dialog: {d.message}") or d.dismiss())
    page.goto(index.as_uri())

    # the DOM: counts, the matrix, a failure's divergence, the report's markup as text
    assert page.inner_text("[data-total=all]") == "14"
    assert page.inner_text("[data-total=fail]") == "2"
    assert visible(page, ".matrix tbody tr") == 7
    assert visible(page, ".matrix td[data-verdict=fail]") == 2
    assert page.inner_text("#filter-status") == "Showing 7 of 7 cases and 9 of 9 detailed results."
    failure = page.locator("article", has=page.locator("h3", has_text="weather-stub on threads-py"))
    assert "First divergence: matcher (event 5 tool_result) at /data/is_error" in (
        failure.inner_text()
    )
    assert (
        failure.locator(".divergence figure", has_text="Recorded").locator("pre").inner_text()
        == "true"
    )
    assert (
        failure.locator(".divergence figure", has_text="Replayed").locator("pre").inner_text()
        == "false"
    )
    assert "must_unmatched" in failure.locator(".check h4").inner_text()
    assert page.locator(".matrix th .case", has_text="<script>").inner_text() == (
        '<script>alert("case")</script>'
    )
    # a cell's link names its case and implementation, not only the verdict
    link = page.get_by_role("link", name="weather-stub on threads-py: fail")
    assert link.get_attribute("href") == "#" + failure.get_attribute("id")
    issue = page.locator("#expected a[href^='https://']")
    assert issue.get_attribute("href") == "https://github.com/example/agent/issues/12"
    assert page.locator("#changes tbody tr").count() == 9
    page.screenshot(path=str(out / "compliance-1440.png"), full_page=True)

    # filters by clicking: threads-ts off hides its column and its details
    page.get_by_role("checkbox", name="threads-ts", exact=True).click()
    assert visible(page, ".matrix th[data-impl=threads-ts]") == 0
    assert visible(page, "#details article[data-impl=threads-ts]") == 0
    assert visible(page, "#details article") == 5
    page.get_by_role("button", name="Show all").click()
    assert visible(page, "#details article") == 9

    # and by keyboard: Tab to the `pass` checkbox, Space unticks it, Enter on a button
    page.focus("a.skip")
    for _ in range(40):
        if page.evaluate("document.activeElement.value") == "pass":
            break
        page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.name") == "verdict"
    page.keyboard.press("Space")
    assert not page.is_checked("input[name=verdict][value=pass]")
    assert visible(page, ".matrix tbody tr") == 6  # reads-notes passed everywhere
    page.focus("button[data-preset=problems]")
    page.keyboard.press("Enter")
    assert not page.is_checked("input[name=verdict][value=skip]")
    assert page.inner_text("#filter-status") == "Showing 6 of 7 cases and 9 of 9 detailed results."

    # 360 px wide: the same page, screenshot; nothing wider than the window but the tables'
    # own scrolling regions
    page.set_viewport_size({"width": 360, "height": 800})
    page.get_by_role("button", name="Show all").click()
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    cell = "getComputedStyle(document.querySelector('#expected td')).display"
    assert page.evaluate(cell) == "block"  # the baseline's table as cards of labelled cells
    page.screenshot(path=str(out / "compliance-360.png"), full_page=True)

    context.close()
    assert problems == []
    assert [u for u in requests if not u.startswith("file://")] == []
    assert (out / "compliance-360.png").stat().st_size > 0


def test_the_page_reads_without_scripts(browser: Any, tmp_path: Path) -> None:
    index, _ = write_page([DATA / "report.jsonl"], tmp_path / "site")
    context = browser.new_context(java_script_enabled=False, viewport={"width": 360, "height": 800})
    page = context.new_page()
    page.goto(index.as_uri())
    assert not page.is_visible("#filters")
    rows = page.locator(".matrix tbody tr")
    assert rows.count() == 7 and all(rows.nth(i).is_visible() for i in range(7))
    articles = page.locator("#details article")
    assert articles.count() == 9 and all(articles.nth(i).is_visible() for i in range(9))
    context.close()
