"""Write spec/conformance/save-errors/NNN-*.json: data-only tests of the refusals of a save
(spec/case-format.md section 5, spec/conformance.md 2.11), each with its reason code and the
one-line hint, which every implementation gives byte for byte.

Each test records a thread through the Python ``Thread`` API with a fixed thread id and clock
and saves its second turn with options that make the save refuse; the expected refusal is
what the Python writer gives (``tests/test_conformance_save_errors.py`` runs the files), and
``ts/test/saveErrors.test.ts`` must give the same. Run ``python
tools/make_save_errors_tests.py`` after changing a refusal's hint.
"""

from __future__ import annotations

import base64
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
OUT = ROOT / "spec" / "conformance" / "save-errors"

from threads_cases.core.canonical import canonical_document  # noqa: E402
from threads_cases.core.errors import CaseError  # noqa: E402
from threads_cases.protocol.server import PythonImplementation  # noqa: E402
from threads_cases.reference.agent import BUILTIN_TOOLS, AgentSpec  # noqa: E402
from threads_cases.reference.model import ScriptedModel, text_reply, tool_reply  # noqa: E402
from threads_cases.reference.runtime import Clock  # noqa: E402
from threads_cases.reference.sandbox import FakeSandbox  # noqa: E402
from threads_cases.reference.thread import Thread  # noqa: E402

AGENT = AgentSpec(
    "a", "model-x", "Be brief.", tools=(BUILTIN_TOOLS["read_file"], BUILTIN_TOOLS["write_file"])
)
TOKEN = "ghp_" + "a" * 36


def record(
    second: str = "What is in notes.txt?",
) -> tuple[list[dict[str, Any]], str, dict[str, str]]:
    """A log of two turns (the second reads notes.txt), its fork point (the last event of the
    first turn) and its artifacts (sha256 hex to base64)."""
    t = Thread.create(
        agent=AGENT,
        sandbox=FakeSandbox({"notes.txt": "buy milk\n"}),
        thread_id="save-errors",
        clock=Clock(1_780_000_000_000),
    )
    t.run_turn("hello", ScriptedModel([text_reply("hi")]))
    at = t.events[-1]["event_id"]
    reply = tool_reply(("r1", "read_file", {"path": "notes.txt"}))
    t.run_turn(second, ScriptedModel([reply, text_reply("Buy milk.")]))
    arts = {sha: base64.b64encode(data).decode() for sha, data in t.artifacts.blobs.items()}
    return [json.loads(json.dumps(dict(e))) for e in t.events], at, arts


def must(data: dict[str, Any], kind: str = "tool_result") -> dict[str, Any]:
    return {"must": [{"type": kind, "data": data}], "expect": []}


# (slug, description, changes to the test's defaults)
TESTS: list[tuple[str, str, dict[str, Any]]] = [
    ("name-device", "A case named after a Windows device is refused.", {"name": "CON"}),
    ("name-hidden", "A case name starting with a dot is refused.", {"name": ".c"}),
    ("name-path", "A case name holding a path separator is refused.", {"name": "a/b"}),
    (
        "external-effects-unknown",
        "external_effects other than stub or forbid is refused.",
        {"options": {"external_effects": "allow"}},
    ),
    ("at-empty", "An empty fork point is refused.", {"at": ""}),
    ("at-unknown", "A fork point that is not in the log is refused.", {"at": "nope"}),
    ("at-last-event", "A fork point with no user input after it is refused.", {"at": "LAST"}),
    (
        "turn-cut-short",
        "A turn the log ends in the middle of is refused.",
        {"cut": "tool_called"},
    ),
    (
        "dialect-unknown",
        "An unknown dialect is refused as invalid_request, with the dialect's hint.",
        {"options": {"dialects": ["threads-rb"]}},
    ),
    ("dialects-empty", "An empty list of dialects is refused.", {"options": {"dialects": []}}),
    (
        "secrets-mode-unknown",
        "A secrets mode other than refuse, redact or allow is refused.",
        {"options": {"secrets": "keep"}},
    ),
    (
        "must-cannot-pass",
        "A must matcher the turn does not satisfy is refused.",
        {"options": {"expect": must({"name": "write_file"})}},
    ),
    (
        "matcher-invalid",
        "A matcher of an unknown type is refused.",
        {"options": {"expect": {"must": [{"type": "no_such_event"}], "expect": []}}},
    ),
    (
        "artifact-missing",
        "An artifact the log refers to that the store lacks is refused.",
        {"artifacts": {}},
    ),
    (
        "case-exists",
        "A case that already exists with other files is refused without overwrite.",
        {"existing": True, "options": {"expect": must({"name": "read_file"})}},
    ),
    (
        "secret-refused",
        "A value that looks like a credential is refused.",
        {"second": f"My token is {TOKEN}, what is in notes.txt?"},
    ),
    (
        "secret-left-by-redaction",
        "A credential redaction would leave (in the expectation) is refused, all or nothing.",
        {
            "second": f"My token is {TOKEN}, what is in notes.txt?",
            "options": {
                "secrets": "redact",
                "expect": {
                    "must": [],
                    "expect": [{"type": "user_message", "data": {"content": TOKEN}}],
                },
            },
        },
    ),
    ("name-leading-dash", "A case name starting with '-' is refused.", {"name": "-rf"}),
]


def build(description: str, change: dict[str, Any]) -> dict[str, Any]:
    log, at, arts = record(change.get("second", "What is in notes.txt?"))
    if "cut" in change:
        last = max(i for i, e in enumerate(log) if e["type"] == change["cut"])
        log = log[: last + 1]
    test: dict[str, Any] = {
        "description": description,
        "log": log,
        "at": log[-1]["event_id"] if change.get("at") == "LAST" else change.get("at", at),
        "name": change.get("name", "c"),
        "artifacts": change.get("artifacts", arts),
        "options": change.get("options", {}),
        "existing": change.get("existing", False),
    }
    work = Path(tempfile.mkdtemp(prefix="save-errors-"))
    try:
        got = refusal(test, work)
    finally:
        shutil.rmtree(work)
    if not got:
        raise SystemExit(f"{description}: the save did not refuse")
    return {**test, "error": got}


def refusal(test: dict[str, Any], work: Path) -> dict[str, Any] | None:
    """The ``{code, hint}`` threads-py's own ``save_case`` refuses ``test`` with (after a first
    save with no options when ``existing``), or None when it saves: what each implementation's
    answer is compared with (harness/check/conformance_library.py ``save_errors_test``)."""
    impl = PythonImplementation()
    message = {
        "cmd": "save_case",
        "thread": {"log": test["log"], "artifacts": test["artifacts"]},
        "name": test["name"],
        "at": test["at"],
        "dir": str(work / "cases"),
    }
    if test["existing"]:
        impl.request(message)
    try:
        impl.request({**message, **test["options"]})
    except CaseError as err:
        return {"code": err.code, "hint": err.hint}
    return None


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("*.json"):
        old.unlink()
    for i, (slug, description, change) in enumerate(TESTS, start=1):
        path = OUT / f"{i:03d}-{slug}.json"
        path.write_bytes(canonical_document(build(description, change)))
        print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
