"""The three LLM APIs a cassette may record, read into one shape (spec/importers.md 6.2-6.3):
the Anthropic Messages API (``POST .../v1/messages``), OpenAI Chat Completions
(``POST .../chat/completions``) and the OpenAI Responses API (``POST .../responses``).

A request becomes a :class:`Request`: the model, the system text, the tools it defines
(names, and each one's description and input schema: Anthropic ``{name, description,
input_schema}``, Chat ``{type: function, function: {name, description, parameters}}``,
Responses ``{type: function, name, description, parameters}``), the tool
the request forces (``tool_choice`` naming a tool, or :data:`ANY_TOOL` for one requiring a
call of any tool: the structured-output patterns) and its
conversation as :class:`Item` s: ``user`` (a real user message), ``assistant`` (a reply in
the history, as Anthropic content blocks) and ``results`` (tool results, each with the call
id it answers, or only the tool name for Chat's legacy ``function`` role). A response body
becomes an :class:`Answer` (:func:`answer_of`; streamed bodies in :mod:`.sse`).

Content is Anthropic-shaped, as thread events hold it: text -> ``{"type": "text"}``;
Chat ``tool_calls`` and Responses ``function_call`` items -> ``tool_use`` blocks whose id is
the call id and whose input is the ``arguments`` decoded exactly once
(:mod:`..arguments`); Responses ``reasoning`` -> a ``thinking`` block of its summary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

from ..arguments import decode_arguments, js_numbers
from ..lenient import Note

ANTHROPIC, CHAT, RESPONSES = "anthropic-messages", "openai-chat", "openai-responses"
APIS = (ANTHROPIC, CHAT, RESPONSES)
#: :attr:`Request.forced` of a request that requires a call of any tool (``any``, ``required``)
ANY_TOOL = "*"
_FINISH = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}


@dataclass
class Item:
    """One message of a request's conversation (module docstring)."""

    kind: str
    content: Any = None
    blocks: list[dict[str, Any]] = field(default_factory=list)
    #: ``(call id or None, tool name or None, content, is_error)``
    results: list[tuple[str | None, str | None, Any, bool]] = field(default_factory=list)


@dataclass
class Request:
    api: str
    model: str = ""
    system: str = ""
    tools: list[str] = field(default_factory=list)
    #: each tool's definition by name: ``{"description", "input_schema"}`` (:func:`_tool_def`)
    definitions: dict[str, dict[str, Any]] = field(default_factory=dict)
    forced: str | None = None
    items: list[Item] = field(default_factory=list)
    previous: str | None = None
    #: the OpenAI Responses ``conversation`` it names (an id, or ``{"id"}``); None without
    conversation: str | None = None
    stream: bool = False


@dataclass
class Answer:
    """One response: ``blocks``, ``stop_reason``, ``usage`` ({input_tokens, output_tokens,
    ...}), ``response_id``, ``model``; ``cut`` when a stream stops before its end;
    ``error`` (a message) when the provider answered with an error; ``dropped``: the calls
    of a stream cut short that were still streaming."""

    blocks: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    response_id: str | None = None
    model: str = ""
    cut: bool = False
    error: str | None = None
    #: of a stream cut short, its calls whose arguments were still streaming (dropped):
    #: ``{"id", "name"}`` each, in the stream's order
    dropped: list[dict[str, Any]] = field(default_factory=list)


def api_of(method: str, uri: str) -> str | None:
    """The API a request is a model call of, by its method and path, or None."""
    if method.upper() != "POST":
        return None
    path = unquote(urlsplit(uri).path.rstrip("/"))
    if path.endswith("/messages") and not path.endswith("/count_tokens"):
        return ANTHROPIC
    if _anthropic_on_a_cloud(path):
        return ANTHROPIC
    if path.endswith("/chat/completions"):
        return CHAT
    if path.endswith("/responses"):
        return RESPONSES
    return None


def retrieved_id(method: str, uri: str) -> str | None:
    """The response id of an OpenAI Responses retrieve (``GET .../responses/<id>``), how a
    client polls a background response (spec/importers.md 6.3), or None."""
    if method.upper() != "GET":
        return None
    head, _, rid = unquote(urlsplit(uri).path.rstrip("/")).rpartition("/")
    return rid if head.endswith("/responses") and rid.startswith("resp") else None


