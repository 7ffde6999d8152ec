"""A fake model provider for live-rung tests: a stdlib HTTP server on 127.0.0.1 in a thread,
speaking the Anthropic Messages API (``POST /v1/messages``) and the OpenAI Chat Completions
API (``POST /v1/chat/completions``, also under ``/chat/completions``) well enough for the
official SDKs, non-streaming.

Each test scripts it: :meth:`FakeProvider.push` queues steps, taken one per HTTP request:

* ``Reply(text=..., calls=[(id, name, input)], usage=...)``: a reply, rendered in the API
  the request used (``usage=None`` leaves usage out of the body);
* ``Fail(status, headers=..., body=...)``: an error status (429 with ``retry-after``, 500);
* ``Raw(body)``: a 200 whose body is the given bytes (a malformed body);
* ``Hang(seconds)``: answer nothing for that long (the client's timeout fires first);
* ``Delay(seconds, step)``: answer ``step`` after that long (a slow provider);
* ``Choose([(weight, step), ...])``: one of the steps at random, drawn from the provider's
  own ``random.Random(seed)`` (``FakeProvider(seed=...)``), so a run is the same every time.

With the queue empty, :attr:`FakeProvider.respond` (a function of the request body, giving a
step) answers when it is set: a policy such as "call the tool at the first request with
probability 0.7". ``Reply(model=...)`` names another model in the answer than the request
did (as a provider that routes a request may).

``python tests/fake_provider.py`` serves the default replies until interrupted and prints
its URL (for trying ``run --live --base-url`` by hand); ``--seed S --tool-rate P`` serves a
seeded-random policy instead (:func:`tool_at_random`). With nothing queued and no policy it
answers ``Reply("ok")`` with usage 10 in / 5 out. Every request body is kept in
:attr:`FakeProvider.requests`, its headers in :attr:`FakeProvider.headers`, and each step it
answered with in :attr:`FakeProvider.answered` (the usage it reported is the truth a run's
spend is checked against: :meth:`FakeProvider.usage_served`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_USAGE = {"input_tokens": 10, "output_tokens": 5}


@dataclass
class Reply:
    text: str = ""
    calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    usage: dict[str, int] | None = field(default_factory=lambda: dict(DEFAULT_USAGE))
    stop_reason: str | None = None
    #: the model the answer names (None: the request's)
    model: str | None = None


@dataclass
class Fail:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] = field(
        default_factory=lambda: {"type": "error", "error": {"type": "api_error", "message": "x"}}
    )


@dataclass
class Raw:
    body: bytes


@dataclass
class Hang:
    seconds: float


@dataclass
class Delay:
    seconds: float
    step: Reply | Fail | Raw


@dataclass
class Choose:
    options: list[tuple[float, Reply | Fail | Raw | Hang | Delay]]


Step = Reply | Fail | Raw | Hang | Delay | Choose


def anthropic_body(step: Reply, model: str) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if step.text:
        content.append({"type": "text", "text": step.text})
    for tid, name, inp in step.calls:
        content.append({"type": "tool_use", "id": tid, "name": name, "input": inp})
    body: dict[str, Any] = {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": step.stop_reason or ("tool_use" if step.calls else "end_turn"),
        "stop_sequence": None,
    }
    if step.usage is not None:
        body["usage"] = step.usage
    return body


def openai_body(step: Reply, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": step.text or None}
    if step.calls:
        message["tool_calls"] = [
            {"id": tid, "type": "function", "function": {"name": n, "arguments": json.dumps(i)}}
            for tid, n, i in step.calls
        ]
    finish = {"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length"}
    stop = step.stop_reason or ("tool_use" if step.calls else "end_turn")
    body: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish.get(stop, stop)}],
    }
    if step.usage is not None:
        u = step.usage
        body["usage"] = {
            "prompt_tokens": u.get("input_tokens", 0) + u.get("cache_read_input_tokens", 0),
            "completion_tokens": u.get("output_tokens", 0),
            "total_tokens": u.get("input_tokens", 0) + u.get("output_tokens", 0),
            "prompt_tokens_details": {"cached_tokens": u.get("cache_read_input_tokens", 0)},
        }
    return body


class FakeProvider:
    """See the module docstring. Use :func:`fake_provider` to run one for a test."""

    def __init__(self, seed: int = 0) -> None:
        self.script: list[Step] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        #: the step each request was answered with (a Choose resolved), in request order
        self.answered: list[Step] = []
        #: answers a request when the queue is empty (None: ``Reply("ok")``)
        self.respond: Callable[[dict[str, Any]], Step] | None = None
        self.random = random.Random(seed)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def push(self, *steps: Step) -> None:
        with self._lock:
            self.script.extend(steps)

    def _next(self, body: dict[str, Any]) -> Step:
        with self._lock:
            if self.script:
                step = self.script.pop(0)
            elif self.respond is not None:
                step = self.respond(body)
            else:
                step = Reply("ok")
            while isinstance(step, Choose):
                weights = [w for w, _ in step.options]
                step = self.random.choices([s for _, s in step.options], weights)[0]
            self.answered.append(step)
            return step

    def usage_served(self) -> list[dict[str, int] | None]:
        """The usage of every reply served with a 200, in order (None: left out)."""
        with self._lock:
            steps = [s.step if isinstance(s, Delay) else s for s in self.answered]
        return [s.usage for s in steps if isinstance(s, Reply)]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                with fake._lock:
                    fake.requests.append(body)
                    fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                    fake.paths.append(self.path)
                step = fake._next(body)
                if isinstance(step, Delay):
                    time.sleep(step.seconds)
                    step = step.step
                if isinstance(step, Hang):
                    time.sleep(step.seconds)
                    return
                if isinstance(step, Fail):
                    self._send(step.status, json.dumps(step.body).encode(), step.headers)
                    return
                if isinstance(step, Raw):
                    self._send(200, step.body, {})
                    return
                assert isinstance(step, Reply)
                model = step.model or str(body.get("model", ""))
                render = openai_body if "chat/completions" in self.path else anthropic_body
                self._send(200, json.dumps(render(step, model)).encode(), {})

            def _send(self, status: int, data: bytes, headers: dict[str, str]) -> None:
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        return Handler

    def start(self) -> FakeProvider:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@contextmanager
def fake_provider(seed: int = 0) -> Iterator[FakeProvider]:
    """A started :class:`FakeProvider` (its random draws seeded), stopped at the end."""
    fake = FakeProvider(seed).start()
    try:
        yield fake
    finally:
        fake.stop()


def tool_at_random(
    rate: float, call: tuple[str, str, dict[str, Any]], text: str = "done"
) -> Callable[[dict[str, Any]], Step]:
    """A policy for :attr:`FakeProvider.respond`: at a turn's first request (its last message
    is the user's text), call the tool ``call`` with probability ``rate``, else answer
    "I cannot tell." without it; at any later request answer ``text``. A case whose ``must``
    wants that tool's result then passes with a true rate of ``rate`` per run."""

    def respond(body: dict[str, Any]) -> Step:
        last = (body.get("messages") or [{}])[-1]
        if last.get("role") == "user" and isinstance(last.get("content"), str):  # first call
            return Choose([(rate, Reply(calls=[call])), (1 - rate, Reply("I cannot tell."))])
        return Reply(text)

    return respond


if __name__ == "__main__":  # serve until interrupted (manual runs)
    parser = argparse.ArgumentParser(description="a fake model provider on 127.0.0.1")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tool-rate", type=float, default=None, help="see tool_at_random")
    parser.add_argument("--tool", default="get_weather", help="the tool it calls")
    args = parser.parse_args()
    with fake_provider(args.seed) as server:
        if args.tool_rate is not None:
            weather = ("toolu_1", args.tool, {"city": "Oslo"})
            server.respond = tool_at_random(args.tool_rate, weather)
        print(server.url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
