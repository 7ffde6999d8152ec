"""``show``: a case rendered for a reviewer (rich renderables), and one-line summaries of
canonical events. Values (text, tool inputs and results) only on request.

Reason codes: ``case_invalid`` (case.json unusable) from :func:`render_case`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core.errors import CaseError, Problem
from .files import CANONICAL_DIALECT, _render, short_fingerprint, unread_file

#: The warning ``show --values`` prints once on stderr.
VALUES_WARNING = (
    "warning: a case holds the raw inputs and outputs of the turn, unredacted "
    "(user input, tool inputs and results, file contents); mind where you paste "
    "this output"
)


def _shape(value: Any) -> str:
    """What a value is, without the value: ``text, 27 chars``, ``3 blocks (text, tool_use)``."""
    if isinstance(value, str):
        return f"text, {len(value)} chars"
    if isinstance(value, list):
        kinds = [b.get("type", "?") if isinstance(b, dict) else type(b).__name__ for b in value]
        return f"{len(value)} block(s)" + (f" ({', '.join(dict.fromkeys(kinds))})" if kinds else "")
    if isinstance(value, dict):
        return f"object, {len(value)} key(s)"
    return type(value).__name__


def _content_text(value: Any, limit: int = 100) -> str:
    if isinstance(value, str):
        text = value
    elif isinstance(value, list):
        parts = []
        for b in value:
            if isinstance(b, dict) and isinstance(b.get("text"), str):
                parts.append(b["text"])
            elif isinstance(b, dict) and b.get("type") == "tool_use":
                parts.append(f"{b.get('name')}({_render(b.get('input'), limit)})")
            else:
                parts.append(_render(b, limit))
        text = " | ".join(parts)
    else:
        text = _render(value, limit)
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _tool_uses(message: Any) -> list[str]:
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    return [
        str(b.get("name")) for b in content if isinstance(b, dict) and b.get("type") == "tool_use"
    ]


def _sub(data: dict[str, Any], key: str) -> dict[str, Any]:
    """``data[key]`` when it is an object, else ``{}`` (a summary never fails on a shape)."""
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def _thread_started(ev: dict[str, Any], data: dict[str, Any], values: bool) -> str:
    agent = _sub(data, "agent")
    tools = [str(x.get("name")) for x in agent.get("tools", []) if isinstance(x, dict)]
    model = f" ({agent.get('model')})" if agent.get("model") else ""  # no empty "()"
    return f"agent {agent.get('name')}{model}, tools: {', '.join(tools) or '-'}"


def _user_message(ev: dict[str, Any], data: dict[str, Any], values: bool) -> str:
    # the user's input is what a reviewer reads first: always shown
    return _content_text(data.get("content"), 400 if values else 100)


def _turn_started(ev: dict[str, Any], data: dict[str, Any], values: bool) -> str:
    return f"{data.get('turn_id')}"


def _model_requested(ev: dict[str, Any], data: dict[str, Any], values: bool) -> str:
    model = f"{data.get('model')} " if data.get("model") else ""  # an import may know none
    return f"{model}request {short_fingerprint(data.get('request_sha256'))}"


def _model_responded(ev: dict[str, Any], data: dict[str, Any], values: bool) -> str:
    uses = _tool_uses(data.get("message"))
    out = f"stop_reason {data.get('stop_reason')}"
    if uses:
        out += f", tool_use: {', '.join(uses)}"
    if values:
        message = data.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        out += f": {_content_text(content)}"
    return out


def _tool_called(ev: dict[str, Any], data: dict[str, Any], values: bool) -> str:
    out = f"{data.get('name')} ({data.get('kind')}, {data.get('effect')}) {data.get('tool_use_id')}"
    return out + (f" input {_render(data.get('input'))}" if values else "")


def _tool_result(ev: dict[str, Any], data: dict[str, Any], values: bool) -> str:
    status = "error" if data.get("is_error") else "ok"
    out = f"{data.get('name')} {data.get('tool_use_id')} {status}"
    content = data.get("content")
    return out + (f": {_content_text(content)}" if values else f" ({_shape(content)})")


def _sandbox_event(ev: dict[str, Any], data: dict[str, Any], values: bool) -> str:
    if ev.get("type") == "sandbox_wrote" and data.get("artifact") is None:
        return f"{data.get('path')} deleted"
    sha = short_fingerprint(data.get("sha256"))
    return f"{data.get('path')} {data.get('size')} bytes sha256 {sha}"


def _artifact_added(ev: dict[str, Any], data: dict[str, Any], values: bool) -> str:
    aid = short_fingerprint(data.get("artifact_id"))
    return f"{aid} {data.get('media_type')} {data.get('size')} bytes"


def _snapshot_taken(ev: dict[str, Any], data: dict[str, Any], values: bool) -> str:
    return f"snapshot {data.get('snapshot_id')}"


def _restored(ev: dict[str, Any], data: dict[str, Any], values: bool) -> str:
    return f"restore {data.get('snapshot_id')} (epoch {ev.get('epoch')})"


def _forked(ev: dict[str, Any], data: dict[str, Any], values: bool) -> str:
    return f"branch {ev.get('branch_id')} from {data.get('from_event_id')}"


def _turn_completed(ev: dict[str, Any], data: dict[str, Any], values: bool) -> str:
    usage = _sub(data, "usage")
    return (
        f"{data.get('turn_id')} {data.get('stop_reason')} "
        f"({usage.get('input_tokens')} in, {usage.get('output_tokens')} out)"
    )


def _turn_failed(ev: dict[str, Any], data: dict[str, Any], values: bool) -> str:
    return f"{data.get('turn_id')} {_sub(data, 'error').get('code')}"


#: The summary of each event type (spec/thread-log.md 4); other types are extensions.
_SUMMARIES: dict[str, Callable[[dict[str, Any], dict[str, Any], bool], str]] = {
    "thread_started": _thread_started,
    "user_message": _user_message,
    "turn_started": _turn_started,
    "model_requested": _model_requested,
    "model_responded": _model_responded,
    "tool_called": _tool_called,
    "tool_result": _tool_result,
    "sandbox_read": _sandbox_event,
    "sandbox_wrote": _sandbox_event,
    "artifact_added": _artifact_added,
    "snapshot_taken": _snapshot_taken,
    "restored": _restored,
    "forked": _forked,
    "turn_completed": _turn_completed,
    "turn_failed": _turn_failed,
}


def event_summary(ev: dict[str, Any], values: bool = False) -> str:
    """A one-line summary of a canonical event; values (model text, tool inputs and results)
    only when ``values``; a user message's text always."""
    data = _sub(ev, "data")
    t = ev.get("type")
    summary = _SUMMARIES.get(t) if isinstance(t, str) else None
    if summary is not None:
        return summary(ev, data, values)
    keys = ", ".join(sorted(data)) or "no data"
    return f"extension ({keys})" + (f": {_render(data)}" if values else "")


