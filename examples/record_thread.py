"""Record a small thread with the Python API and a scripted model, then write its log.

    python examples/record_thread.py OUT_DIR

writes OUT_DIR/thread.jsonl (the log), OUT_DIR/artifacts/ (the bytes the log refers to),
prints the event_id to save a case at on the first line and, on standard error, the
``threads-cases save`` command that saves it (``save`` finds OUT_DIR/artifacts/ beside the
log; the command names it anyway). No model provider is needed: ScriptedModel answers.
An error (OUT_DIR cannot be created or written) is reported as the CLI reports it:
`error[io_error]: <file>: <message>` and a hint on stderr, exit status 1, no traceback.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from threads_cases import AgentSpec, CaseError, FakeSandbox, ScriptedModel, Thread, ToolSpec
from threads_cases.reference.agent import BUILTIN_TOOLS
from threads_cases.reference.model import text_reply, tool_reply


def lookup_ticket(inp: dict[str, object]) -> str:
    """An external tool: in a live run it would call a ticket system."""
    return f"ticket {inp['id']}: open, assigned to Ana"


def main(out: Path) -> None:
    agent = AgentSpec(
        name="support-bot",
        model="model-x-1",
        system="You answer questions about the repository and its tickets.",
        tools=(
            *BUILTIN_TOOLS.values(),
            ToolSpec(
                "lookup_ticket",
                "Look a ticket up by id.",
                {"type": "object", "properties": {"id": {"type": "string"}}},
                kind="external",
                effect="read",
                handler=lookup_ticket,
            ),
        ),
    )
    thread = Thread.create(
        agent=agent,
        thread_id="demo-thread",
        sandbox=FakeSandbox({"NOTES.md": "Release 1.2 is blocked by T-42.\n"}),
    )
    thread.run_turn("Hi!", ScriptedModel([text_reply("Hello! What do you need?")]))
    fork_point = thread.events[-1]["event_id"]
    thread.run_turn(
        "Why is the release blocked?",
        ScriptedModel(
            [
                tool_reply(("tu_1", "read_file", {"path": "NOTES.md"})),
                tool_reply(("tu_2", "lookup_ticket", {"id": "T-42"})),
                text_reply("Release 1.2 waits for T-42, which is open and assigned to Ana."),
            ]
        ),
    )
    try:
        out.mkdir(parents=True, exist_ok=True)
        thread.write_log(out / "thread.jsonl")
        thread.write_artifacts(out / "artifacts")
    except OSError as exc:
        raise CaseError(
            "io_error",
            f"cannot write the thread: {exc.strerror or exc}",
            file=str(exc.filename or out),
            hint="pass a folder that can be created and written",
        ) from None
    print(fork_point)
    log = shlex.quote(str(out / "thread.jsonl"))
    arts = shlex.quote(str(out / "artifacts"))
    print(
        f"save it: threads-cases save {log} --at {fork_point} --name why-blocked --dir cases "
        f"--artifacts {arts}",
        file=sys.stderr,
    )


def report(err: CaseError) -> int:
    """Print an error as the CLI does (code, file and line, message, hint); its exit status."""
    print(err.render(), file=sys.stderr)
    if err.hint:
        print(f"  hint: {err.hint}", file=sys.stderr)
    return err.exit_status


if __name__ == "__main__":
    try:
        main(Path(sys.argv[1] if len(sys.argv) > 1 else "demo-out"))
    except CaseError as err:
        sys.exit(report(err))
