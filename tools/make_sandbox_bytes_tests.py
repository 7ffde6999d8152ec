"""Write spec/conformance/sandbox-bytes/NNN-*.json: data-only tests of sandbox bytes supplied
from a folder (spec/case-format.md 5.9, spec/conformance.md 2.10).

Each test records a thread through the Python ``Thread`` API with a fixed thread id and clock,
then drops every artifact of its sandbox events (``"artifact": null``, no ``artifact_added``),
so the log knows the files by sha256 only. The expected outcome is what the Python writer
saves with ``sandbox_dir=`` the test's folder (``tests/test_conformance_sandbox_bytes.py``
runs the files), and ``ts/test/sandboxBytes.test.ts`` must give the same. Run ``python
tools/make_sandbox_bytes_tests.py`` after changing the rules.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
OUT = ROOT / "spec" / "conformance" / "sandbox-bytes"

from test_conformance_sandbox_bytes import run_test  # noqa: E402

from threads_cases.core.canonical import canonical_document  # noqa: E402
from threads_cases.reference.agent import BUILTIN_TOOLS, AgentSpec  # noqa: E402
from threads_cases.reference.model import ScriptedModel, text_reply, tool_reply  # noqa: E402
from threads_cases.reference.runtime import Clock  # noqa: E402
from threads_cases.reference.sandbox import FakeSandbox  # noqa: E402
from threads_cases.reference.thread import Thread  # noqa: E402

AGENT = AgentSpec(
    "a", "model-x", "Be brief.", tools=(BUILTIN_TOOLS["read_file"], BUILTIN_TOOLS["write_file"])
)
TODO = "- ship it\n"
NOTES = "buy milk\n"
TOKEN = "token: ghp_" + "a" * 36 + "\n"
BINARY = b"\x00\xffbinary\r\n"
FILES: dict[str, str | bytes] = {
    "todo.md": TODO,
    "notes.txt": NOTES,
    "later.txt": "later\n",
    "creds.txt": TOKEN,
    "bin.dat": BINARY,
    "1": "one\n",
    "-a": "dash\n",
}


def read(path: str) -> tuple[str, str, dict[str, Any]]:
    return (f"r-{path}", "read_file", {"path": path})


def write(path: str, content: str) -> tuple[str, str, dict[str, Any]]:
    return (f"w-{path}", "write_file", {"path": path, "content": content})


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def record(
    turns: list[list[Any]], saved: int = 1, rename: dict[str, str] | None = None
) -> tuple[list[dict[str, Any]], str]:
    """A hash-only log of ``turns`` (each a list of tool-call replies, each reply a list of
    calls), and the fork point: the last event of turn ``saved - 1``. ``rename`` gives some
    sandbox events another path, one a log file could not hold (the API takes events as
    given)."""
    t = Thread.create(
        agent=AGENT,
        sandbox=FakeSandbox(FILES),
        thread_id="sandbox-bytes",
        clock=Clock(1_780_000_000_000),
    )
    at = ""
    for i, replies in enumerate(turns):
        if i == saved:
            at = t.events[-1]["event_id"]
        model = ScriptedModel([tool_reply(*calls) for calls in replies] + [text_reply("ok")])
        t.run_turn(f"turn {i}", model)
    out: list[dict[str, Any]] = []
    for ev in t.events:
        if ev["type"] == "artifact_added":
            continue
        ev = json.loads(json.dumps(ev))
        if ev["type"] in ("sandbox_read", "sandbox_wrote"):
            ev["data"]["artifact"] = None
            ev["data"]["path"] = (rename or {}).get(ev["data"]["path"], ev["data"]["path"])
        ev["seq"] = len(out)
        out.append(ev)
    return out, at


WARM = [[read("todo.md")]]  # turn 0: the prefix state holds todo.md by hash


def text(value: str) -> dict[str, str]:
    return {"text": value}


# (slug, description, turns, folder, extra keys)
TESTS: list[tuple[str, str, list[Any], dict[str, Any] | None, dict[str, Any]]] = [
    (
        "prefix-file-supplied",
        "A file of the prefix state known by hash only takes its bytes from the folder.",
        [WARM, []],
        {"todo.md": text(TODO)},
        {},
    ),
    (
        "turn-read-supplied",
        "A file the turn reads before writing it takes its bytes from the folder.",
        [WARM, [[read("notes.txt")]]],
        {"notes.txt": text(NOTES), "todo.md": text(TODO)},
        {},
    ),
    (
        "read-after-write-not-asked",
        "A file the turn reads after writing it is not asked for: wrong bytes there are not read.",
        [WARM, [[write("out.txt", "new\n")], [read("out.txt")]]],
        {"out.txt": text("stale\n")},
        {},
    ),
    (
        "absent-file-stays-hash-only",
        "A file absent from the folder stays hash-only, and the save goes on.",
        [WARM, [[read("notes.txt")]]],
        {"todo.md": text(TODO)},
        {},
    ),
    (
        "wrong-bytes-refused",
        "Bytes whose sha256 is not the recorded one are refused with invalid_request naming "
        "the path and both hashes.",
        [WARM, [[read("notes.txt")]]],
        {"notes.txt": text("buy bread\n")},
        {},
    ),
    (
        "symlink-outside-ignored",
        "A file that resolves outside the folder through a symlink (../) is not read: it stays "
        "hash-only.",
        [WARM, [[read("notes.txt")]]],
        {"notes.txt": {"symlink": "../notes.txt"}},
        {"outside": {"notes.txt": text(NOTES)}},
    ),
    (
        "symlink-inside-followed",
        "A symlink resolving to a file inside the folder is followed.",
        [WARM, [[read("notes.txt")]]],
        {"notes.txt": {"symlink": "real/notes.txt"}, "real/notes.txt": text(NOTES)},
        {},
    ),
    (
        "bytes-in-store-not-read",
        "A file whose bytes the artifact store holds is not read from the folder.",
        [WARM, [[read("notes.txt")]]],
        {"notes.txt": text("buy bread\n"), "todo.md": text("- other\n")},
        {
            "artifacts": {
                sha(NOTES): base64.b64encode(NOTES.encode()).decode(),
                sha(TODO): base64.b64encode(TODO.encode()).decode(),
            }
        },
    ),
    (
        "stops-at-turn-end",
        "Files read after the saved turn ends are not asked for.",
        [WARM, [], [[read("later.txt")]]],
        {"later.txt": text("changed\n")},
        {},
    ),
    (
        "prefix-files-in-code-point-order",
        "The prefix state's files are taken by path in code point order: the first refused "
        "is the first by path, not the first recorded.",
        [[[read("1")], [read("-a")]], []],
        {"1": text("wrong\n"), "-a": text("wrong\n")},
        {},
    ),
    (
        "supplied-bytes-are-redacted",
        "Bytes from the folder are supplied before secrets are redacted, so a redacting save "
        "stores them redacted.",
        [WARM, [[read("creds.txt")]]],
        {"creds.txt": text(TOKEN), "todo.md": text(TODO)},
        {"secrets": "redact"},
    ),
    (
        "missing-folder-refused",
        "A folder that does not exist is refused with invalid_request.",
        [WARM, []],
        None,
        {},
    ),
    (
        "binary-file-supplied",
        "A file's bytes are taken as they are, not as text.",
        [WARM, [[read("bin.dat")]]],
        {"bin.dat": {"base64": base64.b64encode(BINARY).decode()}},
        {},
    ),
    (
        "dotdot-path-refused",
        "A recorded path leaving the sandbox (../) is refused with invalid_request before "
        "anything is read, not looked up beside the folder.",
        [WARM, [[read("notes.txt")]]],
        {},
        {"rename": {"notes.txt": "../notes.txt"}, "outside": {"notes.txt": text(NOTES)}},
    ),
    (
        "device-name-path-refused",
        "A recorded path naming a Windows device is refused with invalid_request.",
        [WARM, [[read("notes.txt")]]],
        {},
        {"rename": {"notes.txt": "aux.txt"}},
    ),
    (
        "file-not-folder-refused",
        "A --sandbox path naming a file, not a folder, is refused with invalid_request saying "
        "so (not that it does not exist).",
        [WARM, [[read("notes.txt")]]],
        None,
        {"outside": {"box": text(NOTES)}},
    ),
]


def build(slug: str, description: str, turns: list[Any], folder: Any, extra: dict[str, Any]):
    log, at = record(turns, rename=extra.get("rename"))
    test: dict[str, Any] = {
        "description": description,
        "log": log,
        "at": at,
        "artifacts": extra.get("artifacts", {}),
        "secrets": extra.get("secrets", "refuse"),
        "folder": folder,
        "outside": extra.get("outside", {}),
    }
    work = Path(tempfile.mkdtemp(prefix="sandbox-bytes-"))
    try:
        got = run_test(test, work)
    finally:
        shutil.rmtree(work)
    if "error" in got:
        message = got["error"]["message"]
        # the message starts with the folder's temporary path: keep what follows it
        end = message.split("/box", 1)[1].lstrip(":") if "/box" in message else message
        error = got["error"]
        got = {"error": {"code": error["code"], "message_end": end.strip(), "hint": error["hint"]}}
    return {**test, **got}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("*.json"):
        old.unlink()
    for i, (slug, description, turns, folder, extra) in enumerate(TESTS, start=1):
        path = OUT / f"{i:03d}-{slug}.json"
        path.write_bytes(canonical_document(build(slug, description, turns, folder, extra)))
        print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