def _anthropic_on_a_cloud(path: str) -> bool:
    """An Anthropic model called through a cloud's own endpoint with the Messages API's body
    and answer: Amazon Bedrock's ``/model/<id>/invoke`` for an ``anthropic.`` model id, Google
    Vertex AI's ``.../publishers/anthropic/models/<model>:rawPredict`` (``:streamRawPredict``,
    SSE) (spec/importers.md 6.2)."""
    if path.startswith("/model/") and path.endswith("/invoke"):
        return "anthropic." in path[len("/model/") : -len("/invoke")]
    return "/publishers/anthropic/models/" in path and path.endswith(
        (":rawPredict", ":streamRawPredict")
    )


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _texts(parts: Any, types: tuple[str, ...] = ("text", "input_text", "output_text")) -> str:
    """The text of content given as a string or a list of parts."""
    if isinstance(parts, str):
        return parts
    if not isinstance(parts, list):
        return ""
    return "".join(
        _str(p.get("text")) for p in parts if isinstance(p, dict) and p.get("type") in types
    )


def _user_content(content: Any) -> Any:
    """User content in Anthropic shape: a string, or blocks (text, image)."""
    if isinstance(content, str):
        return content
    blocks: list[dict[str, Any]] = []
    for p in content if isinstance(content, list) else []:
        if not isinstance(p, dict):
            continue
        t = p.get("type")
        if t in ("text", "input_text"):
            blocks.append({"type": "text", "text": _str(p.get("text"))})
        elif t in ("image_url", "input_image"):
            url = p.get("image_url")
            url = url.get("url") if isinstance(url, dict) else url
            blocks.append({"type": "image", "source": {"type": "url", "url": _str(url)}})
        elif t == "image" and isinstance(p.get("source"), dict):
            blocks.append(p)
    if len(blocks) == 1 and blocks[0]["type"] == "text":
        return blocks[0]["text"]
    return blocks


def _tool_use(call_id: Any, name: Any, args: Any, notes: list[Note]) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": _str(call_id),  # "": named by the conversation (empty_call_id)
        "name": _str(name) or "tool",
        "input": decode_arguments(args, notes),
    }


def _anthropic_blocks(content: Any, notes: list[Note]) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    out = []
    for b in content if isinstance(content, list) else []:
        if not isinstance(b, dict) or not isinstance(b.get("type"), str):
            continue
        if b["type"] == "tool_use":
            inp = b.get("input")
            b = {**b, "input": decode_arguments(inp, notes) if isinstance(inp, dict) else {}}
        elif b["type"] == "thinking":
            b = {"type": "thinking", "thinking": _str(b.get("thinking"))}
        elif b["type"] == "redacted_thinking":
            continue
        elif len(b) > 2 or b["type"] != "text":  # kept as it is: its numbers as section 4's
            b = js_numbers(b, notes)
        out.append(b)
    return out


# ------------------------------------------------------------------ requests
def _define(req: Request, name: Any, description: Any, schema: Any) -> None:
    """Add the tool ``name`` to ``req`` with its definition as the agent holds one: the
    ``description`` (``""`` when the request gives none) and the input schema (an object;
    ``{"type": "object"}`` when the request gives none, as a server tool of the provider's
    does). The schema is the request's value: :func:`tool_definition` reads the one the
    agent keeps (every request repeats the tools, so only the first of each is read)."""
    name = _str(name)
    if not name:
        return
    req.tools.append(name)
    req.definitions.setdefault(
        name,
        {
            "description": _str(description),
            "input_schema": schema if isinstance(schema, dict) else {"type": "object"},
        },
    )


def tool_definition(definition: dict[str, Any], notes: list[Note]) -> dict[str, Any]:
    """A definition of :attr:`Request.definitions` as the agent keeps it: integers beyond
    +-(2^53-1) in its schema read as section 4 reads them (``big_integer`` notes)."""
    return {**definition, "input_schema": js_numbers(definition["input_schema"], notes)}


