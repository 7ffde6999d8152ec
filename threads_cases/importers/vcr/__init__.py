"""VCR cassettes (vcrpy / pytest-recording YAML, plain or gzipped) of LLM API calls as
threads (spec/importers.md section 6).

The interactions that are model calls of the Anthropic Messages API, OpenAI Chat Completions
or the OpenAI Responses API (:mod:`.apis`, by method and path) are read in order, streamed
bodies reassembled (:mod:`.sse`), and built into turns (:mod:`.conversation`). Other
interactions (token counts, file uploads, GETs) are skipped and counted by ``--verbose``.

A cassette cut short (the file stops inside an interaction: ``head -c N``, a gzip stream
that stops) is read to its last whole interaction with a ``cut_record`` warning
(:mod:`.cassette`, :mod:`.cut`); the one it stops in keeps its request when that is whole,
with no reply, and ends its turn ``interrupted``. Damaged input is read leniently: an
interaction whose request or response body is not JSON,
or that has no response, is skipped with an ``import_skipped`` warning (reason
``invalid_line``) naming its line; ``strict`` refuses it (``import_invalid``). A file that
is not a cassette, or a cassette holding no model call, is refused (``import_invalid``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from ..common import (
    CUT_STOP_REASON,
    Extra,
    Ref,
    Stats,
    Turn,
    cut_short,
    import_error,
    imported_agent,
    stats_for,
)
from ..cutjson import CUT_HINT
from ..lenient import Note, loads_exact
from .apis import (
    APIS,
    RESPONSES,
    Answer,
    Request,
    answer_of,
    api_of,
    error_message,
    request_of,
    retrieved_id,
    tool_definition,
)
from .cassette import VCR_HINT, Interaction, read_cassette
from .conversation import Conversation, calls_text, proven_calls
from .sse import is_stream, stream_answer

__all__ = ["APIS", "VcrSource"]

#: what ends a whole stream of each API (its absence: the stream was cut short)
STREAM_END = {
    "anthropic-messages": "message_stop",
    "openai-chat": "finish_reason",
    "openai-responses": "response.completed or response.incomplete",
}


def _json(text: Any, *, exact: bool = True) -> Any:
    """A body's JSON value, its integers exact (``exact``: section 4's ``big_integer`` rule
    needs them) or as orjson reads them (a later request's history, whose replies the
    responses already gave: read with orjson alone, so the cost stays linear in the file)."""
    if isinstance(text, dict):
        return text
    try:
        if not (isinstance(text, str) and text):
            return None
        return loads_exact(text) if exact else orjson.loads(text)
    except orjson.JSONDecodeError:
        return None


def _pending_id(body: Any) -> str | None:
    """The id of a Responses body still ``queued`` or ``in_progress`` (background mode), or
    None."""
    if isinstance(body, dict) and body.get("status") in ("queued", "in_progress"):
        rid = body.get("id")
        return rid if isinstance(rid, str) and rid else None
    return None


class VcrSource:
    """One cassette, read and ready to map (:meth:`items`). Attributes: ``thread_id``,
    ``agent``, ``metadata``, ``start_ref``, ``api`` (the API of its first model call)."""

    format = "vcr"

    def __init__(
        self, path: str | os.PathLike[str], *, strict: bool = False, stats: Stats | None = None
    ) -> None:
        self.path = Path(path)
        self.file = str(path)
        self.strict = strict
        self.stats = stats_for(stats, strict=strict, file=str(path))
        self.calls: list[tuple[Interaction, Request, Any]] = []
        #: the last retrieve (``GET .../responses/<id>``) of each Responses id
        self.polls: dict[str, Interaction] = {}
        cassette = read_cassette(self.path)
        #: where the cassette is cut short (None: it is whole)
        self.cut = cassette.cut
        if self.cut is not None:  # under --strict, the refusal
            self.stats.warn(
                self.cut.line, "import_repaired", "cut_record", self.cut.message, hint=CUT_HINT
            )
        for it in cassette.interactions:
            self._take(it)
        if not self.calls:
            raise import_error(
                "no interaction is a model call of the Anthropic Messages, OpenAI Chat "
                "Completions or OpenAI Responses API",
                file=self.file,
                line=None,
                kind=None,
                hint=VCR_HINT,
            )
        first = self.calls[0][1]
        self.api = first.api
        self.system = first.system
        self.answers = [self._answer(k, it, req) for k, (it, req, _) in enumerate(self.calls)]
        tools: dict[str, None] = {}
        #: each tool's definition, from the first request that defines it
        self.definitions: dict[str, dict[str, Any]] = {}
        for it, req, _ in self.calls:
            tools.update(dict.fromkeys(req.tools))
            for n, d in req.definitions.items():
                if n not in self.definitions:
                    notes: list[Note] = []
                    self.definitions[n] = tool_definition(d, notes)
                    self._notes(it, notes, "request")
        called = [b for it in first.items for b in it.blocks]
        called += [b for ans in self.answers for b in ans.blocks]
        tools.update(dict.fromkeys(b["name"] for b in called if b.get("type") == "tool_use"))
        self.tools = list(tools)
        self.model = first.model
        self.first_ts = next((it.ts for it, _, _ in self.calls if it.ts is not None), None)

    def _skip(self, it: Interaction, why: str) -> None:
        message = f"interaction {it.index + 1}: {why}"
        if self.strict:
            raise import_error(message, file=self.file, line=it.line or None, kind=None)
        self.stats.warn(it.line, "import_skipped", "invalid_line", message)

    def _take(self, it: Interaction) -> None:
        if it.problems:
            self._skip(it, "; ".join(it.problems))
            return
        api = api_of(it.method, it.uri)
        if api is None:
            polled = retrieved_id(it.method, it.uri)
            if polled is not None:
                self.polls[polled] = it  # the answer of a background response, later
            self.stats.skip("interaction that is not a model call")
            return
        body = _json(it.body, exact=not self.calls)
        if not isinstance(body, dict):
            self._skip(it, "the request body is not a JSON object")
            return
        notes: list[Note] = []
        req = request_of(api, body, notes)
        if not self.calls:  # later requests repeat the history the replies already gave
            self._notes(it, notes, "request")
        self.calls.append((it, req, body))

    def _notes(self, it: Interaction, notes: list[Note], where: str) -> None:
        for n in notes:
            self.stats.warn(
                it.line, n.code, n.reason, f"interaction {it.index + 1} {where}: {n.message}"
            )

    # ------------------------------------------------------------------ header
    @property
    def thread_id(self) -> str:
        name = self.path.name
        for ext in (".gz", ".yaml", ".yml"):
            name = name.removesuffix(ext)
        return name or "cassette"

    @property
    def agent(self) -> dict[str, Any]:
        model = self.model
        for it, _, _ in self.calls:
            ans = it.parsed if it.parsed is not None else _json(it.text)
            if isinstance(ans, dict) and isinstance(ans.get("model"), str) and not model:
                model = ans["model"]
        agent = imported_agent("vcr", model, self.tools, self.definitions)
        agent["system"] = self.system
        return agent

    @property
    def metadata(self) -> dict[str, Any]:
        return {"source": "vcr", "session_id": self.thread_id, "api": self.api}

    @property
    def start_ref(self) -> Ref:
        return Ref("session", self.first_ts, 1, "session")

    def _answer(self, k: int, it: Interaction, req: Request) -> Answer:
        """The answer of model call ``k`` (its interaction ``it``, its request ``req``)."""
        if it.cut:  # the cassette stops inside its response: nothing of the reply is read
            return Answer(cut=True)
        if req.api == RESPONSES and it.status < 400:
            pending = _pending_id(it.parsed if it.parsed is not None else _json(it.text))
            if pending is not None:
                return self._polled(k, it, req, pending)
        notes: list[Note] = []
        if it.status >= 400:
            body = it.parsed if it.parsed is not None else _json(it.text)
            return Answer(error=error_message(it.status, body))
        if it.parsed is not None:
            ans = answer_of(req.api, it.parsed, notes)
        elif is_stream(it.text, it.headers.get("content-type", "")):
            ans = stream_answer(req.api, it.text, notes)
            if ans.cut:
                self._cut_stream(k, it, req, ans)
        else:
            body = _json(it.text)
            if body is None:
                self._skip(it, "the response body is neither JSON nor an event stream")
                ans = Answer(cut=True)  # nothing of the reply can be read: cut short
            else:
                ans = answer_of(req.api, body, notes)
        self._notes(it, notes, "response")
        return ans

    def _cut_stream(self, k: int, it: Interaction, req: Request, ans: Answer) -> None:
        """A stream of call ``k`` cut short: its calls still streaming rebuilt from the later
        request that sends them back with their results (:func:`proven_calls`), else its
        reply what was received; a ``cut_record`` warning either way (spec 6.3)."""
        head = (
            f"interaction {it.index + 1}: the streamed response stops before its end "
            f"(no {STREAM_END[req.api]})"
        )
        later = [r for _, r, _ in self.calls[k + 1 :]]
        got = proven_calls(ans.dropped, later) if ans.error is None else None
        if got is not None:
            j, calls = got
            ans.blocks += calls
            ans.cut, ans.stop_reason, ans.dropped = False, "tool_use", []
            by = self.calls[k + 1 + j][0].index + 1
            back = "them back with their results" if len(calls) > 1 else "it back with its result"
            message = (
                f"{head} while its {calls_text(calls)} still streamed: rebuilt from interaction "
                f"{by}'s request, which sends {back}; its stop reason tool_use"
            )
        else:
            dropped = f" ({calls_text(ans.dropped)} still streaming dropped)" if ans.dropped else ""
            message = (
                f"{head}: its reply is what was received{dropped}, its stop reason "
                f"{CUT_STOP_REASON}"
            )
        self.stats.warn(it.line, "import_repaired", "cut_record", message)

    def _polled(self, k: int, it: Interaction, req: Request, response_id: str) -> Answer:
        """A background response (``queued`` / ``in_progress``): its answer is the last
        retrieve of its id in the cassette; none, or one still pending, is a reply cut short
        (spec/importers.md 6.3)."""
        poll = self.polls.get(response_id)
        answered = poll is not None and (
            poll.status >= 400
            or _pending_id(poll.parsed if poll.parsed is not None else _json(poll.text)) is None
        )
        if poll is None or not answered:
            self.stats.warn(
                it.line,
                "import_repaired",
                "not_completed",
                f"interaction {it.index + 1}: background response {response_id} is not completed "
                "in the cassette (no retrieve of it answers it); its reply is cut short",
            )
            return Answer(cut=True)
        return self._answer(k, poll, req)

    # ------------------------------------------------------------------ pass 2
    def items(self) -> Iterator[Turn | Extra]:
        """Turns and extension events, in the cassette's order (:mod:`.conversation`)."""
        conv = Conversation(self.stats)
        prev_body: Any = None
        prev_error = False
        for k, (it, req, body) in enumerate(self.calls):
            ref = Ref(f"i{it.index}", it.ts, it.line or None, "interaction")
            yield from conv.request(req, ref, retry=prev_error and body == prev_body)
            ans = self.answers[k]
            if ans.error is not None:
                nxt = self.calls[k + 1][2] if k + 1 < len(self.calls) else None
                retried = nxt is not None and nxt == body
                yield from conv.error(it.status, ans.error, ref, retried=retried)
            else:
                yield from conv.answer(req, ans, ref)
            prev_body, prev_error = body, ans.error is not None
        lost = self.cut is not None and self.cut.lost
        for turn in conv.finish(cut=lost):
            if lost and not (turn.replies and not turn.replies[-1].tool_uses()):
                # the cassette stops after a reply whose calls no request answers: say why
                cut_short(turn, "the cassette stops before a request answers its calls", self.stats)
            yield turn
