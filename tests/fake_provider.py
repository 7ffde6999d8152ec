"""A fake model provider for live-rung tests: a stdlib HTTP server on 127.0.0.1 in a thread,
speaking the Anthropic Messages API (``POST /v1/messages``) and the OpenAI Chat Completions
API (``POST /v1/chat/completions``, also under ``/chat/completions``) well enough for the
official SDKs, non-streaming.

Each test scripts it: :meth:`FakeProvider.push` queues steps, taken one per HTTP request:

* ``Reply(text=..., calls=[(id, name, input)], usage=...)``: a reply, rendered in the API
  the request used (``usage=None`` leaves usage out of the body);
* ``Fail(status, headers=..., body=...)``: an error status (429 with ``retry-after``, 500);
* ``Raw(body)``: a 200 whose body is the given bytes (a malformed body);
* ``Hang(seconds)``: answer nothing for that long (the client's timeout fires first).

``python tests/fake_provider.py`` serves the default replies until interrupted and prints
its URL (for trying ``run --live --base-url`` by hand). With nothing queued it answers
``Reply("ok")`` with usage 10 in / 5 out. Every request body is kept in
:attr:`FakeProvider.requests` and its headers in :attr:`FakeProvider.headers`.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
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


Step = Reply | Fail | Raw | Hang


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

    def __init__(self) -> None:
        self.script: list[Step] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
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

    def _next(self) -> Step:
        with self._lock:
            return self.script.pop(0) if self.script else Reply("ok")

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
                step = fake._next()
                if isinstance(step, Hang):
                    time.sleep(step.seconds)
                    return
                if isinstance(step, Fail):
                    self._send(step.status, json.dumps(step.body).encode(), step.headers)
                    return
                if isinstance(step, Raw):
                    self._send(200, step.body, {})
                    return
                model = str(body.get("model", ""))
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
def fake_provider() -> Iterator[FakeProvider]:
    """A started :class:`FakeProvider`, stopped at the end."""
    fake = FakeProvider().start()
    try:
        yield fake
    finally:
        fake.stop()


if __name__ == "__main__":  # serve the default replies until interrupted (manual runs)
    with fake_provider() as server:
        print(server.url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
