"""One hand-written file of each recording format the importers read, as the tests of wrong
formats give them to the wrong command: the name a test copies it under -> (the file, its
format, what the refusal calls it)."""

from __future__ import annotations

from pathlib import Path

IMPORTERS = Path(__file__).resolve().parent / "importers"
RECORDINGS = {
    "cassette.yaml": (IMPORTERS / "vcr" / "anthropic-messages-tools.yaml", "vcr", "a VCR cassette"),
    "run.traj": (
        IMPORTERS / "swe-agent" / "text-actions.traj",
        "swe-agent",
        "a SWE-agent trajectory",
    ),
    "log.eval": (
        IMPORTERS / "inspect-ai" / "react-agent.eval",
        "inspect-ai",
        "an inspect-ai eval log",
    ),
    "log.json": (
        IMPORTERS / "inspect-ai" / "chat-log.json",
        "inspect-ai",
        "an inspect-ai eval log",
    ),
    "events.json": (
        IMPORTERS / "openhands" / "function-calling.json",
        "openhands",
        "an OpenHands trajectory",
    ),
    "rollout.jsonl": (IMPORTERS / "codex-rollout-basic.jsonl", "codex", "a Codex session"),
    "session.jsonl": (
        IMPORTERS / "claude-code-fork.jsonl",
        "claude-code",
        "a Claude Code transcript",
    ),
}