def _row(table: Any, *cells: Any, style: str = "") -> None:
    """Add a row whose plain strings are text, never rich markup (values may hold ``[...]``)."""
    from rich.text import Text

    table.add_row(*(Text(c) if isinstance(c, str) else c for c in cells), style=style)


def render_case(
    path: Path,
    *,
    values: bool = False,
    all_events: bool = False,
    last: int = 20,
    boxed: bool = True,
    problems: list[Problem] | None = None,
) -> Any:
    """A rich renderable of a case: header (name, at, dialects, fingerprint), the
    user's input, must/expect matchers, the prefix timeline (last ``last`` events unless
    ``all_events``), model replies, stubs, sandbox reads and artifacts. Model text, tool
    inputs and results are shown only with ``values``. In a box unless ``boxed`` is false
    (piped output: a box would pad every line to its width). Raises ``CaseError`` when
    case.json is unusable; other problems that stop a run (a log cut short, a recording that
    is not UTF-8) are shown inline and appended to ``problems``, so ``show`` can exit 1."""
    from rich.console import Group
    from rich.panel import Panel
    from rich.text import Text

    from ..case.loader import inspect_case

    case, found = inspect_case(path)  # the one case loader; symlinks are never opened
    blocking = [x for x in found if x.code != "fingerprint_stale"]
    if problems is not None:
        problems.extend(blocking)
    unread = [
        x for x in blocking if x.code == "case_too_large" or unread_file(path, case, x)
    ]  # a recording over its bounds (8.4 item 6) is not read either
    if unread:  # a file on disk that could not be read (special, symlink, too large)
        loc = unread[0].location
        raise CaseError(unread[0].code, unread[0].message, file=loc.file)
    if case is None or any(x.location.file == str(path / "case.json") for x in blocking):
        loc = blocking[0].location
        raise CaseError(
            blocking[0].code, blocking[0].message, file=loc.file, line=loc.line, pointer=loc.pointer
        )
    meta = dict(case.meta)
    files = dict(case.files)
    parts: list[Any] = [_header(path, meta, case.fingerprint_ok, values)]
    parts.extend(_matchers(meta))
    parts.extend(_timeline(case, meta, values, all_events, last, blocking))
    for name, build in (
        ("model.json", _replies),
        ("stubs.json", _stubs),
        ("sandbox.json", _sandbox),
    ):
        parts.append(Text(""))
        if name in case.documents:
            parts.append(build(case.documents[name], meta, files, values))
        else:
            parts.append(_broken(name, _problem_of(blocking, path / name)))
    parts.append(_artifacts(files))
    if not boxed:
        return Group(Text(f"case {meta['name']}", style="bold"), *parts)
    return Panel(Group(*parts), title=f"case {meta['name']}", expand=False)


