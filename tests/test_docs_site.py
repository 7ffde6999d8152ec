"""The documentation site (mkdocs.yml, docs/): it builds under ``mkdocs build --strict`` (a
broken link, anchor, page or nav entry fails), its generated reference pages are current,
and in headless Chromium (Debian's ``/usr/bin/chromium`` driven by Playwright, as
tests/test_compliance_browser.py does; never a downloaded browser) every page loads, every
link inside the site reaches a page and an anchor that exist, no resource of the site fails
to load, and the search index loads and answers a query.

Without Chromium (or Playwright) the browser tests fail under CI and skip elsewhere.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urlparse

import pytest
from chromium import launched

import threads_cases
from threads_cases.harness.run import settings

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.xdist_group("docs-site")  # one build of the site per run


def _generator() -> Any:
    spec = importlib.util.spec_from_file_location(
        "gen_docs_reference", ROOT / "tools" / "gen_docs_reference.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _generator()


@pytest.mark.parametrize("page", sorted(GEN.PAGES), ids=lambda p: p.name)
def test_generated_reference_page_is_current(page: Path) -> None:
    """The CLI reference, the reason-code table and the API pages are what the command
    definitions, spec/reason-codes.md, ``threads_cases.__all__`` and ts/src/index.ts give
    today."""
    want = GEN.PAGES[page]()
    have = page.read_text(encoding="utf-8") if page.is_file() else ""
    assert have == want, f"{page.relative_to(ROOT)} drifted: run python tools/gen_docs_reference.py"


def test_the_cli_reference_has_every_command() -> None:
    text = GEN.CLI_PAGE.read_text(encoding="utf-8")
    for command in ("run", "save", "accept", "baseline update", "report merge", "report html"):
        assert f"## `threads-cases {command}`" in text, command


def test_the_reason_code_page_has_every_code_of_the_spec() -> None:
    spec = (ROOT / "spec" / "reason-codes.md").read_text(encoding="utf-8")
    codes = {line.split("`")[1] for line in spec.splitlines() if line.startswith("| `")}
    page = GEN.CODES_PAGE.read_text(encoding="utf-8")
    listed = {line.split("`")[1] for line in page.splitlines() if line.startswith("| `")}
    assert codes == listed and len(codes) > 40


def test_the_python_api_page_has_every_public_name() -> None:
    text = GEN.PYTHON_API_PAGE.read_text(encoding="utf-8")
    headings = {line[4:-1] for line in text.splitlines() if line.startswith("## `")}
    assert headings == set(threads_cases.__all__)


def test_the_configuration_page_lists_every_settings_key() -> None:
    """Every key the settings reader accepts, and no other, has its row."""
    text = (ROOT / "docs" / "reference" / "configuration.md").read_text(encoding="utf-8")
    rows = {line.split("`")[1] for line in text.splitlines() if line.startswith("| `")}
    keys = set(settings.KEYS) | set(settings.IMPLEMENTATION_KEYS)
    assert keys <= rows, keys - rows
    assert not {r for r in rows if r.islower() and "_" not in r and "." not in r} - keys


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``mkdocs build --strict`` of the checkout into a temporary folder."""
    out = tmp_path_factory.mktemp("site") / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stdout}\n{proc.stderr}"
    return out


def test_the_site_builds_under_strict(site: Path) -> None:
    assert (site / "index.html").is_file()
    assert (site / "search" / "search_index.json").is_file()
    assert (site / "spec" / "replay" / "index.html").is_file()  # spec/ joins without a copy
    assert not (ROOT / "docs" / "spec").exists()


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    """The built site over HTTP on 127.0.0.1 (the search index is fetched: not file://)."""

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium (tests/chromium.py)."""
    with launched() as b:
        yield b


def _page_path(site: Path, url_path: str) -> Path:
    target = site / url_path.lstrip("/")
    return target / "index.html" if url_path.endswith("/") or target.is_dir() else target


def test_every_page_loads_and_no_link_or_anchor_is_broken(
    site: Path, served: str, browser: Any
) -> None:
    pages = sorted(p for p in site.rglob("*.html") if p.name != "404.html")
    assert len(pages) > 30, pages
    ids: dict[Path, set[str]] = {}
    links: list[tuple[Path, str]] = []
    failed: list[str] = []
    context = browser.new_context()
    page = context.new_page()
    # a request cut short by the next navigation (the search worker starting) is ERR_ABORTED:
    # not a broken resource; a missing one is a 404 response
    page.on(
        "requestfailed",
        lambda r: (
            failed.append(f"{r.failure} {r.url}")
            if r.url.startswith(served) and "ERR_ABORTED" not in (r.failure or "")
            else None
        ),
    )
    page.on(
        "response",
        lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None,
    )
    for path in pages:
        url = f"{served}/{path.relative_to(site).as_posix()}"
        response = page.goto(url, wait_until="load")
        assert response is not None and response.ok, url
        ids[path.resolve()] = set(
            page.evaluate("Array.from(document.querySelectorAll('[id]'), e => e.id)")
        )
        hrefs = page.evaluate("Array.from(document.querySelectorAll('a[href]'), a => a.href)")
        links += [(path, href) for href in hrefs]
    context.close()
    broken = []
    for source, href in links:
        if not href.startswith(served):
            continue  # outside the site (the theme's credit link)
        base, fragment = urldefrag(href)
        target = _page_path(site, urlparse(base).path).resolve()
        where = source.relative_to(site).as_posix()
        if not target.is_file():
            broken.append(f"{where}: {href}: no such page")
        elif fragment and target.suffix == ".html" and fragment not in ids.get(target, set()):
            broken.append(f"{where}: {href}: no anchor #{fragment}")
    assert not broken, "\n".join(sorted(set(broken)))
    assert not failed, failed


def test_the_search_index_loads_and_answers(served: str, browser: Any) -> None:
    context = browser.new_context()
    page = context.new_page()
    with page.expect_response(lambda r: r.url.endswith("search/search_index.json")) as info:
        page.goto(f"{served}/", wait_until="load")
    assert info.value.status == 200
    page.keyboard.press("/")  # the theme's shortcut to the search box
    page.keyboard.type("fork point")
    page.wait_for_selector(".md-search-result__item", timeout=20_000)
    titles = page.evaluate(
        "Array.from(document.querySelectorAll('.md-search-result__item'), e => e.textContent)"
    )
    context.close()
    assert any("fork point" in t.lower() for t in titles), titles[:5]
