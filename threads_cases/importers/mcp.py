"""MCP session cassettes as a source of tool answers (spec/importers.md section 10).

An MCP session cassette records the JSON-RPC messages between an MCP client and server. Three
shapes are read (:func:`read_mcp_calls`):

* a JSON document with an ``interactions`` list (mcp-recorder's ``cassette.json``) or a
  ``session.interactions`` list (agent-vcr's ``.vcr``), each interaction holding a
  ``request`` and a ``response`` message;
* JSON Lines of JSON-RPC messages, each line the message itself or a record holding it under
  ``message`` (proxy and debugger logs); a response answers the request of its ``id``.

Each ``tools/call`` request paired with its response is one :class:`McpCall`: the tool's
``name``, its ``arguments`` (``{}`` when absent) and the result ``{"content", "is_error"}``:
the result's ``content`` blocks (``text`` kept, ``image`` as an image block of base64
``source``, a ``resource`` with text as a text block, any other block as a text block of
its canonical JSON; no blocks but ``structuredContent``: one text block of its JSON) and
``is_error`` the result's ``isError``; a JSON-RPC ``error`` response is the text ``MCP error
<code>: <message>`` with ``is_error`` true. A ``tools/call`` with no response (the session
was cut) is left out and counted in :attr:`McpCalls.unanswered`.

:func:`mcp_supply` turns the calls into a supply document (spec/replay.md 5.2): one
``tool:<prefix><name>`` answer per tool name. A supply answers a name whatever the input,
so a tool whose calls got different results is refused (``invalid_request``, naming the
tool and the two places): such calls are answered by the case's stubs, which match the
input (``threads-cases accept CASE --supply`` writes the answers it used as stubs).

Reason codes: ``invalid_request`` (not an MCP cassette, no ``tools/call``, different results
for one tool), ``io_error``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..core.canonical import canonical_line
from ..core.errors import CaseError
from ..core.files import read_regular
from ..core.strictjson import parse

#: at most this many bytes of cassette are read (a supply is at most 64 KiB of answers)
MAX_CASSETTE_BYTES = 256 << 20
MCP_HINT = (
    "pass an MCP session cassette (mcp-recorder's JSON, agent-vcr's .vcr, or JSON Lines of "
    'JSON-RPC messages) or a supply document {"calls": {...}} (spec/importers.md section 10)'
)


@dataclass(frozen=True)
class McpCall:
    """One answered ``tools/call``: ``name``, ``arguments`` (an object), ``result``
    ``{"content": [blocks], "is_error": bool}`` and ``where`` (``interactions[<i>]`` or
    ``line <n>``)."""

    name: str
    arguments: dict[str, Any]
    result: dict[str, Any]
    where: str


@dataclass
class McpCalls:
    """The calls of a cassette in order, and how many ``tools/call`` requests no response
    answered."""

    calls: list[McpCall] = field(default_factory=list)
    unanswered: int = 0


def _refuse(path: Path, message: str) -> CaseError:
    return CaseError("invalid_request", message, file=str(path), hint=MCP_HINT)


def _block(b: Any) -> dict[str, Any]:
    """An MCP content block as a content block of a tool result (module docstring)."""
    if isinstance(b, dict):
        t = b.get("type")
        if t == "text" and isinstance(b.get("text"), str):
            return {"type": "text", "text": b["text"]}
        if t == "image" and isinstance(b.get("data"), str):
            media = b.get("mimeType") if isinstance(b.get("mimeType"), str) else ""
            source = {"type": "base64", "media_type": media, "data": b["data"]}
            return {"type": "image", "source": source}
        res = b.get("resource")
        if t == "resource" and isinstance(res, dict) and isinstance(res.get("text"), str):
            return {"type": "text", "text": res["text"]}
    return {"type": "text", "text": canonical_line(b).decode()}


def _result(response: dict[str, Any]) -> dict[str, Any]:
    err = response.get("error")
    if isinstance(err, dict):
        text = f"MCP error {err.get('code')}: {err.get('message', '')}"
        return {"content": [{"type": "text", "text": text}], "is_error": True}
    res = response.get("result")
    res = res if isinstance(res, dict) else {}
    blocks = res.get("content")
    content = [_block(b) for b in blocks] if isinstance(blocks, list) else []
    if not content and "structuredContent" in res:
        content = [{"type": "text", "text": canonical_line(res["structuredContent"]).decode()}]
    return {"content": content, "is_error": res.get("isError") is True}


def _call(request: Any, response: Any, where: str) -> McpCall | None:
    """The call of a ``tools/call`` request answered by ``response``, else ``None``."""
    if not isinstance(request, dict) or request.get("method") != "tools/call":
        return None
    params = request.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    if not isinstance(name, str) or not name or not isinstance(response, dict):
        return None
    args = params.get("arguments") if isinstance(params, dict) else None
    return McpCall(name, args if isinstance(args, dict) else {}, _result(response), where)


def _from_document(doc: dict[str, Any], out: McpCalls) -> bool:
    items = doc.get("interactions")
    session = doc.get("session")
    if not isinstance(items, list) and isinstance(session, dict):
        items = session.get("interactions")
    if not isinstance(items, list):
        return False
    for i, it in enumerate(items):
        if not isinstance(it, dict):
            continue
        request, response = it.get("request"), it.get("response")
        call = _call(request, response, f"interactions[{i}]")
        if call is not None:
            out.calls.append(call)
        elif isinstance(request, dict) and request.get("method") == "tools/call":
            out.unanswered += 1
    return True


def _from_lines(data: bytes, out: McpCalls) -> bool:
    """JSON Lines of JSON-RPC messages (module docstring); False when no line is one."""
    pending: dict[str, tuple[dict[str, Any], int]] = {}
    answered: list[tuple[int, McpCall]] = []
    seen = False
    for n, line in enumerate(data.splitlines(), 1):
        try:
            rec = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        msg = rec.get("message", rec) if isinstance(rec, dict) else None
        if not isinstance(msg, dict) or "id" not in msg:
            continue
        key = orjson.dumps(msg["id"]).decode()
        if isinstance(msg.get("method"), str):
            seen = True
            pending[key] = (msg, n)
        elif ("result" in msg or "error" in msg) and key in pending:
            request, at = pending.pop(key)
            call = _call(request, msg, f"line {at}")
            if call is not None:
                answered.append((at, call))
    out.calls.extend(c for _, c in sorted(answered, key=lambda x: x[0]))
    out.unanswered += sum(1 for m, _ in pending.values() if m.get("method") == "tools/call")
    return seen


def read_mcp_calls(path: str | os.PathLike[str]) -> McpCalls:
    """The answered ``tools/call`` requests of the cassette at ``path`` (module docstring).
    Raises ``CaseError("invalid_request")`` for a file that is no MCP cassette and
    ``io_error`` for one that cannot be read."""
    p = Path(path)
    data = read_regular(p, code="io_error", limit=MAX_CASSETTE_BYTES)
    out = McpCalls()
    try:
        doc = parse(data, code="invalid_request", file=str(p))
    except CaseError:
        doc = None
    found = _from_document(doc, out) if isinstance(doc, dict) else False
    if not found and not _from_lines(data, out):
        from .wrong_format import reworded  # another format, empty or binary: say which

        refused = _refuse(
            p, "not an MCP session cassette: no interactions list and no JSON-RPC line"
        )
        raise reworded(refused, p, "mcp")
    return out


def is_mcp_cassette(path: str | os.PathLike[str]) -> bool:
    """Whether the regular file's first 64 KiB name JSON-RPC (``"jsonrpc"``) and hold no
    supply document: a cheap test for ``--supply`` (:func:`mcp_supply` reads the file)."""
    try:
        if not Path(path).is_file():  # a FIFO or a device is refused by the supply reader
            return False
        with open(path, "rb") as fh:
            head = fh.read(1 << 16)
    except OSError:
        return False
    return b'"jsonrpc"' in head and not head.lstrip().startswith(b'{"calls"')


def mcp_supply(path: str | os.PathLike[str], *, prefix: str = "") -> dict[str, Any]:
    """The supply document ``{"calls": {"tool:<prefix><name>": result}}`` of the cassette's
    calls (module docstring; ``prefix`` such as ``mcp__github__`` names the tools as the
    agent does). Raises ``CaseError("invalid_request")`` when it holds no ``tools/call`` or
    when one tool got different results."""
    p = Path(path)
    calls: dict[str, Any] = {}
    first: dict[str, McpCall] = {}
    for call in read_mcp_calls(p).calls:
        key = f"tool:{prefix}{call.name}"
        if key in calls and calls[key] != call.result:
            raise CaseError(
                "invalid_request",
                f"tool {call.name!r} got different results ({first[key].where} and "
                f"{call.where}); a supply answers a tool name with one result",
                file=str(p),
                hint="keep one of the calls, or let the case's stubs answer them by input: "
                "`threads-cases accept CASE --supply FILE` writes the answers it used as stubs",
            )
        calls.setdefault(key, call.result)
        first.setdefault(key, call)
    if not calls:
        raise _refuse(p, "the cassette holds no answered tools/call request")
    return {"calls": calls}


def supply_refusal(err: CaseError, path: str | os.PathLike[str]) -> CaseError:
    """``err``, the refusal of ``--supply FILE`` read as a supply document, or the refusal
    saying what the file is when it is a recording of another format (a VCR cassette of
    LLM API calls is imported as a thread, never a supply) or empty or binary
    (:func:`~.wrong_format.reworded`)."""
    from .wrong_format import reworded

    return reworded(err, path, "mcp")