def _anthropic_request(body: dict[str, Any], req: Request, notes: list[Note]) -> None:
    system = body.get("system")
    req.system = _texts(system) if not isinstance(system, str) else system
    for t in _list(body.get("tools")):
        if isinstance(t, dict):
            _define(req, t.get("name"), t.get("description"), t.get("input_schema"))
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "tool":
        req.forced = _str(choice.get("name")) or None
    elif isinstance(choice, dict) and choice.get("type") == "any":
        req.forced = ANY_TOOL
    for m in _list(body.get("messages")):
        if not isinstance(m, dict):
            continue
        content = m.get("content")
        if m.get("role") == "assistant":
            req.items.append(Item("assistant", blocks=_anthropic_blocks(content, notes)))
            continue
        results: list[tuple[str | None, str | None, Any, bool]] = [
            (_str(b.get("tool_use_id")), None, b.get("content") or "", b.get("is_error") is True)
            for b in _list(content)
            if isinstance(b, dict) and b.get("type") == "tool_result"
        ]
        if results:
            req.items.append(Item("results", results=results))
        elif m.get("role") == "user":
            req.items.append(Item("user", content=_user_content(content)))


def _chat_request(body: dict[str, Any], req: Request, notes: list[Note]) -> None:
    systems = []
    for t in _list(body.get("tools")):
        fn = t.get("function") if isinstance(t, dict) else None
        if isinstance(fn, dict):
            _define(req, fn.get("name"), fn.get("description"), fn.get("parameters"))
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and isinstance(choice.get("function"), dict):
        req.forced = _str(choice["function"].get("name")) or None
    elif choice == "required":
        req.forced = ANY_TOOL
    for m in _list(body.get("messages")):
        if not isinstance(m, dict):
            continue
        role, content = m.get("role"), m.get("content")
        if role in ("system", "developer"):
            systems.append(_texts(content))
        elif role == "user":
            req.items.append(Item("user", content=_user_content(content)))
        elif role == "assistant":
            blocks = [{"type": "text", "text": t} for t in [_texts(content)] if t]
            for c in _list(m.get("tool_calls")):
                fn = c.get("function") if isinstance(c, dict) else None
                if isinstance(fn, dict):
                    blocks.append(
                        _tool_use(c.get("id"), fn.get("name"), fn.get("arguments"), notes)
                    )
            req.items.append(Item("assistant", blocks=blocks))
        elif role == "tool":
            res = (_str(m.get("tool_call_id")), None, _texts(content), False)
            req.items.append(Item("results", results=[res]))
        elif role == "function":  # the legacy function-calling role: paired by name
            req.items.append(
                Item("results", results=[(None, _str(m.get("name")), _texts(content), False)])
            )
    req.system = "\n\n".join(s for s in systems if s)


def _responses_request(body: dict[str, Any], req: Request, notes: list[Note]) -> None:
    req.system = _str(body.get("instructions"))
    req.previous = _str(body.get("previous_response_id")) or None
    conversation = body.get("conversation")
    if isinstance(conversation, dict):
        conversation = conversation.get("id")
    req.conversation = _str(conversation) or None
    for t in _list(body.get("tools")):
        if isinstance(t, dict) and t.get("type") == "function":
            _define(req, t.get("name"), t.get("description"), t.get("parameters"))
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "function":
        req.forced = _str(choice.get("name")) or None
    elif choice == "required":
        req.forced = ANY_TOOL
    inp = body.get("input")
    if isinstance(inp, str):
        req.items.append(Item("user", content=inp))
        return
    systems = [req.system] if req.system else []
    for it in _list(inp):
        if not isinstance(it, dict):
            continue
        t, role = it.get("type", "message"), it.get("role")
        if t == "message" and role in ("system", "developer"):
            systems.append(_texts(it.get("content")))
        elif t == "message" and role == "user":
            req.items.append(Item("user", content=_user_content(it.get("content"))))
        elif t == "message" and role == "assistant":
            text = _texts(it.get("content"))
            req.items.append(Item("assistant", blocks=[{"type": "text", "text": text}]))
        elif t == "function_call":
            block = _tool_use(it.get("call_id"), it.get("name"), it.get("arguments"), notes)
            req.items.append(Item("assistant", blocks=[block]))
        elif t == "function_call_output":
            out = it.get("output")
            res = (
                _str(it.get("call_id")),
                None,
                _texts(out) if not isinstance(out, str) else out,
                False,
            )
            req.items.append(Item("results", results=[res]))
        elif t == "reasoning":
            req.items.append(Item("assistant", blocks=[]))
    req.system = "\n\n".join(s for s in systems if s)


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def request_of(api: str, body: dict[str, Any], notes: list[Note]) -> Request:
    """The :class:`Request` of a request body (a JSON object) of ``api``; repairs of call
    arguments in its history are appended to ``notes``."""
    req = Request(api, model=_str(body.get("model")), stream=body.get("stream") is True)
    if api == ANTHROPIC:
        _anthropic_request(body, req, notes)
    elif api == CHAT:
        _chat_request(body, req, notes)
    else:
        _responses_request(body, req, notes)
    req.tools = [t for t in req.tools if t]
    return req