def _problem_of(problems: list[Problem], file: Path) -> str:
    found = [x for x in problems if x.location.file == str(file)]
    return f"error[{found[0].code}]: {found[0].render()}" if found else f"{file.name} is missing"


def _broken(name: str, message: str) -> Any:
    from rich.text import Text

    return Text(f"{name}: {message}", style="red")


def _header(path: Path | str, meta: dict[str, Any], fp_ok: bool, values: bool) -> Any:
    from rich.table import Table
    from rich.text import Text

    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column()
    _row(head, "name", meta["name"])
    _row(head, "path", str(path))
    _row(head, "at", meta["at"])
    _row(head, "dialects", ", ".join(meta["dialects"]))
    _row(head, "portable", str(meta["portable"]).lower())
    _row(head, "external_effects", meta["external_effects"])
    agent = meta["agent"]
    _row(
        head,
        "agent",
        f"{agent['name'] or '-'} ({agent['model'] or '-'}), tools: "
        + (", ".join(f"{t['name']} [{t['kind']}/{t['effect']}]" for t in agent["tools"]) or "-"),
    )
    _row(
        head,
        "fingerprint",
        Text(
            short_fingerprint(meta.get("fingerprint"))
            + ("" if fp_ok else "  stale: files changed since saving"),
            style="" if fp_ok else "yellow",
        ),
    )
    _row(head, "input", _content_text(meta["input"], 400))
    return head


def _matchers(meta: dict[str, Any]) -> list[Any]:
    from rich.text import Text

    parts: list[Any] = []
    for key in ("must", "expect"):
        matchers = meta["expect"][key]
        t = Text(
            f"\n{key} ({len(matchers)})"
            + ("  any order" if key == "must" else "  ordered subsequence"),
            style="bold",
        )
        parts.append(t)
        for i, m in enumerate(matchers):
            parts.append(Text(f"  [{i}] {_render(m, 400)}"))
        if not matchers:
            parts.append(Text("  none", style="dim"))
    return parts


def _timeline(
    case: Any,
    meta: dict[str, Any],
    values: bool,
    all_events: bool,
    last: int,
    problems: list[Problem],
) -> list[Any]:
    """The prefix log of the canonical dialect (or the first listed), newest ``last`` events."""
    from rich.text import Text

    listed = meta["dialects"]
    impl = CANONICAL_DIALECT if CANONICAL_DIALECT in listed else listed[0]
    events: list[dict[str, Any]] = list(case.logs.get(impl, ()))
    error = None if impl in case.logs else _problem_of(problems, case.log_path(impl))
    shown = events if all_events else events[-last:]
    title = f"\nprefix log.{impl}.jsonl: {len(events)} event(s)"
    if len(shown) < len(events):
        title += f", the last {len(shown)} shown (--all for every event)"
    parts: list[Any] = [Text(title, style="bold")]
    if error:
        parts.append(Text("  " + error, style="red"))
    if shown:
        parts.append(timeline_table(shown, meta["at"], values))
    return parts


