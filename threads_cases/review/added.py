"""A case file, or a whole case, that a diff adds or deletes, rendered as ``show`` renders it
(``diff --git REV CASE`` for a case new or gone since REV, and git's diff driver for each
file of one), instead of a byte count.

What each file shows: case.json its header (name, fork point, implementations, agent, the
user's input) and matchers; a log its timeline, every event; model.json the replies;
stubs.json the stubs; sandbox.json the reads; other JSON (an expected state) its values by
pointer; anything else its size. Like ``show``, model text, tool inputs and results only with
``values``. Nothing is raised: a file that does not parse gets its size and why.
"""

from __future__ import annotations

import io
from typing import Any

from ..core.errors import CaseError
from .files import (
    CANONICAL_DIALECT,
    CASE_FILE_CODE,
    _decode_events,
    _dialect_of,
    _parse_json,
    _parse_jsonl,
    _render,
)
from .show import _header, _matchers, _replies, _sandbox, _stubs, timeline_table

#: the renderers of the recording files (show's, given only the file itself)
_RECORDINGS = {"model.json": _replies, "stubs.json": _stubs, "sandbox.json": _sandbox}


def plain_text(renderable: Any, width: int) -> str:
    """``renderable`` as plain text ``width`` columns wide, no trailing spaces."""
    from rich.console import Console

    out = io.StringIO()
    console = Console(file=out, width=width, color_system=None, highlight=False)
    console.print(renderable, soft_wrap=False)
    return "".join(line.rstrip() + "\n" for line in out.getvalue().splitlines())


def render_file(
    name: str, data: bytes, *, values: bool = False, meta: dict[str, Any] | None = None
) -> Any:
    """A rich renderable of one whole case file ``name`` (a path ending in the file's name
    in its case) with the bytes ``data`` (module docstring); ``meta``: the case.json of the
    case, when known."""
    from rich.text import Text

    base = name.rsplit("/", 1)[-1]
    try:
        view = _view(name, base, data, values, meta or {})
    except (CaseError, KeyError, TypeError, AttributeError, ValueError) as err:
        why = err.render() if isinstance(err, CaseError) else "not a case file this version reads"
        return Text(f"{len(data)} bytes ({why})")
    return view if view is not None else Text(f"{len(data)} bytes")


def _view(name: str, base: str, data: bytes, values: bool, meta: dict[str, Any]) -> Any:
    from rich.console import Group
    from rich.text import Text

    artifact = name.startswith("artifacts/") or "/artifacts/" in name
    if artifact or not base.endswith((".json", ".jsonl")):
        return None
    if base.endswith(".jsonl"):
        events = _decode_events(_parse_jsonl(data, name, "log_invalid"), _dialect_of(base))
        title = f"{base}: {len(events)} event(s)"
        return Group(Text(title, style="bold"), timeline_table(events, meta.get("at"), values))
    doc = _parse_json(data, name, CASE_FILE_CODE)
    if base == "case.json":
        folder = name.rsplit("/", 1)[0] if "/" in name else "."
        return Group(_header(folder, doc, True, values), *_matchers(doc))
    if base in _RECORDINGS:
        known = {k: meta[k] for k in ("external_effects",) if k in meta}
        return _RECORDINGS[base](doc, known, None, values)
    lines = [Text(f"{p or '/'}: {_render(v, 200)}") for p, v in _leaves(doc, "")]
    return Group(*lines) if lines else Text("(empty)")


def _leaves(value: Any, pointer: str) -> list[tuple[str, Any]]:
    """``(pointer, value)`` of the top two levels of a JSON value (deeper ones compacted)."""
    if isinstance(value, dict) and value and pointer.count("/") < 2:
        out = []
        for k, v in value.items():
            out.extend(_leaves(v, f"{pointer}/{str(k).replace('~', '~0').replace('/', '~1')}"))
        return out
    return [(pointer, value)]


def render_case_files(folder: str, files: dict[str, bytes], *, values: bool = False) -> Any:
    """A whole case given as its files (name -> bytes) in ``folder``: case.json, the
    canonical log, the recordings, then the other files (other dialects' logs, expected
    states, artifacts) by size."""
    from rich.console import Group
    from rich.text import Text

    meta: dict[str, Any] = {}
    if "case.json" in files:
        try:
            doc = _parse_json(files["case.json"], "case.json", CASE_FILE_CODE)
            meta = doc if isinstance(doc, dict) else {}
        except CaseError:
            pass
    parts: list[Any] = [Text(f"case {meta.get('name', folder)}", style="bold")]
    canonical = f"log.{CANONICAL_DIALECT}.jsonl"
    logs = sorted(n for n in files if _dialect_of(n) and n.endswith(".jsonl"))
    shown_log = canonical if canonical in files else (logs[0] if logs else None)
    order = ["case.json", *([shown_log] if shown_log else []), *_RECORDINGS]
    for name in order:
        if name in files:
            path = f"{folder}/{name}"
            parts += [Text(""), render_file(path, files[name], values=values, meta=meta)]
    rest = sorted(n for n in files if n not in order)
    if rest:
        parts += [Text(""), Text("other files", style="bold")]
        parts += [Text(f"  {n}  {len(files[n])} bytes") for n in rest]
    return Group(*parts)