# ------------------------------------------------------------------ responses
def error_message(status: int, body: Any) -> str:
    """A provider error as one line: ``<status> <type>: <message>``."""
    err = body.get("error") if isinstance(body, dict) else None
    if isinstance(err, dict):
        kind = _str(err.get("type")) or _str(err.get("code"))
        msg = _str(err.get("message"))
    else:
        kind, msg = "", _str(err) or (_str(body.get("message")) if isinstance(body, dict) else "")
    head = " ".join(x for x in (str(status) if status else "", kind) if x)
    msg = msg or "the provider returned an error"
    return f"{head}: {msg}" if head else msg


def chat_usage(u: Any) -> dict[str, Any]:
    if not isinstance(u, dict):
        return {}
    return {
        "input_tokens": u.get("prompt_tokens", 0),
        "output_tokens": u.get("completion_tokens", 0),
    }


def responses_output(output: Any, notes: list[Note]) -> list[dict[str, Any]]:
    """Responses output items as content blocks."""
    blocks: list[dict[str, Any]] = []
    for it in _list(output):
        if not isinstance(it, dict):
            continue
        t = it.get("type")
        if t == "message":
            for c in _list(it.get("content")):
                if isinstance(c, dict) and c.get("type") in ("output_text", "text"):
                    blocks.append({"type": "text", "text": _str(c.get("text"))})
                elif isinstance(c, dict) and c.get("type") == "refusal":
                    blocks.append({"type": "text", "text": _str(c.get("refusal"))})
        elif t == "function_call":
            blocks.append(_tool_use(it.get("call_id"), it.get("name"), it.get("arguments"), notes))
        elif t == "reasoning":
            text = "\n\n".join(_texts(s, ("summary_text",)) for s in [_list(it.get("summary"))])
            if text:
                blocks.append({"type": "thinking", "thinking": text})
    return blocks


def answer_of(api: str, body: Any, notes: list[Note]) -> Answer:
    """The :class:`Answer` of a whole (not streamed) response body of ``api``."""
    if not isinstance(body, dict):
        return Answer(error="the response body is not a JSON object")
    ans = Answer(response_id=_str(body.get("id")) or None, model=_str(body.get("model")))
    if api == ANTHROPIC:
        ans.blocks = _anthropic_blocks(body.get("content"), notes)
        ans.stop_reason = _str(body.get("stop_reason")) or None
        usage = body.get("usage")
        ans.usage = usage if isinstance(usage, dict) else {}
    elif api == CHAT:
        choices = _list(body.get("choices"))
        choice: dict[str, Any] = choices[0] if choices and isinstance(choices[0], dict) else {}
        msg = _dict(choice.get("message"))
        text = _str(msg.get("content")) or _str(msg.get("refusal"))
        ans.blocks = [{"type": "text", "text": text}] if text else []
        for c in _list(msg.get("tool_calls")):
            fn = c.get("function") if isinstance(c, dict) else None
            if isinstance(fn, dict):
                ans.blocks.append(
                    _tool_use(c.get("id"), fn.get("name"), fn.get("arguments"), notes)
                )
        finish = _str(choice.get("finish_reason"))
        ans.stop_reason = _FINISH.get(finish, finish or None)
        ans.usage = chat_usage(body.get("usage"))
    else:
        ans.blocks = responses_output(body.get("output"), notes)
        details = body.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, dict) else None
        ans.stop_reason = "max_tokens" if reason == "max_output_tokens" else "end_turn"
        u = body.get("usage")
        ans.usage = (
            {"input_tokens": u.get("input_tokens", 0), "output_tokens": u.get("output_tokens", 0)}
            if isinstance(u, dict)
            else {}
        )
        if body.get("status") == "failed":
            ans.error = error_message(0, body)
    return ans
