"""MkDocs hooks (mkdocs.yml ``hooks:``): the normative spec joins the site without a copy.

spec/ stays outside docs/: :func:`on_files` adds each ``spec/*.md`` to the build as the page
``spec/<name>``, read from the repository's own file, so the site's pages link the spec
(``../spec/replay.md#11-live-runs``) and ``mkdocs build --strict`` checks those links and
anchors like any other. :func:`on_page_markdown` heads each spec page with a note saying it is
the normative text, rendered as is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

SPEC_NOTE = (
    '!!! note "Normative text"\n'
    "    This page is `{path}` of the repository, rendered as is: the specification that\n"
    "    every implementation follows. The rest of this site explains and links it.\n\n"
)


def _root(config: Any) -> Path:
    return Path(config["config_file_path"]).resolve().parent


def on_files(files: Files, config: Any) -> Files:
    root = _root(config)
    for path in sorted((root / "spec").glob("*.md")):
        files.append(
            File(
                f"spec/{path.name}",
                src_dir=str(root),
                dest_dir=config["site_dir"],
                use_directory_urls=config["use_directory_urls"],
            )
        )
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    src = page.file.src_uri
    if src.startswith("spec/") and "/" not in src[len("spec/") :]:
        return SPEC_NOTE.format(path=src) + markdown
    return markdown
