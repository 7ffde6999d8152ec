"""Author the step-by-step replay tests in spec/conformance/replay/ with the real writer
(spec/conformance.md 2.14): each a case directory of one turn that needs one more rule of
replay.md than the one before, with an agent holding only the tools that turn uses, so a new
implementation can pass them one by one before the whole-case area ``cases/``.

Run ``python tools/make_replay_tests.py``; the clock and thread ids are fixed, so the output
is byte-stable."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from make_conformance_cases import EXTERNAL, START_MS, rejected, u  # noqa: E402

from threads_cases.case.directory import CaseExpectation  # noqa: E402
from threads_cases.reference.agent import BUILTIN_TOOLS, AgentSpec, ToolSpec  # noqa: E402
from threads_cases.reference.model import ScriptedModel, text_reply, tool_reply  # noqa: E402
from threads_cases.reference.runtime import Clock  # noqa: E402
from threads_cases.reference.sandbox import FakeSandbox  # noqa: E402
from threads_cases.reference.thread import Thread  # noqa: E402

OUT = ROOT / "spec" / "conformance" / "replay"
SYSTEM = "You are a careful assistant."
Built = tuple[Thread, str, CaseExpectation, str]
TESTS: dict[str, Callable[[], Built]] = {}


def test(name: str) -> Callable[[Callable[[], Built]], Callable[[], Built]]:
    def add(fn: Callable[[], Built]) -> Callable[[], Built]:
        TESTS[name] = fn
        return fn

    return add


def thread(name: str, tools: tuple[ToolSpec, ...], files: dict[str, Any] | None = None) -> Thread:
    return Thread.create(
        agent=AgentSpec("replay-agent", "model-x-1", SYSTEM, tools=tools),
        sandbox=FakeSandbox(files or {}),
        thread_id=f"thread-{name}",
        clock=Clock(START_MS, 7),
    )


def external(name: str) -> ToolSpec:
    return next(e for e in EXTERNAL if e.name == name)


@test("001-text-only-turn")
def text_only() -> Built:
    """One model call answered by text: case loading, the request and its hash, the clock,
    the events of a turn and the state they reduce to."""
    t = thread("text-only-turn", ())
    at = t.events[-1]["event_id"]
    t.run_turn("Hello!", ScriptedModel([text_reply("Hi. How can I help?", **u(12))]))
    return t, at, CaseExpectation(must=[{"type": "turn_completed"}]), "forbid"


@test("002-one-sandbox-read")
def one_read() -> Built:
    """One tool call of the built-in read_file, then text: a tool result from the sandbox of
    sandbox.json, a second model request that holds it."""
    t = thread("one-sandbox-read", (BUILTIN_TOOLS["read_file"],), {"notes.txt": "buy milk\n"})
    at = t.events[-1]["event_id"]
    replies = [
        tool_reply(("tu_1", "read_file", {"path": "notes.txt"}), **u(20)),
        text_reply("Buy milk.", **u(30)),
    ]
    t.run_turn("What is on my list?", ScriptedModel(replies))
    must = [{"type": "sandbox_read", "data": {"path": "notes.txt"}}]
    return t, at, CaseExpectation(must=must), "forbid"


@test("003-one-stub")
def one_stub() -> Built:
    """One external tool call answered from stubs.json, never run."""
    t = thread("one-stub", (external("get_weather"),))
    at = t.events[-1]["event_id"]
    replies = [
        tool_reply(("tu_1", "get_weather", {"city": "Oslo"}), **u(20)),
        text_reply("4°C and light rain.", **u(30)),
    ]
    t.run_turn("Weather in Oslo?", ScriptedModel(replies))
    must = [{"type": "tool_result", "data": {"name": "get_weather", "is_error": False}}]
    return t, at, CaseExpectation(must=must), "stub"


@test("004-stop-reason")
def stop_reason() -> Built:
    """A reply whose stop_reason is max_tokens: the turn completes with that stop reason."""
    t = thread("stop-reason", ())
    at = t.events[-1]["event_id"]
    reply = text_reply("This answer was cut o", **u(10, 0, 4096))
    reply["stop_reason"] = "max_tokens"
    t.run_turn("Write a long essay", ScriptedModel([reply]))
    must = [{"type": "turn_completed", "data": {"stop_reason": "max_tokens"}}]
    return t, at, CaseExpectation(must=must), "forbid"


@test("005-interruption")
def interruption() -> Built:
    """A tool call the user rejects: the turn fails with interrupted right after its
    tool_called, and the replay ends it at the same point (replay.md 3.9)."""
    email = external("send_email")
    tool = ToolSpec(
        email.name, email.description, email.input_schema, email.kind, email.effect, rejected
    )
    t = thread("interruption", (tool,))
    at = t.events[-1]["event_id"]
    out = t.run_turn(
        "Email Ana",
        ScriptedModel([tool_reply(("tu_1", "send_email", {"to": "ana@x.org"}), **u(20))]),
    )
    assert out.status == "stopped", out
    must = [{"type": "turn_failed", "data": {"error": {"code": "interrupted"}}}]
    return t, at, CaseExpectation(must=must), "stub"


@test("008-tool-input-refusals")
def tool_input_refusals() -> Built:
    """Built-in tool calls refused before the sandbox is touched, and a delete of a missing
    file (replay.md 3.3, 3.4): a missing file's delete reads it first (no such file); a
    write whose content is not a string and whose path is invalid is refused for its content
    (the input's keys before any path); a device-name segment is refused with its own text; a
    list_files prefix is a plain string (``../`` lists nothing, no refusal) but must be one."""
    tools = tuple(
        BUILTIN_TOOLS[n] for n in ("read_file", "write_file", "list_files", "delete_file")
    )
    t = thread("tool-input-refusals", tools, {"a.txt": "x"})
    at = t.events[-1]["event_id"]
    calls = [
        ("tu_1", "delete_file", {"path": "gone.txt"}),
        ("tu_2", "write_file", {"path": "../x", "content": 5}),
        ("tu_3", "read_file", {"path": "CON/x"}),
        ("tu_4", "list_files", {"prefix": "../"}),
        ("tu_5", "list_files", {"prefix": 5}),
    ]
    replies = [tool_reply(*calls, **u(40)), text_reply("Nothing to do.", **u(60))]
    t.run_turn("Tidy up", ScriptedModel(replies))
    must = [
        {
            "type": "tool_result",
            "data": {"tool_use_id": "tu_1", "content": "no such file: gone.txt"},
        },
        {"type": "turn_completed"},
    ]
    return t, at, CaseExpectation(must=must), "forbid"


@test("009-pause-turn")
def pause_turn() -> Built:
    """A reply whose stop_reason is pause_turn (a provider pausing a long turn) does not end
    the turn: the next model call goes on with the paused reply as the request's last message,
    and the turn completes on the reply after it (replay.md 3.2, step 8)."""
    t = thread("pause-turn", ())
    at = t.events[-1]["event_id"]
    paused = text_reply("Searching the first source.", **u(20, 0, 8))
    paused["stop_reason"] = "pause_turn"
    replies = [paused, text_reply("Both sources agree: 4°C.", **u(40, 0, 9))]
    t.run_turn("Check two sources for the weather", ScriptedModel(replies))
    expect = [
        {"type": "model_responded", "data": {"stop_reason": "pause_turn"}},
        {"type": "model_requested"},
        {"type": "model_responded", "data": {"stop_reason": "end_turn"}},
        {"type": "turn_completed", "data": {"stop_reason": "end_turn"}},
    ]
    return t, at, CaseExpectation(expect=expect), "forbid"


#: The stop tests (spec/conformance.md 2.14): a copy of one of the case directories above with
#: its recording cut, whose replay stops; each file pins the stop (code, stop key, message),
#: the events recorded, the request hashes and what was consumed.
STOPS = [
    (
        "006-model-exhausted-stop",
        "A model call the recording holds no reply for stops the replay with model_exhausted "
        "at model:<n>, after the call's model_requested (replay.md 3.7).",
        "002-one-sandbox-read",
        1,
        False,
    ),
    (
        "007-missing-stub-stop",
        "An external call no stub answers stops the replay with missing_stub at "
        "tool:<name>, after its tool_called, with no tool result (replay.md 3.5, 3.7).",
        "003-one-stub",
        None,
        True,
    ),
]


def stop_test(description: str, case: str, keep: int | None, drop: bool) -> dict[str, Any]:
    """A stop test's document: the cut replayed on the Python runtime as a driver would."""
    import tempfile

    from threads_cases.core.dialects import get_dialect
    from threads_cases.harness.check.conformance_turns import cut_copy
    from threads_cases.protocol.server import handle_request

    doc: dict[str, Any] = {
        "description": description,
        "case": case,
        "keep_replies": keep,
        "drop_stubs": drop,
    }
    with tempfile.TemporaryDirectory() as tmp:
        copy = cut_copy(doc, OUT / case, Path(tmp))
        out = handle_request({"cmd": "replay", "case": {"path": str(copy)}})
    d = get_dialect("threads-py")
    doc["stop"] = out["stop"]
    doc["event_types"] = [d.decode_event(e)["type"] for e in out["events"]]
    doc["requests"] = out["requests"]
    doc["consumed"] = out["consumed"]
    assert out["stop"] is not None, (case, out)
    return doc


def main() -> None:
    from threads_cases.core.canonical import canonical_document

    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    for name, build in TESTS.items():
        t, at, expect, effects = build()
        result = t.save_case(name, expect=expect, at=at, dir=OUT, external_effects=effects)
        if not result.ok:
            raise SystemExit(f"{name}: {result.error}")
        print(f"{name}: {result.value.fingerprint}")  # type: ignore[union-attr]
    for name, description, case, keep, drop in STOPS:
        (OUT / f"{name}.json").write_bytes(
            canonical_document(stop_test(description, case, keep, drop))
        )
        print(f"{name}.json")
    print(f"{len(TESTS) + len(STOPS)} tests in {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
