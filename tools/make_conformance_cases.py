"""Author the official conformance cases in spec/conformance/cases/ with the real writer.

Each case is a small thread driven through the Python runtime with a scripted model, then
saved with ``Thread.save_case`` exactly as a user would. Run ``python
tools/make_conformance_cases.py`` after a change to the case format; the directories are the
source of truth and are committed. The clock and thread ids are fixed, so the output is
byte-stable.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from threads_cases.case.directory import CaseExpectation  # noqa: E402
from threads_cases.reference.agent import BUILTIN_TOOLS, AgentSpec, ToolResult, ToolSpec  # noqa: E402
from threads_cases.reference.model import ScriptedModel, text_reply, tool_reply  # noqa: E402
from threads_cases.reference.runtime import Clock  # noqa: E402
from threads_cases.reference.sandbox import FakeSandbox  # noqa: E402
from threads_cases.reference.thread import Thread  # noqa: E402

OUT = ROOT / "spec" / "conformance" / "cases"
START_MS = 1_795_982_400_000  # 2026-11-29T19:20:00.000Z


def weather(inp: dict[str, Any]) -> str:
    return f"{inp.get('city', '?')}: 4°C, light rain"


def search(inp: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": f"3 results for {inp.get('q', '')!r}"}]


def flaky(inp: dict[str, Any]) -> ToolResult:
    return ToolResult("upstream returned 503", is_error=True)


EXTERNAL = (
    ToolSpec(
        "get_weather",
        "Current weather for a city.",
        {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        "external",
        "read",
        weather,
    ),
    ToolSpec(
        "web_search",
        "Search the web.",
        {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
        "external",
        "read",
        search,
    ),
    ToolSpec(
        "send_email",
        "Send an email.",
        {"type": "object"},
        "external",
        "write",
        lambda inp: f"queued message to {inp.get('to')}",
    ),
    ToolSpec("flaky_api", "An API that is down.", {"type": "object"}, "external", "read", flaky),
)


def agent(system: str = "You are a careful assistant. Use tools when they help.") -> AgentSpec:
    return AgentSpec(
        "conformance-agent", "model-x-1", system, tools=(*BUILTIN_TOOLS.values(), *EXTERNAL)
    )


def new_thread(
    name: str, files: dict[str, bytes | str] | None = None, system: str | None = None
) -> Thread:
    return Thread.create(
        agent=agent(system) if system else agent(),
        sandbox=FakeSandbox(files or {}),
        thread_id=f"thread-{name}",
        clock=Clock(START_MS, 7),
    )


def u(n: int, i: int = 0, o: int = 0) -> dict[str, int]:
    return {"input_tokens": n + i, "output_tokens": o or n // 2 + 1}


def warmup(t: Thread) -> None:
    t.run_turn(
        "Hello!",
        ScriptedModel([text_reply("Hi. How can I help?", input_tokens=12, output_tokens=7)]),
    )


CASES: dict[str, Callable[[], tuple[Thread, str, CaseExpectation, str]]] = {}


def case(fn: Callable[[], tuple[Thread, str, CaseExpectation, str]]) -> Callable[[], Any]:
    CASES[fn.__name__.replace("_", "-")] = fn
    return fn


def last_id(t: Thread) -> str:
    return t.events[-1]["event_id"]


@case
def reads_notes() -> tuple[Thread, str, CaseExpectation, str]:
    t = new_thread("reads-notes", {"notes.txt": "buy milk\ncall Ana\n"})
    at = last_id(t)
    t.run_turn(
        "What is on my list?",
        ScriptedModel(
            [
                tool_reply(("tu_1", "read_file", {"path": "notes.txt"}), **u(40)),
                text_reply("Buy milk and call Ana.", **u(60)),
            ]
        ),
    )
    return (
        t,
        at,
        CaseExpectation(
            must=[
                {"type": "sandbox_read", "data": {"path": "notes.txt"}},
                {"type": "tool_result", "data": {"is_error": False}},
            ],
            expect=[
                {"type": "tool_called", "data": {"name": "read_file"}},
                {"type": "turn_completed"},
            ],
        ),
        "stub",
    )


@case
def writes_summary() -> tuple[Thread, str, CaseExpectation, str]:
    t = new_thread("writes-summary", {"draft.md": "# Draft\nlong text\n"})
    warmup(t)
    at = last_id(t)
    t.run_turn(
        "Summarise draft.md into summary.md",
        ScriptedModel(
            [
                tool_reply(("tu_1", "read_file", {"path": "draft.md"}), **u(50)),
                tool_reply(
                    ("tu_2", "write_file", {"path": "summary.md", "content": "Draft: long text."}),
                    **u(70),
                ),
                text_reply("Wrote summary.md.", **u(80)),
            ]
        ),
    )
    return (
        t,
        at,
        CaseExpectation(
            must=[{"type": "sandbox_wrote", "data": {"path": "summary.md"}, "critical": True}],
            expect=[
                {"type": "tool_called", "data": {"name": "read_file"}},
                {"type": "tool_called", "data": {"name": "write_file"}},
                {"type": "turn_completed", "data": {"stop_reason": "end_turn"}},
            ],
        ),
        "forbid",
    )


@case
def weather_stub() -> tuple[Thread, str, CaseExpectation, str]:
    t = new_thread("weather-stub")
    at = last_id(t)
    t.run_turn(
        "Weather in Oslo?",
        ScriptedModel(
            [
                tool_reply(("tu_1", "get_weather", {"city": "Oslo"}), **u(30)),
                text_reply("It is 4°C with light rain in Oslo.", **u(45)),
            ]
        ),
    )
    return (
        t,
        at,
        CaseExpectation(
            must=[{"type": "tool_result", "data": {"name": "get_weather", "is_error": False}}],
            expect=[{"type": "tool_called", "data": {"kind": "external"}}],
        ),
        "stub",
    )


@case
def parallel_calls() -> tuple[Thread, str, CaseExpectation, str]:
    t = new_thread("parallel-calls", {"a.txt": "alpha", "b.txt": "beta"})
    at = last_id(t)
    t.run_turn(
        "Compare a.txt and b.txt, and check the weather in Paris.",
        ScriptedModel(
            [
                tool_reply(
                    ("tu_1", "read_file", {"path": "a.txt"}),
                    ("tu_2", "read_file", {"path": "b.txt"}),
                    ("tu_3", "get_weather", {"city": "Paris"}),
                    text="Reading both.",
                    **u(40),
                ),
                text_reply("a.txt says alpha, b.txt says beta; Paris is rainy.", **u(90)),
            ]
        ),
    )
    return (
        t,
        at,
        CaseExpectation(
            must=[
                {"type": "tool_result", "data": {"tool_use_id": "tu_1", "content": "alpha"}},
                {"type": "tool_result", "data": {"tool_use_id": "tu_2", "content": "beta"}},
            ],
            expect=[
                {"type": "model_responded", "data": {"stop_reason": "tool_use"}},
                {"type": "tool_result", "data": {"tool_use_id": "tu_3"}},
                {"type": "model_responded", "data": {"stop_reason": "end_turn"}},
            ],
        ),
        "stub",
    )


@case
def missing_file_error() -> tuple[Thread, str, CaseExpectation, str]:
    t = new_thread("missing-file-error")
    at = last_id(t)
    t.run_turn(
        "Open config.yaml",
        ScriptedModel(
            [
                tool_reply(("tu_1", "read_file", {"path": "config.yaml"}), **u(20)),
                text_reply("There is no config.yaml.", **u(25)),
            ]
        ),
    )
    return (
        t,
        at,
        CaseExpectation(
            must=[{"type": "tool_result", "data": {"is_error": True, "name": "read_file"}}],
        ),
        "forbid",
    )


@case
def external_tool_error() -> tuple[Thread, str, CaseExpectation, str]:
    t = new_thread("external-tool-error")
    at = last_id(t)
    t.run_turn(
        "Ping the status API",
        ScriptedModel(
            [
                tool_reply(("tu_1", "flaky_api", {"endpoint": "/status"}), **u(20)),
                text_reply("The API is down (503).", **u(30)),
            ]
        ),
    )
    return (
        t,
        at,
        CaseExpectation(
            must=[{"type": "tool_result", "data": {"name": "flaky_api", "is_error": True}}],
        ),
        "stub",
    )


@case
def unknown_tool() -> tuple[Thread, str, CaseExpectation, str]:
    t = new_thread("unknown-tool")
    at = last_id(t)
    t.run_turn(
        "Run the linter",
        ScriptedModel(
            [
                tool_reply(("tu_1", "run_linter", {"path": "."}), **u(20)),
                text_reply("I have no linter tool.", **u(20)),
            ]
        ),
    )
    return (
        t,
        at,
        CaseExpectation(
            must=[{"type": "tool_result", "data": {"name": "run_linter", "is_error": True}}],
            expect=[{"type": "tool_called", "data": {"kind": "external", "effect": "pure"}}],
        ),
        "stub",
    )


@case
def unknown_tool_quoted_name() -> tuple[Thread, str, CaseExpectation, str]:
    # a name with a quote, a backslash, a control character and a character beyond the BMP:
    # the result quotes it as canonical JSON (spec/replay.md 3.3), never as a language prints it
    name = "it's \\ \u0007 \U0001d4b3"
    t = new_thread("unknown-tool-quoted-name")
    at = last_id(t)
    t.run_turn(
        "Use the odd tool",
        ScriptedModel(
            [
                tool_reply(("tu_1", name, {"10": 1, "2": 2.0}), **u(20)),
                text_reply("That tool does not exist.", **u(20)),
            ]
        ),
    )
    text = 'unknown tool "it\'s \\\\ \\u0007 \U0001d4b3"'
    return (
        t,
        at,
        CaseExpectation(
            must=[{"type": "tool_result", "data": {"content": text, "is_error": True}}],
        ),
        "stub",
    )


@case
def tool_input_not_string() -> tuple[Thread, str, CaseExpectation, str]:
    # built-in tools take strings only: an integral float, an object with integer-like keys
    # and a missing key are refused as bad input, with texts that hold no value
    t = new_thread("tool-input-not-string", {"n.txt": "one"})
    at = last_id(t)
    t.run_turn(
        "Write 1.0 to n.txt",
        ScriptedModel(
            [
                tool_reply(
                    ("tu_1", "write_file", {"path": "n.txt", "content": 1.0}),
                    ("tu_2", "write_file", {"path": "n.txt", "content": {"10": 1, "2": 2}}),
                    ("tu_3", "read_file", {"path": ["n.txt"]}),
                    ("tu_4", "delete_file", {"file": "n.txt"}),
                    ("tu_5", "list_files", {"prefix": 1}),
                    **u(20),
                ),
                text_reply("None of that worked.", **u(20)),
            ]
        ),
    )

    def bad(tool_use_id: str, content: str) -> dict[str, Any]:
        return {
            "type": "tool_result",
            "data": {"tool_use_id": tool_use_id, "content": content, "is_error": True},
        }

    return (
        t,
        at,
        CaseExpectation(
            must=[
                bad("tu_1", 'bad input for write_file: "content" is not a string'),
                bad("tu_2", 'bad input for write_file: "content" is not a string'),
                bad("tu_3", 'bad input for read_file: "path" is not a string'),
                bad("tu_4", 'bad input for delete_file: "path" is missing'),
                bad("tu_5", 'bad input for list_files: "prefix" is not a string'),
            ],
        ),
        "forbid",
    )


@case
def refused_sandbox_path() -> tuple[Thread, str, CaseExpectation, str]:
    t = new_thread("refused-sandbox-path")
    at = last_id(t)
    t.run_turn(
        "Read ../etc/passwd",
        ScriptedModel(
            [
                tool_reply(("tu_1", "read_file", {"path": "../\U0001f511'x"}), **u(20)),
                text_reply("That path is outside the sandbox.", **u(20)),
            ]
        ),
    )
    text = 'sandbox path "../\U0001f511\'x" is not a relative POSIX path inside the sandbox'
    return (
        t,
        at,
        CaseExpectation(
            must=[{"type": "tool_result", "data": {"content": text, "is_error": True}}],
        ),
        "forbid",
    )


@case
def deletes_file() -> tuple[Thread, str, CaseExpectation, str]:
    t = new_thread("deletes-file", {"tmp/cache.bin": b"\x00\x01\x02", "keep.txt": "keep"})
    at = last_id(t)
    t.run_turn(
        "Delete tmp/cache.bin",
        ScriptedModel(
            [
                tool_reply(("tu_1", "delete_file", {"path": "tmp/cache.bin"}), **u(20)),
                text_reply("Deleted.", **u(10)),
            ]
        ),
    )
    return (
        t,
        at,
        CaseExpectation(
            must=[{"type": "sandbox_wrote", "data": {"path": "tmp/cache.bin", "sha256": None}}],
        ),
        "forbid",
    )


@case
def lists_files() -> tuple[Thread, str, CaseExpectation, str]:
    t = new_thread(
        "lists-files", {"src/a.py": "print(1)\n", "src/b.py": "print(2)\n", "README.md": "# x\n"}
    )
    at = last_id(t)
    t.run_turn(
        "What is in src/?",
        ScriptedModel(
            [
                tool_reply(("tu_1", "list_files", {"prefix": "src/"}), **u(20)),
                text_reply("src/a.py and src/b.py.", **u(20)),
            ]
        ),
    )
    return (
        t,
        at,
        CaseExpectation(
            must=[{"type": "tool_result", "data": {"content": "src/a.py\nsrc/b.py"}}],
        ),
        "forbid",
    )


@case
def multi_turn_prefix() -> tuple[Thread, str, CaseExpectation, str]:
    t = new_thread("multi-turn-prefix", {"todo.txt": "1. tests\n"})
    t.run_turn(
        "Read todo.txt",
        ScriptedModel(
            [
                tool_reply(("tu_1", "read_file", {"path": "todo.txt"}), **u(20)),
                text_reply("One item: tests.", **u(20)),
            ]
        ),
    )
    t.run_turn(
        "Add docs to it",
        ScriptedModel(
            [
                tool_reply(
                    ("tu_2", "write_file", {"path": "todo.txt", "content": "1. tests\n2. docs\n"}),
                    **u(30),
                ),
                text_reply("Added.", **u(10)),
            ]
        ),
    )
    at = last_id(t)
    t.run_turn(
        "How many items now?",
        ScriptedModel(
            [
                tool_reply(("tu_3", "read_file", {"path": "todo.txt"}), **u(40)),
                text_reply("Two items.", **u(10)),
            ]
        ),
    )
    return (
        t,
        at,
        CaseExpectation(
            must=[{"type": "tool_result", "data": {"content": "1. tests\n2. docs\n"}}],
        ),
        "forbid",
    )


@case
def after_restore() -> tuple[Thread, str, CaseExpectation, str]:
    t = new_thread("after-restore", {"state.txt": "v1"})
    warmup(t)
    snap = t.snapshot()
    t.run_turn(
        "Overwrite state.txt with v2",
        ScriptedModel(
            [
                tool_reply(("tu_1", "write_file", {"path": "state.txt", "content": "v2"}), **u(20)),
                text_reply("Done.", **u(5)),
            ]
        ),
    )
    t.restore(snap)
    at = last_id(t)
    t.run_turn(
        "What does state.txt say?",
        ScriptedModel(
            [
                tool_reply(("tu_2", "read_file", {"path": "state.txt"}), **u(20)),
                text_reply("It says v1.", **u(5)),
            ]
        ),
    )
    return (
        t,
        at,
        CaseExpectation(
            must=[{"type": "tool_result", "data": {"content": "v1"}, "epoch": 1}],
        ),
        "forbid",
    )


@case
def on_a_fork() -> tuple[Thread, str, CaseExpectation, str]:
    t = new_thread("on-a-fork", {"plan.md": "plan A"})
    warmup(t)
    point = last_id(t)
    t.run_turn("Use plan B instead", ScriptedModel([text_reply("OK, plan B.", **u(10))]))
    f = t.fork(point, branch_id="retry-1")
    at = last_id(f)
    f.run_turn(
        "Read plan.md",
        ScriptedModel(
            [
                tool_reply(("tu_1", "read_file", {"path": "plan.md"}), **u(20)),
                text_reply("It says plan A.", **u(5)),
            ]
        ),
    )
    return (
        f,
        at,
        CaseExpectation(
            must=[{"type": "turn_completed", "branch_id": "retry-1"}],
        ),
        "forbid",
    )


@case
def repeated_stub_order() -> tuple[Thread, str, CaseExpectation, str]:
    t = new_thread("repeated-stub-order")
    calls = iter(["first page", "second page"])
    t2 = t
    spec = ToolSpec(
        "web_search",
        "Search the web.",
        EXTERNAL[1].input_schema,
        "external",
        "read",
        lambda inp: next(calls),
    )
    t2._agent = AgentSpec(
        t.agent.name,
        t.agent.model,
        t.agent.system,  # type: ignore[union-attr]
        tools=(*BUILTIN_TOOLS.values(), spec, *EXTERNAL[2:], EXTERNAL[0]),
    )
    at = last_id(t)
    t.run_turn(
        "Search twice for threads",
        ScriptedModel(
            [
                tool_reply(("tu_1", "web_search", {"q": "threads"}), **u(20)),
                tool_reply(("tu_2", "web_search", {"q": "threads"}), **u(20)),
                text_reply("Two pages read.", **u(5)),
            ]
        ),
    )
    return (
        t,
        at,
        CaseExpectation(
            expect=[
                {"type": "tool_result", "data": {"content": "first page"}},
                {"type": "tool_result", "data": {"content": "second page"}},
            ],
        ),
        "stub",
    )


@case
def non_ascii_text() -> tuple[Thread, str, CaseExpectation, str]:
    t = new_thread(
        "non-ascii-text", {"日本/メモ.txt": "こんにちは 🌸\n", "café.txt": "crème brûlée"}
    )
    at = last_id(t)
    t.run_turn(
        "Lis 日本/メモ.txt et café.txt, s'il te plaît",
        ScriptedModel(
            [
                tool_reply(
                    ("tu_1", "read_file", {"path": "日本/メモ.txt"}),
                    ("tu_2", "read_file", {"path": "café.txt"}),
                    **u(30),
                ),
                text_reply("« こんにちは 🌸 » et « crème brûlée ».", **u(20)),
            ]
        ),
    )
    return (
        t,
        at,
        CaseExpectation(
            must=[
                {"type": "tool_result", "data": {"content": "こんにちは 🌸\n"}},
                {"type": "sandbox_read", "data": {"path": "café.txt"}},
            ],
        ),
        "forbid",
    )


@case
def binary_file() -> tuple[Thread, str, CaseExpectation, str]:
    t = new_thread("binary-file", {"logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\xff"})
    at = last_id(t)
    t.run_turn(
        "What is logo.png?",
        ScriptedModel(
            [
                tool_reply(("tu_1", "read_file", {"path": "logo.png"}), **u(20)),
                text_reply("It is a binary image.", **u(10)),
            ]
        ),
    )
    return (
        t,
        at,
        CaseExpectation(
            must=[
                {"type": "tool_result", "data": {"is_error": True}},
                {"type": "sandbox_read", "data": {"size": 11}},
            ],
        ),
        "forbid",
    )


@case
def blocks_input() -> tuple[Thread, str, CaseExpectation, str]:
    t = new_thread("blocks-input")
    at = last_id(t)
    content = [
        {"type": "text", "text": "Describe this picture."},
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
        },
    ]
    t.run_turn(content, ScriptedModel([text_reply("A tiny PNG.", **u(50))]))
    return (
        t,
        at,
        CaseExpectation(
            must=[
                {
                    "type": "user_message",
                    "data": {
                        "content": [
                            {"type": "text", "text": "Describe this picture."},
                            {"type": "image"},
                        ]
                    },
                }
            ],
        ),
        "forbid",
    )


@case
def thinking_blocks() -> tuple[Thread, str, CaseExpectation, str]:
    t = new_thread("thinking-blocks", {"n.txt": "41"})
    at = last_id(t)
    reply = tool_reply(("tu_1", "read_file", {"path": "n.txt"}), **u(20))
    reply["message"]["content"].insert(
        0, {"type": "thinking", "thinking": "Read the file first.", "signature": "sig-1"}
    )
    t.run_turn(
        "Add one to the number in n.txt",
        ScriptedModel(
            [
                reply,
                text_reply("42", **u(5)),
            ]
        ),
    )
    return (
        t,
        at,
        CaseExpectation(
            must=[
                {
                    "type": "model_responded",
                    "data": {"message": {"role": "assistant"}, "stop_reason": "end_turn"},
                }
            ],
        ),
        "forbid",
    )


@case
def email_write_effect() -> tuple[Thread, str, CaseExpectation, str]:
    t = new_thread("email-write-effect")
    at = last_id(t)
    t.run_turn(
        "Email ana@example.com that the build is green",
        ScriptedModel(
            [
                tool_reply(
                    ("tu_1", "send_email", {"to": "ana@example.com", "body": "Build is green."}),
                    **u(30),
                ),
                text_reply("Sent.", **u(5)),
            ]
        ),
    )
    return (
        t,
        at,
        CaseExpectation(
            must=[
                {"type": "tool_called", "critical": True, "data": {"effect": "write"}},
                {"type": "tool_result", "critical": True},
            ],
        ),
        "stub",
    )


@case
def extension_events() -> tuple[Thread, str, CaseExpectation, str]:
    t = new_thread("extension-events", {"x.txt": "x"})
    t._recorder.append("x_trace", {"span": "warmup", "tags": ["a", "b"]})
    warmup(t)
    t._recorder.append("x_note", {"text": "user paused"})
    at = last_id(t)
    t.run_turn(
        "Read x.txt",
        ScriptedModel(
            [
                tool_reply(("tu_1", "read_file", {"path": "x.txt"}), **u(10)),
                text_reply("x", **u(2)),
            ]
        ),
    )
    return t, at, CaseExpectation(must=[{"type": "turn_completed"}]), "forbid"


@case
def long_tool_chain() -> tuple[Thread, str, CaseExpectation, str]:
    files = {f"part{i}.txt": f"chunk {i}" for i in range(1, 6)}
    t = new_thread("long-tool-chain", files)
    at = last_id(t)
    replies = [
        tool_reply((f"tu_{i}", "read_file", {"path": f"part{i}.txt"}), **u(10 * i))
        for i in range(1, 6)
    ]
    replies.append(
        tool_reply(
            ("tu_6", "write_file", {"path": "all.txt", "content": " ".join(files.values())}),
            **u(70),
        )
    )
    replies.append(text_reply("Joined five parts into all.txt.", **u(80)))
    t.run_turn("Join part1..part5 into all.txt", ScriptedModel(replies))
    return (
        t,
        at,
        CaseExpectation(
            must=[{"type": "sandbox_wrote", "data": {"path": "all.txt"}}],
            expect=[
                {"type": "tool_called", "data": {"input": {"path": f"part{i}.txt"}}}
                for i in range(1, 6)
            ],
        ),
        "forbid",
    )


@case
def stop_reason_max_tokens() -> tuple[Thread, str, CaseExpectation, str]:
    t = new_thread("stop-reason-max-tokens")
    at = last_id(t)
    reply = text_reply("This answer was cut o", **u(10, 0, 4096))
    reply["stop_reason"] = "max_tokens"
    t.run_turn("Write a long essay", ScriptedModel([reply]))
    return (
        t,
        at,
        CaseExpectation(
            must=[{"type": "turn_completed", "data": {"stop_reason": "max_tokens"}}],
        ),
        "forbid",
    )


@case
def overwrite_then_read() -> tuple[Thread, str, CaseExpectation, str]:
    t = new_thread("overwrite-then-read", {"cfg.json": '{"debug": false}'})
    at = last_id(t)
    t.run_turn(
        "Turn debug on and show the file",
        ScriptedModel(
            [
                tool_reply(("tu_1", "read_file", {"path": "cfg.json"}), **u(10)),
                tool_reply(
                    ("tu_2", "write_file", {"path": "cfg.json", "content": '{"debug": true}'}),
                    **u(20),
                ),
                tool_reply(("tu_3", "read_file", {"path": "cfg.json"}), **u(30)),
                text_reply("debug is now true.", **u(5)),
            ]
        ),
    )
    return (
        t,
        at,
        CaseExpectation(
            expect=[
                {"type": "tool_result", "data": {"content": '{"debug": false}'}},
                {"type": "tool_result", "data": {"content": '{"debug": true}'}},
            ],
        ),
        "forbid",
    )


def rejected(inp: dict[str, Any]) -> ToolResult:
    from threads_cases.core.errors import CaseError

    raise CaseError("interrupted", "the user rejected the tool call")


@case
def interrupted_turn() -> tuple[Thread, str, CaseExpectation, str]:
    """The user rejects the second tool call: the turn ends with turn_failed right after
    that tool_called, and a replay must end it at the same point (replay.md 3.9)."""
    t = new_thread("interrupted-turn", {"notes.txt": "buy milk\n"})
    t._agent = AgentSpec(
        "conformance-agent",
        "model-x-1",
        t.agent.system if t.agent else "",
        tools=(
            *BUILTIN_TOOLS.values(),
            *(
                ToolSpec(e.name, e.description, e.input_schema, e.kind, e.effect, rejected)
                if e.name == "send_email"
                else e
                for e in EXTERNAL
            ),
        ),
    )
    warmup(t)
    at = last_id(t)
    out = t.run_turn(
        "Read notes.txt and email it to Ana",
        ScriptedModel(
            [
                tool_reply(("tu_1", "read_file", {"path": "notes.txt"}), **u(20)),
                tool_reply(("tu_2", "send_email", {"to": "ana@example.com"}), **u(30)),
            ]
        ),
    )
    assert out.status == "stopped", out
    return (
        t,
        at,
        CaseExpectation(
            must=[
                {"type": "tool_called", "data": {"name": "send_email"}},
                {"type": "turn_failed", "data": {"error": {"code": "interrupted"}}},
            ],
            expect=[
                {"type": "tool_result", "data": {"name": "read_file"}},
                {"type": "turn_failed"},
            ],
        ),
        "stub",
    )


@case
def hash_only_unread() -> tuple[Thread, str, CaseExpectation, str]:
    """big.bin is known by sha256 only (a read recorded with "artifact": null); the turn
    never reads it, so the case replays (case-format.md 3.7.1, replay.md 2.3)."""
    import hashlib

    data = b"\x00" * 64
    t = new_thread("hash-only-unread", {"notes.txt": "call Ana\n", "big.bin": data})
    warmup(t)
    t._recorder.append(
        "sandbox_read",
        {
            "path": "big.bin",
            "sha256": hashlib.sha256(data).hexdigest(),
            "size": len(data),
            "artifact": None,
        },
        actor="sandbox",
    )
    at = last_id(t)
    t.run_turn(
        "What is in notes.txt? Then list my files.",
        ScriptedModel(
            [
                tool_reply(("tu_1", "read_file", {"path": "notes.txt"}), **u(20)),
                tool_reply(("tu_2", "list_files", {}), **u(25)),
                text_reply("Call Ana. Files: big.bin, notes.txt.", **u(30)),
            ]
        ),
    )
    return (
        t,
        at,
        CaseExpectation(
            must=[
                {
                    "type": "tool_result",
                    "data": {"name": "list_files", "content": "big.bin\nnotes.txt"},
                },
                {"type": "turn_completed"},
            ]
        ),
        "stub",
    )


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    for name, build in CASES.items():
        thread, at, expect, effects = build()
        result = thread.save_case(name, expect=expect, at=at, dir=OUT, external_effects=effects)
        if not result.ok:
            raise SystemExit(f"{name}: {result.error}")
        print(f"{name}: {result.value.fingerprint}")  # type: ignore[union-attr]
    print(f"{len(CASES)} cases in {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
