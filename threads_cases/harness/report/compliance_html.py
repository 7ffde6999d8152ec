"""The compliance page as HTML (spec/conformance.md section 7): :func:`render_page` renders a
:class:`~.compliance.Page` with Jinja2 (autoescaped templates shipped in
``threads_cases/harness/report/templates/``), :func:`write_built` writes ``DIR/index.html``
(the :class:`~.reporters.Html` reporter's work).

The page is self-contained: its stylesheet and script are inline and pinned by their hashes
in its Content-Security-Policy, which forbids every other request (``default-src 'none'``).
Every value from a report is escaped text, and only ``http``/``https`` issue addresses become
links. The filters (verdict and implementation checkboxes, two preset buttons) are run by a
small script; with scripts off they stay hidden and the whole page shows.

Reason codes: those of :func:`~.compliance.build_page`, and ``io_error`` when the page cannot
be written.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

import jinja2
from markupsafe import Markup

from ...core.atomic import write_atomic
from ...core.errors import CaseError
from ..check.compliance import Page, build_page

_TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("threads_cases.harness.report", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)


def _asset(name: str) -> str:
    loader = _TEMPLATES.loader
    assert loader is not None
    return loader.get_source(_TEMPLATES, name)[0]


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def render_page(page: Page) -> str:
    """The page as one HTML document (deterministic: the same page gives the same text)."""
    css, js = _asset("compliance.css"), _asset("compliance.js")
    csp = (
        f"default-src 'none'; style-src {_csp_hash(css)}; script-src {_csp_hash(js)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    template = _TEMPLATES.get_template("compliance.html.j2")
    return template.render(page=page, css=Markup(css), js=Markup(js), csp=csp)


def write_page(
    reports: Sequence[str | os.PathLike[str]],
    out_dir: str | os.PathLike[str],
    compare: str | os.PathLike[str] | None = None,
    title: str | None = None,
) -> tuple[Path, Page]:
    """Build the page and write it to ``out_dir/index.html`` (:func:`write_built`). Returns
    the file and the page. Raises as :func:`build_page`, and ``io_error`` when the file
    cannot be written."""
    page = build_page(reports, compare, title)
    return write_built(page, out_dir), page


def write_built(page: Page, out_dir: str | os.PathLike[str]) -> Path:
    """Write ``page`` to ``out_dir/index.html`` (the folder is created; the file is written
    to a temporary name, then renamed); returns the file. ``io_error`` when it cannot be
    written."""
    html = render_page(page)
    out = Path(out_dir)
    target = out / "index.html"
    try:
        out.mkdir(parents=True, exist_ok=True)
        write_atomic(target, html.encode("utf-8"))  # a rewrite keeps the page's mode
    except OSError as exc:
        raise CaseError(
            "io_error", f"cannot write the page: {exc.strerror or exc}", file=str(target)
        ) from None
    return target
