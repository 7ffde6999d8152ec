"""Headless Chromium for the browser tests (the compliance page, the documentation site):
Debian's ``chromium`` package (installed by .ci/run, or ``$THREADS_CASES_CHROMIUM``) driven by
Playwright's Python API, never ``playwright install``. Without it a test fails under CI
(``CI=true``) and skips, saying why, elsewhere."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("THREADS_CASES_CHROMIUM") or "/usr/bin/chromium"
#: no sandbox (root in CI) and none of Chromium's own network traffic (the machine's
#: network is closed: background requests would be refused, many at a time)
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def unavailable(reason: str) -> None:
    """Fail under CI, skip elsewhere, saying why the browser cannot run."""
    if IN_CI:
        pytest.fail(f"the browser test cannot run under CI: {reason}", pytrace=False)
    pytest.skip(f"{reason} (under CI=true this fails)")


@contextlib.contextmanager
def launched() -> Iterator[Any]:
    """A headless Chromium browser with a fresh profile of its own, closed afterwards."""
    if not (Path(CHROMIUM).is_file() or shutil.which(CHROMIUM)):
        unavailable(f"no Chromium at {CHROMIUM}: apt-get install chromium chromium-driver")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("the playwright package is missing: pip install -e '.[dev]'")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            yield b
        finally:
            b.close()
