"""OpenAI Codex CLI transcripts, in the two shapes it writes (detected from the first lines).

**(a) ``codex exec --json`` event streams.** Lines ``{"type": ...}``: ``thread.started
{thread_id}``, ``turn.started``, ``item.started`` / ``item.updated`` / ``item.completed
{item: {id, type, ...}}``, ``turn.completed {usage}``, ``turn.failed {error: {message}}``,
``error {message}``. Items (the final state, from ``item.completed``; an older
``item.details.item_type`` layout is read too):

=====================  ===================================================================
``agent_message``      a ``text`` block of the model's reply
``reasoning``          a ``thinking`` block
``command_execution``  ``tool_use`` ``shell {command}``; result ``aggregated_output``,
                       ``is_error`` when ``exit_code`` is not 0 or ``status`` is ``failed``
``file_change``        ``tool_use`` ``apply_patch {changes}``; result its ``status``
``mcp_tool_call``      ``tool_use`` ``mcp__<server>__<tool> {arguments}``; result its
                       ``result`` (or ``error``)
``web_search``         a ``web_search`` block (server side: no tool call, no result)
``todo_list``          ``x_codex.todo_list {items}``
``error``              ``x_codex.error {message}``
=====================  ===================================================================

A reply is a run of items; a text or reasoning item after a tool call starts the next reply.
``turn.completed``'s usage goes on the turn's last reply. The stream carries no user prompt:
each turn's ``user_message`` is ``prompt`` when given, else a visible placeholder
(:data:`~threads_cases.importers.common.PLACEHOLDER_PROMPT`), and a note says so. An item
started but never completed is a tool call without a result (the turn then fails
``interrupted``).

**(b) rollout files** (``~/.codex/sessions/.../rollout-*.jsonl``). Lines ``{timestamp, type,
payload}``: ``session_meta`` (thread_id from ``id``, ``cwd``), ``turn_context`` (the model),
``response_item`` and ``event_msg``. Response items: ``message`` (role ``user``: a real user
message starts a turn, but environment context / instructions are
``x_codex.context {role, content}``; role ``assistant``: text blocks; roles ``developer`` and
``system``: ``x_codex.context``), ``reasoning`` (a ``thinking`` block of its summary),
``function_call`` / ``custom_tool_call`` / ``local_shell_call`` (``tool_use``; arguments
parsed as JSON when they hold an object, else ``{"arguments": text}`` / ``{"input": text}``),
``function_call_output`` / ``custom_tool_call_output`` (the ``tool_result`` of the call with
the same ``call_id``; ``is_error`` when it reports a non-zero exit code or
``success: false``), ``web_search_call`` (a ``web_search_call`` block). Event messages:
``token_count`` gives the usage of the reply before it, ``turn_aborted`` fails the turn
(``interrupted``), ``error`` -> ``x_codex.error``; the others repeat response items and are
dropped.

Tools are kind ``external``; ``web_search`` and read-only names are effect ``read``, the rest
``write``. Unknown line types, item types and fields are skipped (counted by ``--verbose``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from ..core.errors import CaseError
from ..core.strictjson import parse
from .common import (
    PLACEHOLDER_PROMPT,
    WRONG_FORMAT_HINT,
    Extra,
    Ref,
    Reply,
    Result,
    Stats,
    Turn,
    import_error,
    imported_agent,
    parse_ts_ms,
)

EXEC_TYPES = (
    "thread.started",
    "turn.started",
    "turn.completed",
    "turn.failed",
    "item.started",
    "item.updated",
    "item.completed",
    "error",
)
ROLLOUT_TYPES = ("session_meta", "turn_context", "response_item", "event_msg", "compacted")
_CONTEXT_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md",
    "<user_shell_command>",
    "<INSTRUCTIONS>",
)
_TOOL_ITEMS = ("command_execution", "file_change", "mcp_tool_call")


def _item(obj: dict[str, Any]) -> dict[str, Any]:
    item: dict[str, Any] = obj["item"]
    det = item.get("details")
    if isinstance(det, dict) and "type" not in item:
        item = {
            **det,
            **{k: v for k, v in item.items() if k != "details"},
            "type": det.get("item_type") or det.get("type"),
        }
    return item


def _json_object(text: Any) -> dict[str, Any] | None:
    if not isinstance(text, str):
        return None
    try:
        v = parse(text.encode("utf-8"))
    except CaseError:
        return None
    return v if isinstance(v, dict) else None


def _blocks_or_text(value: Any) -> Any:
    """Tool output as content: a string, a list of valid blocks, or the JSON text of it."""
    if isinstance(value, str):
        return value
    if (
        isinstance(value, list)
        and value
        and all(
            isinstance(b, dict)
            and isinstance(b.get("type"), str)
            and b["type"]
            and (b["type"] != "text" or isinstance(b.get("text"), str))
            for b in value
        )
    ):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


class CodexSource:
    """One Codex transcript (exec stream or rollout), scanned and ready to map.

    Attributes: ``shape`` (``"exec"`` or ``"rollout"``), ``thread_id``, ``agent``,
    ``metadata``, ``start_ref``. Raises ``CaseError("import_invalid")`` for a malformed line
    (unless ``skip_invalid``) or a file that is neither shape.
    """

    format = "codex"

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        prompt: str | None = None,
        skip_invalid: bool = False,
        stats: Stats | None = None,
    ) -> None:
        self.path = Path(path)
        self.file = str(path)
        self.prompt = prompt
        self.stats = stats or Stats()
        self.skip_invalid = skip_invalid
        self._scan()

    def _lines(self) -> Iterator[tuple[int, bytes]]:
        try:
            fh = open(self.path, "rb")  # noqa: SIM115 - closed below
        except OSError as exc:
            raise CaseError(
                "io_error", f"cannot read the transcript: {exc.strerror}", file=self.file
            ) from None
        with fh:
            for lineno, raw in enumerate(fh, 1):
                yield lineno, raw.rstrip(b"\r\n")

    def _invalid(self, lineno: int, kind: str, message: str) -> None:
        if not self.skip_invalid:
            raise import_error(message, file=self.file, line=lineno, kind=kind)
        self.stats.invalid += 1
        self.stats.skip("invalid line (--skip-invalid)")

    # ------------------------------------------------------------------ pass 1
    def _problem(self, obj: Any) -> tuple[str, str | None]:
        if not isinstance(obj, dict):
            return "unparseable", "a transcript line must be a JSON object"
        t = obj.get("type")
        kind = str(t)
        if "type" in obj and not isinstance(t, str):
            return "unparseable", "type must be a string"
        if self.shape == "exec":
            if (
                t == "thread.started"
                and "thread_id" in obj
                and (not isinstance(obj["thread_id"], str) or not obj["thread_id"])
            ):
                return kind, "thread_id must be a non-empty string"
            if t in ("item.started", "item.updated", "item.completed"):
                item = obj.get("item")
                if (
                    not isinstance(item, dict)
                    or not isinstance(item.get("id"), str)
                    or not item["id"]
                ):
                    return kind, "item must be an object with a non-empty string id"
                it = _item(obj).get("type")
                if not isinstance(it, str):
                    return kind, "item.type must be a string"
        else:
            if t in ("response_item", "event_msg", "session_meta", "turn_context"):
                p = obj.get("payload")
                if not isinstance(p, dict):
                    return kind, "payload must be an object"
                if (
                    t == "session_meta"
                    and "id" in p
                    and (not isinstance(p["id"], str) or not p["id"])
                ):
                    return kind, "payload.id of session_meta must be a non-empty string"
                if t == "response_item":
                    pt = p.get("type")
                    if pt in (
                        "function_call",
                        "custom_tool_call",
                        "function_call_output",
                        "custom_tool_call_output",
                    ) and (not isinstance(p.get("call_id"), str) or not p["call_id"]):
                        return kind, f"payload.call_id of a {pt} must be a non-empty string"
                    if pt in ("function_call", "custom_tool_call") and (
                        not isinstance(p.get("name"), str) or not p["name"]
                    ):
                        return kind, f"payload.name of a {pt} must be a non-empty string"
                    if pt == "message" and not isinstance(p.get("content"), (list, str)):
                        return kind, "payload.content of a message must be a list"
        return kind, None

    def _scan(self) -> None:
        self.shape = ""
        self.thread_id = ""
        self.model = ""
        self.cwd: str | None = None
        self.first_ts: int | None = None
        tools: dict[str, None] = {}
        self.keep = bytearray()
        parsed: list[tuple[int, Any]] = []
        for lineno, body in self._lines():
            self.keep.append(0)
            if not body.strip():
                self.stats.skip("blank line")
                continue
            try:
                obj = parse(body, code="import_invalid", file=self.file, line=lineno)
            except CaseError as err:
                self._invalid(lineno, "unparseable", err.message)
                continue
            if not self.shape:
                t = obj.get("type") if isinstance(obj, dict) else None
                if t in ROLLOUT_TYPES and "payload" in obj:
                    self.shape = "rollout"
                elif t in EXEC_TYPES:
                    self.shape = "exec"
                else:
                    parsed.append((lineno, obj))
                    continue
                for ln, o in parsed:  # lines before the shape was known
                    self._take(ln, o, tools)
                parsed = []
            self._take(lineno, obj, tools)
        if not self.shape:
            raise import_error(
                "neither a `codex exec --json` stream nor a rollout file (no line of a known type)",
                file=self.file,
                line=None,
                kind=None,
                hint=WRONG_FORMAT_HINT,
            )
        for ln, o in parsed:
            self._take(ln, o, tools)
        self.tools = list(tools)
        if not self.thread_id:
            self.thread_id = self.path.stem or "codex"

    def _take(self, lineno: int, obj: Any, tools: dict[str, None]) -> None:
        kind, problem = self._problem(obj)
        if problem:
            self._invalid(lineno, kind, problem)
            return
        self.keep[lineno - 1] = 1
        t = obj.get("type")
        if self.first_ts is None:
            self.first_ts = parse_ts_ms(obj.get("timestamp"))
        if self.shape == "exec":
            if t == "thread.started" and isinstance(obj.get("thread_id"), str):
                self.thread_id = self.thread_id or obj["thread_id"]
            elif t in ("item.started", "item.completed"):
                name = _exec_tool_name(_item(obj))
                if name:
                    tools.setdefault(name, None)
            return
        p = obj.get("payload")
        if not isinstance(p, dict):
            return
        if t == "session_meta":
            meta: dict[str, Any] = p["meta"] if isinstance(p.get("meta"), dict) else p
            if isinstance(meta.get("id"), str) and not self.thread_id:
                self.thread_id = meta["id"]
            if isinstance(meta.get("cwd"), str) and self.cwd is None:
                self.cwd = meta["cwd"]
        elif t == "turn_context":
            if isinstance(p.get("model"), str) and not self.model:
                self.model = p["model"]
            if isinstance(p.get("cwd"), str) and self.cwd is None:
                self.cwd = p["cwd"]
        elif t == "response_item" and p.get("type") in ("function_call", "custom_tool_call"):
            tools.setdefault(p["name"], None)
        elif t == "response_item" and p.get("type") == "local_shell_call":
            tools.setdefault("local_shell", None)

    # ------------------------------------------------------------------ header
    @property
    def agent(self) -> dict[str, Any]:
        return imported_agent("codex", self.model, self.tools)

    @property
    def metadata(self) -> dict[str, Any]:
        md: dict[str, Any] = {"source": "codex", "session_id": self.thread_id, "shape": self.shape}
        if self.cwd is not None:
            md["cwd"] = self.cwd
        return md

    @property
    def start_ref(self) -> Ref:
        return Ref("session", self.first_ts, 1, "session")

    # ------------------------------------------------------------------ pass 2
    def _kept(self) -> Iterator[tuple[int, dict[str, Any]]]:
        for lineno, body in self._lines():
            if lineno <= len(self.keep) and self.keep[lineno - 1]:
                yield lineno, orjson.loads(body)

    def items(self) -> Iterator[Turn | Extra]:
        """Map the lines to turns and extension events (module docstring)."""
        if self.shape == "exec":
            return self._exec_items()
        return self._rollout_items()

    # exec -----------------------------------------------------------------
    def _exec_items(self) -> Iterator[Turn | Extra]:
        st = self.stats
        turn: Turn | None = None
        reply: Reply | None = None
        started: dict[str, tuple[dict[str, Any], Ref]] = {}
        last_ts: int | None = None
        told = False

        def add_block(block: dict[str, Any], ref: Ref, tool: bool) -> Reply:
            nonlocal reply
            assert turn is not None
            if reply is None or (not tool and reply.tool_uses()):
                reply = Reply([], ref)
                turn.items.append(reply)
            reply.blocks.append(block)
            return reply

        def close(t: Turn) -> Turn:
            for item, ref in started.values():  # started, never completed
                name = _exec_tool_name(item)
                if name:
                    add_block(
                        {
                            "type": "tool_use",
                            "id": item["id"],
                            "name": name,
                            "input": _exec_input(item),
                        },
                        ref,
                        True,
                    )
                    st.skip("tool call started but never completed")
            started.clear()
            return t

        for lineno, obj in self._kept():
            t = obj.get("type")
            ts = parse_ts_ms(obj.get("timestamp"))
            last_ts = ts if ts is not None else last_ts
            ref = Ref(f"L{lineno}", last_ts, lineno, str(t))
            if t == "turn.started":
                if turn is not None:
                    yield close(turn)
                if self.prompt is None and not told:
                    st.notes.append(
                        "the codex exec stream holds no user prompt: each turn's "
                        f"user message is the placeholder {PLACEHOLDER_PROMPT!r} "
                        "(pass --prompt TEXT to record it)"
                    )
                    told = True
                turn = Turn(self.prompt if self.prompt is not None else PLACEHOLDER_PROMPT, ref)
                reply = None
                continue
            if t == "thread.started":
                continue
            if t in ("turn.completed", "turn.failed"):
                if turn is None:
                    st.skip(f"{t} outside a turn")
                    continue
                if t == "turn.completed":
                    if turn.replies:
                        turn.replies[-1].usage = obj.get("usage") or {}
                else:
                    err = obj.get("error")
                    msg = err.get("message") if isinstance(err, dict) else None
                    turn.failed = ("turn_failed", msg if isinstance(msg, str) else "", ref)
                yield close(turn)
                turn, reply = None, None
                continue
            if t == "error":
                msg = obj.get("message")
                extra = Extra(
                    "x_codex.error", {"message": msg if isinstance(msg, str) else ""}, ref, "error"
                )
                if turn is None:
                    yield extra
                else:
                    turn.items.append(extra)
                continue
            if t in ("item.started", "item.updated"):
                item = _item(obj)
                if item.get("type") in _TOOL_ITEMS:
                    started[item["id"]] = (item, ref)
                st.skip(f"{t} event (the item.completed event is used)")
                continue
            if t != "item.completed":
                st.skip(f"unknown event type {t!r}")
                continue
            item = _item(obj)
            started.pop(item["id"], None)
            it = item.get("type")
            if turn is None:
                st.skip("item outside a turn")
                continue
            if it == "agent_message":
                add_block({"type": "text", "text": _str(item.get("text"))}, ref, False)
            elif it == "reasoning":
                add_block({"type": "thinking", "thinking": _str(item.get("text"))}, ref, False)
            elif it == "web_search":
                add_block({"type": "web_search", "query": _str(item.get("query"))}, ref, False)
            elif it in _TOOL_ITEMS:
                name = _exec_tool_name(item)
                assert name is not None
                r = add_block(
                    {
                        "type": "tool_use",
                        "id": item["id"],
                        "name": name,
                        "input": _exec_input(item),
                    },
                    ref,
                    True,
                )
                content, is_error = _exec_result(item)
                r.results[item["id"]] = Result(content, is_error, ref)
            elif it == "todo_list":
                items = item.get("items")
                turn.items.append(
                    Extra(
                        "x_codex.todo_list",
                        {"items": items if isinstance(items, list) else []},
                        ref,
                        "todo",
                    )
                )
            elif it == "error":
                turn.items.append(
                    Extra("x_codex.error", {"message": _str(item.get("message"))}, ref, "error")
                )
            else:
                st.skip(f"unknown item type {it!r}")
        if turn is not None:
            yield close(turn)

    # rollout --------------------------------------------------------------
    def _rollout_items(self) -> Iterator[Turn | Extra]:
        st = self.stats
        turn: Turn | None = None
        reply: Reply | None = None
        owners: dict[str, Reply] = {}

        def model_block(block: dict[str, Any], ref: Ref) -> Reply:
            nonlocal turn, reply
            if turn is None:
                st.notes.append(
                    f"line {ref.line}: model output with no user message before "
                    "it starts a turn without user input"
                )
                turn = Turn(None, ref)
            if reply is None:
                reply = Reply([], ref)
                turn.items.append(reply)
            reply.blocks.append(block)
            return reply

        def place(extra: Extra) -> Iterator[Turn | Extra]:
            if turn is None:
                yield extra
            else:
                turn.items.append(extra)

        for lineno, obj in self._kept():
            t = obj.get("type")
            p = obj.get("payload")
            ref = Ref(f"L{lineno}", parse_ts_ms(obj.get("timestamp")), lineno, str(t))
            if t in ("session_meta", "turn_context"):
                st.skip(f"{t} line (its fields go to thread_started)")
                continue
            if not isinstance(p, dict):
                st.skip(f"unknown line type {t!r}")
                continue
            pt = p.get("type")
            if t == "event_msg":
                if pt == "token_count":
                    info = p.get("info")
                    last = info.get("last_token_usage") if isinstance(info, dict) else None
                    if turn is not None and turn.replies and isinstance(last, dict):
                        turn.replies[-1].usage = last
                    reply = None
                elif pt == "turn_aborted":
                    if turn is not None:
                        reason = p.get("reason")
                        turn.failed = (
                            "interrupted",
                            f"aborted: {reason}" if isinstance(reason, str) else "aborted",
                            ref,
                        )
                        yield turn
                        turn, reply, owners = None, None, {}
                    else:
                        st.skip("turn_aborted outside a turn")
                elif pt in ("error", "stream_error"):
                    yield from place(
                        Extra("x_codex.error", {"message": _str(p.get("message"))}, ref, "error")
                    )
                else:
                    st.skip(f"event_msg {pt!r}")
                continue
            if t != "response_item":
                st.skip(f"{t} line" if isinstance(t, str) else "line without a type")
                continue
            if pt == "message":
                role = p.get("role")
                content = _message_content(p.get("content"))
                if role == "assistant":
                    for b in (
                        content
                        if isinstance(content, list)
                        else [{"type": "text", "text": content}]
                    ):
                        model_block(b, ref)
                    continue
                text = (
                    content
                    if isinstance(content, str)
                    else "".join(b.get("text", "") for b in content if b.get("type") == "text")
                )
                if role != "user" or text.lstrip().startswith(_CONTEXT_PREFIXES):
                    yield from place(
                        Extra(
                            "x_codex.context",
                            {"role": _str(role), "content": content},
                            ref,
                            "context",
                        )
                    )
                    continue
                if turn is not None:
                    yield turn
                turn, reply, owners = Turn(content, ref), None, {}
            elif pt == "reasoning":
                summary = p.get("summary")
                text = (
                    "\n\n".join(
                        s.get("text", "")
                        for s in summary
                        if isinstance(s, dict) and isinstance(s.get("text"), str)
                    )
                    if isinstance(summary, list)
                    else ""
                )
                model_block({"type": "thinking", "thinking": text}, ref)
            elif pt in ("function_call", "custom_tool_call", "local_shell_call"):
                call_id = p.get("call_id") or p.get("id")
                if not isinstance(call_id, str) or not call_id:
                    st.skip(f"{pt} without a call_id")
                    continue
                if pt == "function_call":
                    args = p.get("arguments")
                    inp = _json_object(args)
                    if inp is None:
                        inp = {"arguments": args if isinstance(args, str) else _str(args)}
                    name = p["name"]
                elif pt == "custom_tool_call":
                    inp, name = {"input": _str(p.get("input"))}, p["name"]
                else:
                    action = p.get("action")
                    inp, name = (action if isinstance(action, dict) else {}), "local_shell"
                if reply is not None and any(b.get("id") == call_id for b in reply.tool_uses()):
                    st.skip(f"{pt} repeating a call_id")
                    continue
                r = model_block(
                    {"type": "tool_use", "id": call_id, "name": name, "input": inp}, ref
                )
                owners[call_id] = r
            elif pt in ("function_call_output", "custom_tool_call_output"):
                owner = owners.get(p["call_id"])
                reply = None
                if owner is None:
                    st.skip("tool output without its call in the turn")
                    continue
                content, is_error = _rollout_output(p.get("output"))
                owner.results[p["call_id"]] = Result(content, is_error, ref)
            elif pt == "web_search_call":
                block = {"type": "web_search_call"}
                if isinstance(p.get("action"), dict):
                    block["action"] = p["action"]
                model_block(block, ref)
            else:
                st.skip(f"response_item {pt!r}")
        if turn is not None:
            yield turn


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ("" if v is None else json.dumps(v, ensure_ascii=False))


def _exec_tool_name(item: dict[str, Any]) -> str | None:
    it = item.get("type")
    if it == "command_execution":
        return "shell"
    if it == "file_change":
        return "apply_patch"
    if it == "mcp_tool_call":
        return f"mcp__{_str(item.get('server')) or 'server'}__{_str(item.get('tool')) or 'tool'}"
    return None


def _exec_input(item: dict[str, Any]) -> dict[str, Any]:
    it = item.get("type")
    if it == "command_execution":
        return {"command": _str(item.get("command"))}
    if it == "file_change":
        ch = item.get("changes")
        return {"changes": ch if isinstance(ch, list) else []}
    args = item.get("arguments")
    if isinstance(args, dict):
        return args
    parsed = _json_object(args)
    return parsed if parsed is not None else {}


def _exec_result(item: dict[str, Any]) -> tuple[Any, bool]:
    it = item.get("type")
    status = item.get("status")
    if it == "command_execution":
        code = item.get("exit_code")
        failed = status == "failed" or (isinstance(code, int) and code != 0)
        return _str(item.get("aggregated_output")), failed
    if it == "file_change":
        return _str(status) or "completed", status == "failed"
    err = item.get("error")
    if err:
        msg = err.get("message") if isinstance(err, dict) else err
        return _str(msg), True
    res = item.get("result")
    if isinstance(res, dict) and "content" in res:
        return _blocks_or_text(res["content"]), status == "failed"
    return _blocks_or_text(res), status == "failed"


def _message_content(content: Any) -> Any:
    """Responses-API content items as Anthropic content: one text -> a string."""
    if isinstance(content, str):
        return content
    blocks: list[dict[str, Any]] = []
    for c in content if isinstance(content, list) else []:
        if not isinstance(c, dict):
            continue
        ct = c.get("type")
        if ct in ("input_text", "output_text", "text"):
            blocks.append({"type": "text", "text": _str(c.get("text"))})
        elif ct == "input_image":
            blocks.append(
                {"type": "image", "source": {"type": "url", "url": _str(c.get("image_url"))}}
            )
        elif isinstance(ct, str) and ct:
            blocks.append(dict(c))
    if len(blocks) == 1 and blocks[0]["type"] == "text":
        return blocks[0]["text"]
    return blocks


def _rollout_output(output: Any) -> tuple[Any, bool]:
    if isinstance(output, dict):
        ok = output.get("success")
        return _blocks_or_text(output.get("content", output)), ok is False
    text = _str(output)
    obj = _json_object(text)
    is_error = False
    if obj is not None:
        md = obj.get("metadata")
        code = md.get("exit_code") if isinstance(md, dict) else None
        is_error = (isinstance(code, int) and code != 0) or obj.get("success") is False
    return text, is_error