def timeline_table(events: list[dict[str, Any]], at: Any, values: bool) -> Any:
    """One row per canonical event (seq, type, actor, :func:`event_summary`); the event
    ``at`` highlighted."""
    from rich.table import Table

    table = Table(show_edge=False, header_style="bold", pad_edge=False)
    for col in ("seq", "type", "actor", "summary"):
        table.add_column(col, overflow="fold")
    for ev in events:
        style = "bold cyan" if ev.get("event_id") == at else ""
        _row(
            table,
            str(ev.get("seq")),
            str(ev.get("type")),
            str(ev.get("actor_kind")),
            event_summary(ev, values),
            style=style,
        )
    return table


def _replies(doc: Any, meta: dict[str, Any], files: dict[str, bytes] | None, values: bool) -> Any:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    t = Table(title=None, show_edge=False, header_style="bold", pad_edge=False)
    for col in ("#", "stop_reason", "tool_use", "tokens", "request"):
        t.add_column(col, overflow="fold")
    if values:
        t.add_column("content", overflow="fold")
    for i, r in enumerate(doc["replies"]):
        usage = r.get("usage") or {}
        uses = ", ".join(_tool_uses(r.get("message"))) or "-"
        row = [
            str(i),
            str(r.get("stop_reason")),
            uses,
            f"{usage.get('input_tokens')}/{usage.get('output_tokens')}",
            short_fingerprint(r.get("request_sha256")),
        ]
        if values:
            row.append(_content_text((r.get("message") or {}).get("content"), 200))
        _row(t, *row)
    return Group(Text(f"model replies ({len(doc['replies'])})", style="bold"), t)


def _stubs(doc: Any, meta: dict[str, Any], files: dict[str, bytes] | None, values: bool) -> Any:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    t = Table(show_edge=False, header_style="bold", pad_edge=False)
    for col in ("#", "tool", "result"):
        t.add_column(col, overflow="fold")
    if values:
        t.add_column("input", overflow="fold")
        t.add_column("content", overflow="fold")
    for i, c in enumerate(doc["calls"]):
        result = c.get("result") or {}
        row = [str(i), str(c.get("tool")), "error" if result.get("is_error") else "ok"]
        if values:
            row += [_render(c.get("input"), 200), _content_text(result.get("content"), 200)]
        _row(t, *row)
    return Group(
        Text(
            f"stubs ({len(doc['calls'])})"
            + (f"  external_effects {meta['external_effects']}" if meta else ""),
            style="bold",
        ),
        t,
    )


def _sandbox(doc: Any, meta: dict[str, Any], files: dict[str, bytes] | None, values: bool) -> Any:
    """Sandbox reads; ``files`` None: the artifacts are not known (one file of a diff)."""
    from rich.console import Group
    from rich.text import Text

    out: list[Any] = [Text(f"sandbox reads ({len(doc['reads'])})", style="bold")]
    for r in doc["reads"]:
        art = r.get("artifact")
        present = (
            files is None or art is None or f"artifacts/{str(art).removeprefix('sha256:')}" in files
        )
        out.append(
            Text(
                f"  {r.get('path')}  sha256 {short_fingerprint(r.get('sha256'))}"
                + ("" if present else "  (artifact missing)"),
                style="" if present else "red",
            )
        )
    return Group(*out)


def _artifacts(files: dict[str, bytes]) -> Any:
    from rich.text import Text

    arts = sorted(n for n in files if n.startswith("artifacts/"))
    listed = ", ".join(
        f"{short_fingerprint(n.removeprefix('artifacts/'))} {len(files[n])} B" for n in arts
    )
    return Text(f"\nartifacts ({len(arts)}): " + (listed or "none"), style="bold")
