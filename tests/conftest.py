"""Shared test helpers: :func:`cli` (the real CLI in a subprocess), a small recorded thread
and the conformance cases.

``build_thread()`` is also imported by the crash subprocesses (tests/test_save_crash.py), so
it must stay deterministic: fixed clock, fixed thread id, scripted model.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from threads_cases.case.directory import CaseExpectation
from threads_cases.reference.agent import BUILTIN_TOOLS, AgentSpec, ToolSpec
from threads_cases.reference.model import ScriptedModel, text_reply, tool_reply
from threads_cases.reference.runtime import Clock
from threads_cases.reference.sandbox import FakeSandbox
from threads_cases.reference.thread import Thread

ROOT = Path(__file__).resolve().parent.parent
CONFORMANCE = ROOT / "spec" / "conformance" / "cases"
CONFORMANCE_NAMES = sorted(p.name for p in CONFORMANCE.iterdir() if (p / "case.json").is_file())
SYSTEM = "You are terse. Use tools."
START_MS = 1_800_000_000_000

#: The bound on one CLI run. It only catches a hang: a loaded 2-core machine may be slow, so
#: no test judges speed by the clock.
HANG_SECONDS = 300.0
#: Variables of the test process that would change what the CLI does.
CLEARED_ENV = (
    "THREADS_CASES_DEBUG",
    "THREADS_CASES_CRASH_AT",
    "GITHUB_STEP_SUMMARY",
    "GITHUB_WORKSPACE",
)


def cli(
    *args: str | Path,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    timeout: float = HANG_SECONDS,
    traceback_ok: bool = False,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m threads_cases ARGS`` in ``cwd`` (stdin empty, output decoded as UTF-8
    with replacement) with ``env`` on top of this environment minus :data:`CLEARED_ENV`.
    Fails the test when the command hangs past ``timeout`` or prints a traceback (unless
    ``traceback_ok``)."""
    base = {k: v for k, v in os.environ.items() if k not in CLEARED_ENV}
    argv = [sys.executable, "-m", "threads_cases", *map(str, args)]
    try:
        p = subprocess.run(
            argv,
            cwd=cwd,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            env={**base, "COLUMNS": "200", **(env or {})},  # piped output is COLUMNS wide
        )
    except subprocess.TimeoutExpired as exc:
        tail = exc.stderr[-500:] if isinstance(exc.stderr, bytes) else b""
        pytest.fail(f"`threads-cases {' '.join(argv[3:5])} ...` hung for {timeout}s ({tail!r})")
    if not traceback_ok:
        assert "Traceback" not in p.stdout + p.stderr, p.stderr[-3000:]
    return p


#: Calls the live weather handler answered, in order (reset by build_thread).
WEATHER_CALLS: list[dict[str, Any]] = []


def weather(inp: dict[str, Any]) -> str:
    WEATHER_CALLS.append(dict(inp))
    return f"{inp['city']}: 12°C, sunny"


WEATHER = ToolSpec(
    "get_weather",
    "Current weather for a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    "external",
    "read",
    weather,
)


def make_agent(system: str = SYSTEM, *extra: ToolSpec) -> AgentSpec:
    return AgentSpec(
        "test-agent", "model-t", system, tools=(*BUILTIN_TOOLS.values(), WEATHER, *extra)
    )


def new_thread(
    files: dict[str, bytes | str] | None = None,
    *,
    system: str = SYSTEM,
    extra: tuple[ToolSpec, ...] = (),
    thread_id: str = "thread-test",
) -> Thread:
    return Thread.create(
        agent=make_agent(system, *extra),
        sandbox=FakeSandbox(files or {}),
        thread_id=thread_id,
        clock=Clock(START_MS, 3),
    )


def build_thread(extra_files: int = 0) -> tuple[Thread, str]:
    """A thread with a warm-up turn (a read, so the prefix holds an artifact) and, after the
    fork point ``at``, a turn that reads, calls the external weather tool live and writes
    (the first reply holds two tool calls). ``extra_files`` more files are read in the
    warm-up (each one more artifact, so one more write step when saving)."""
    WEATHER_CALLS.clear()
    files: dict[str, bytes | str] = {
        "notes.txt": "buy milk\n",
        "todo.md": "- ship it\n",
        "bin.dat": b"\x00\xffbinary",
    }
    for i in range(extra_files):
        files[f"extra/{i}.txt"] = f"extra file {i}\n"
    t = new_thread(files)
    warm = [("w1", "read_file", {"path": "todo.md"})]
    warm += [(f"w{i + 2}", "read_file", {"path": f"extra/{i}.txt"}) for i in range(extra_files)]
    t.run_turn(
        "Warm up: read todo.md",
        ScriptedModel(
            [
                tool_reply(*warm, input_tokens=5, output_tokens=2),
                text_reply("Todo: ship it.", input_tokens=9, output_tokens=3),
            ]
        ),
    )
    at = t.events[-1]["event_id"]
    out = t.run_turn(
        "Read notes.txt, check Oslo weather, write report.txt",
        ScriptedModel(
            [
                tool_reply(
                    ("tu_1", "read_file", {"path": "notes.txt"}),
                    ("tu_2", "get_weather", {"city": "Oslo"}),
                    text="Two things first.",
                    input_tokens=20,
                    output_tokens=8,
                ),
                tool_reply(
                    ("tu_3", "write_file", {"path": "report.txt", "content": "milk; sunny"}),
                    input_tokens=30,
                    output_tokens=9,
                ),
                text_reply("Done: report.txt written.", input_tokens=40, output_tokens=6),
            ]
        ),
    )
    assert out.status == "completed", out
    return t, at


EXPECT = CaseExpectation(
    must=[
        {"type": "sandbox_wrote", "data": {"path": "report.txt"}},
        {"type": "tool_result", "data": {"name": "get_weather", "content": "Oslo: 12°C, sunny"}},
    ],
    expect=[{"type": "tool_called", "data": {"name": "read_file"}}, {"type": "turn_completed"}],
)


@pytest.fixture
def recorded() -> tuple[Thread, str]:
    """``(thread, at)`` from :func:`build_thread`."""
    return build_thread()


@pytest.fixture
def saved_case(tmp_path: Path) -> Path:
    """The recorded thread saved as ``tmp_path/cases/sample``."""
    t, at = build_thread()
    r = t.save_case("sample", at=at, expect=EXPECT, dir=tmp_path / "cases")
    assert r.ok, r.error
    return tmp_path / "cases" / "sample"


@pytest.fixture
def conformance_case(tmp_path: Path) -> Callable[[str], Path]:
    """``copy(name) -> path``: a copy of spec/conformance/cases/<name> under tmp_path (never
    mutate the originals)."""

    def copy(name: str, dest: Path | None = None) -> Path:
        target = (dest or tmp_path / "cases") / name
        shutil.copytree(CONFORMANCE / name, target)
        return target

    return copy
