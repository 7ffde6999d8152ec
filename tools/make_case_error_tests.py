"""Author spec/conformance/case-errors/: broken case directories and the one refusal every
implementation's case loader gives for each (spec/case-format.md section 8,
spec/conformance.md 2.7).

Each test starts from a committed conformance case (``base``), replaces or deletes some of
its files, and says which problem opening it must give first: ``{code, file, line, pointer}``
(``file`` relative to the case directory, ``""`` for the directory itself; some tests also
pin the ``message`` and ``hint``), or ``null`` when the case still opens. A file is replaced
by text, deleted (``null``), or made a folder (``{"kind": "folder"}``) or a symlink
(``{"kind": "symlink", "target": ...}``). The expected answers below are written by hand;
the script refuses to write a test the Python loader disagrees with. Run
``python tools/make_case_error_tests.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from threads_cases.core.canonical import canonical_document, canonical_line  # noqa: E402
from threads_cases.core.errors import CaseError  # noqa: E402

CASES = ROOT / "spec" / "conformance" / "cases"
OUT = ROOT / "spec" / "conformance" / "case-errors"
BASE = "hash-only-unread"  # 7 events, an artifact, a sandbox read
LOG = "log.threads-py.jsonl"
TS_LOG = "log.threads-ts.jsonl"

Files = dict[str, "str | dict[str, str] | None"]


def text(base: str, rel: str) -> str:
    return (CASES / base / rel).read_text(encoding="utf-8")


def doc(base: str, rel: str) -> Any:
    return json.loads(text(base, rel))


def put(value: Any) -> str:
    return canonical_document(value).decode("utf-8")


def meta(**changes: Any) -> Files:
    m = doc(BASE, "case.json")
    m.update(changes)
    return {"case.json": put(m)}


def format_1(**changes: Any) -> Files:
    """The base case.json as format 1 wrote it (``implementations``, case-format.md 1.3)."""
    m = doc(BASE, "case.json")
    m["implementations"] = m.pop("dialects")
    m["format"] = 1
    m.update(changes)
    return {"case.json": put(m)}


def log_lines(rel: str = LOG) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text(BASE, rel).splitlines()]


def log(edit: Callable[[list[dict[str, Any]]], Any], rel: str = LOG) -> Files:
    events = log_lines(rel)
    edit(events)
    return {rel: "".join(canonical_line(e).decode("utf-8") + "\n" for e in events)}


def err(
    code: str,
    file: str,
    line: int | None = None,
    pointer: str | None = None,
    *,
    message: str | None = None,
    hint: str | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {"code": code, "file": file, "line": line, "pointer": pointer}
    if message is not None:  # pinned too: both languages say the same words
        out.update(message=message, hint=hint)
    return out


#: What both loaders say under a case.json that is there but not a regular file.
NOT_A_FILE_HINT = (
    "case.json must be a regular file holding the case's metadata (spec/case-format.md): "
    "replace it with one"
)


def _set(i: int, key: str, value: Any) -> Callable[[list[dict[str, Any]]], None]:
    def edit(events: list[dict[str, Any]]) -> None:
        target = events[i]
        *path, last = key.split("/")
        for k in path:
            target = target[k]
        target[last] = value

    return edit


def _both(*edits: Callable[[list[dict[str, Any]]], None]) -> Callable[[list[dict[str, Any]]], None]:
    def edit(events: list[dict[str, Any]]) -> None:
        for e in edits:
            e(events)

    return edit


def _sandbox(reads: list[dict[str, Any]]) -> Files:
    return {"sandbox.json": put({"format": 1, "reads": reads})}


ART = "44d53b2c89ea1ab7716fe80b72b42f423e35249685fdcbd5d006a6283f61f9bf"
GOOD_READ = {"artifact": f"sha256:{ART}", "path": "notes.txt", "sha256": ART}
MISSING = "0" * 64

TESTS: list[tuple[str, str, Files, dict[str, Any] | None]] = [
    ("valid-case-opens", "A committed conformance case opens without a problem.", {}, None),
    (
        "unknown-file-stops",
        "A file the case does not name makes the case invalid: run refuses it as validate and "
        "fmt do.",
        {"notes.md": "left here by hand\n"},
        {"code": "case_invalid", "file": "notes.md", "line": None, "pointer": None},
    ),
    (
        "stale-fingerprint-does-not-stop",
        "A stale fingerprint is a warning: the case still opens.",
        meta(fingerprint="sha256:" + "1" * 64),
        None,
    ),
    (
        "case-json-missing",
        "A directory without case.json is not a case directory, reported at the directory.",
        {"case.json": None},
        err(
            "case_invalid",
            "",
            message="not a case directory: case.json is missing",
            hint="run `threads-cases validate CASE` to see every problem of the case",
        ),
    ),
    (
        "case-json-empty",
        "An empty case.json is refused at its line 1.",
        {"case.json": "\n"},
        err("case_invalid", "case.json", 1),
    ),
    (
        "case-json-not-json",
        "A case.json that is not strict JSON is refused with its line.",
        {"case.json": '{\n  "format": 1\n  "name": "x"\n}\n'},
        err("case_invalid", "case.json", 3),
    ),
    (
        "case-json-duplicate-key",
        "A case.json holding the same key twice is refused at that key, with its line.",
        {"case.json": '{\n  "format": 1,\n  "format": 1\n}\n'},
        err("case_invalid", "case.json", 3, "/format"),
    ),
    (
        "format-unsupported",
        "A case of another format is format_unsupported at /format, before its schema is checked.",
        {"case.json": put({"format": 3})},
        err("format_unsupported", "case.json", None, "/format"),
    ),
    (
        "case-json-schema",
        "A case.json whose input is a number breaks case.schema.json at /input.",
        meta(input=5),
        err("case_invalid", "case.json", None, "/input"),
    ),
    (
        "name-device",
        "A case named CON (a Windows device name) is refused at /name.",
        meta(name="CON"),
        err("case_invalid", "case.json", None, "/name"),
    ),
    (
        "name-device-with-extension",
        "A case named LPT1.txt is a device name with an extension, refused at /name.",
        meta(name="LPT1.txt"),
        err("case_invalid", "case.json", None, "/name"),
    ),
    (
        "name-device-lower-case",
        "A device name in lower case (nul) is refused at /name.",
        meta(name="nul"),
        err("case_invalid", "case.json", None, "/name"),
    ),
    (
        "name-dot-dot",
        "A case named .. is not a directory name, refused at /name.",
        meta(name=".."),
        err("case_invalid", "case.json", None, "/name"),
    ),
    (
        "name-hidden",
        "A case name starting with a dot is refused at /name.",
        meta(name=".hidden"),
        err("case_invalid", "case.json", None, "/name"),
    ),
    (
        "name-bad-character",
        "A case name with a space breaks the name pattern, refused at /name.",
        meta(name="a b"),
        err("case_invalid", "case.json", None, "/name"),
    ),
    (
        "dialect-unknown",
        "A listed dialect that is unknown is dialect_unknown at its index.",
        meta(dialects=["threads-py", "threads-rs"]),
        err("dialect_unknown", "case.json", None, "/dialects/1"),
    ),
    (
        "model-json-missing",
        "A case without model.json is refused naming the missing file.",
        {"model.json": None},
        err("case_invalid", "model.json"),
    ),
    (
        "expected-missing",
        "A case without the expected state of a listed implementation is refused naming that file.",
        {"expected.threads-ts.json": None},
        err("case_invalid", "expected.threads-ts.json"),
    ),
    (
        "log-missing",
        "A case without the log of a listed implementation is refused naming that file.",
        {LOG: None},
        err("case_invalid", LOG),
    ),
    (
        "missing-files-in-name-order",
        "With several files missing, the first in byte order of the names is reported.",
        {"stubs.json": None, "model.json": None},
        err("case_invalid", "model.json"),
    ),
    (
        "artifact-bytes-tampered",
        "An artifact whose bytes do not hash to its name is refused at that file.",
        {f"artifacts/{ART}": "tampered\n"},
        err("case_invalid", f"artifacts/{ART}"),
    ),
    (
        "model-json-not-json",
        "A model.json that is not strict JSON is refused with its line.",
        {"model.json": "[1, 2,]\n"},
        err("case_invalid", "model.json", 1),
    ),
    (
        "model-json-schema",
        "A model.json whose replies are not a list breaks model.schema.json at /replies.",
        {"model.json": put({"format": 1, "replies": {}})},
        err("case_invalid", "model.json", None, "/replies"),
    ),
    (
        "stubs-json-schema",
        "A stubs.json of another format breaks stubs.schema.json at /format.",
        {"stubs.json": put({"calls": [], "format": 2})},
        err("case_invalid", "stubs.json", None, "/format"),
    ),
    (
        "sandbox-read-path-escapes",
        "A recorded read whose path climbs out of the sandbox is refused at its path.",
        _sandbox([{**GOOD_READ, "path": "../notes.txt"}]),
        err("case_invalid", "sandbox.json", None, "/reads/0/path"),
    ),
    (
        "sandbox-read-path-device",
        "A recorded read of a Windows device name (aux.txt) is refused at its path.",
        _sandbox([GOOD_READ, {**GOOD_READ, "path": "docs/aux.txt"}]),
        err("case_invalid", "sandbox.json", None, "/reads/1/path"),
    ),
    (
        "sandbox-read-artifact-missing",
        "A recorded read whose artifact is not in artifacts/ is refused at its artifact.",
        _sandbox([{**GOOD_READ, "artifact": f"sha256:{MISSING}", "sha256": MISSING}]),
        err("case_invalid", "sandbox.json", None, "/reads/0/artifact"),
    ),
    (
        "expected-not-json",
        "An expected state that is not strict JSON is refused with its line.",
        {"expected.threads-py.json": '{"a": [1, 2,]}\n'},
        err("case_invalid", "expected.threads-py.json", 1),
    ),
    (
        "log-line-not-json",
        "A log line that is not strict JSON is log_invalid at that line.",
        {LOG: text(BASE, LOG).replace('"Hello!"', '"Hello!",', 1)},
        err("log_invalid", LOG, 2),
    ),
    (
        "log-seq-gap",
        "A log whose seq jumps is log_invalid at the line of the gap, at /seq.",
        log(_set(3, "seq", 4)),
        err("log_invalid", LOG, 4, "/seq"),
    ),
    (
        "log-duplicate-event-id",
        "A log that repeats an event_id is log_invalid at the repeating line, at /event_id.",
        log(_set(2, "event_id", "main.1")),
        err("log_invalid", LOG, 3, "/event_id"),
    ),
    (
        "log-duplicate-before-reducer-refusal",
        "A repeated event_id is reported at its own line even when a later line breaks a reducer "
        "rule.",
        log(_both(_set(2, "event_id", "main.1"), _set(4, "data/turn_id", "turn-9"))),
        err("log_invalid", LOG, 3, "/event_id"),
    ),
    (
        "log-duplicate-before-seq-gap",
        "A repeated event_id is reported at its own line even when a later line has a seq gap.",
        log(_both(_set(1, "event_id", "main.0"), _set(5, "seq", 9))),
        err("log_invalid", LOG, 2, "/event_id"),
    ),
    (
        "log-reducer-rule",
        "A reply for another turn than the open one breaks a reducer rule: log_invalid at its "
        "line.",
        log(_set(4, "data/turn_id", "turn-9")),
        err("log_invalid", LOG, 5, "/data/turn_id"),
    ),
    (
        "log-timestamp-not-a-date",
        "A timestamp of February 30th is log_invalid at its line.",
        log(_set(1, "ts", "2026-02-30T20:00:00.007Z")),
        err("log_invalid", LOG, 2, "/ts"),
    ),
    (
        "log-timestamp-year-zero",
        "A timestamp in year 0000 is outside years 0001-9999: log_invalid at its line.",
        log(_set(0, "ts", "0000-12-31T23:59:59.999Z")),
        err("log_invalid", LOG, 1, "/ts"),
    ),
    (
        "log-thread-id-changes",
        "A log whose thread_id changes is log_invalid at that line, at /thread_id.",
        log(_set(2, "thread_id", "another")),
        err("log_invalid", LOG, 3, "/thread_id"),
    ),
    (
        "fork-point-not-last",
        "A log that goes on after the fork point is refused at the fork point's line.",
        meta(at="main.4"),
        err("case_invalid", LOG, 5),
    ),
    (
        "fork-point-not-in-log",
        "A fork point that is not an event of the log is refused at the log.",
        meta(at="main.99"),
        err("case_invalid", LOG),
    ),
    (
        "log-artifact-missing",
        "A logged read whose artifact was never added breaks a reducer rule: log_invalid at its "
        "line and /data/artifact.",
        log(_set(6, "data/artifact", f"sha256:{MISSING}")),
        err("log_invalid", LOG, 7, "/data/artifact"),
    ),
    (
        "second-log-checked-in-its-dialect",
        "The threads-ts log is read in its own dialect: a snake_case envelope there is "
        "log_invalid.",
        {TS_LOG: text(BASE, LOG)},
        err("log_invalid", TS_LOG, 1, "/actor_kind"),
    ),
    (
        "format-1-case-opens",
        "A format-1 case.json (its dialects under implementations) still opens, read as format 2.",
        format_1(),
        None,
    ),
    (
        "format-1-dialect-unknown",
        "In a format-1 case.json an unknown dialect is dialect_unknown at /implementations/<i>, "
        "the key as written.",
        format_1(implementations=["threads-py", "threads-rs"]),
        err("dialect_unknown", "case.json", None, "/implementations/1"),
    ),
    (
        "format-1-with-dialects-key",
        "A format-1 case.json that spells the list dialects is refused at /dialects.",
        format_1(dialects=["threads-py"]),
        err("case_invalid", "case.json", None, "/dialects"),
    ),
    (
        "format-2-without-dialects",
        "A format-2 case.json still listing implementations breaks case.schema.json.",
        format_1(format=2),
        err("case_invalid", "case.json", None, ""),
    ),
    (
        "case-json-integer-too-large",
        "An integer case.json cannot hold is refused at its key (not at /), with its line.",
        {"case.json": '{\n  "name": "x",\n  "format": 123456789012345678901234\n}\n'},
        err("case_invalid", "case.json", 3, "/format"),
    ),
    (
        "case-json-folder",
        "A case.json that is a folder is not missing: the loader says it is a folder, at the "
        "directory, with the same code.",
        {"case.json": {"kind": "folder"}},
        err(
            "case_invalid",
            "",
            message="case.json is a folder, not a file",
            hint=NOT_A_FILE_HINT,
        ),
    ),
    (
        "case-json-symlink-loop",
        "A case.json that is a symlink to itself (a loop) is a symlink, at the directory.",
        {"case.json": {"kind": "symlink", "target": "case.json"}},
        err(
            "case_invalid",
            "",
            message="case.json is a symlink, not a file",
            hint=NOT_A_FILE_HINT,
        ),
    ),
    (
        "upstream-threads-case",
        "A case.json of the upstream threads runtime's own conformance suite (kind, family, "
        "clock; no format) is recognised and refused with one line, never a schema problem per "
        "key.",
        {
            "case.json": put(
                {
                    "clock": {"start": "2026-01-01T00:00:00.000Z", "step_ms": 1},
                    "description": "an invented upstream conformance case",
                    "family": "tool-calls",
                    "kind": "replay",
                    "name": "weather-tool",
                }
            ),
            "events.jsonl": '{"seq": 0}\n',
        },
        err(
            "case_invalid",
            "case.json",
            message="this is a conformance case of the upstream threads runtime (its case.json "
            "has kind, family and clock), not a threads-cases case",
            hint="run it with the threads runtime's own conformance suite; threads-cases runs "
            "the cases `threads-cases save` writes (spec/case-format.md 8.1)",
        ),
    ),
    (
        "fingerprint-missing-does-not-stop",
        "A case.json without a fingerprint is a stale fingerprint, a warning: the case still "
        "opens, and `fmt` adds it (case-format.md 4.3).",
        {"case.json": put({k: v for k, v in doc(BASE, "case.json").items() if k != "fingerprint"})},
        None,
    ),
    (
        "name-leading-dash",
        "A case name starting with '-' (read as an option by a shell's commands) is refused at "
        "/name.",
        meta(name="-rf"),
        err("case_invalid", "case.json", None, "/name"),
    ),
]


#: tests whose broken log is one dialect's: a replay by that dialect's implementation is refused
#: with the test's code, by the other dialect's replayed (spec/replay.md 2.1 step 1)
REPLAY_REFUSED_IN = {
    "log-line-not-json": ["threads-py"],
    "second-log-checked-in-its-dialect": ["threads-ts"],
}


def case_dir(root: Path, files: Files) -> Path:
    path = root / BASE
    shutil.copytree(CASES / BASE, path)
    for rel, body in files.items():
        if isinstance(body, dict):  # not a file: a folder or a symlink in its place
            (path / rel).unlink(missing_ok=True)
            if body["kind"] == "folder":
                (path / rel).mkdir()
            else:
                os.symlink(body["target"], path / rel)
        elif body is None:
            (path / rel).unlink()
        else:
            (path / rel).write_bytes(body.encode("utf-8"))
    return path


def python_answer(files: Files) -> dict[str, Any] | None:
    from threads_cases.case.loader import open_case

    with tempfile.TemporaryDirectory() as tmp:
        path = case_dir(Path(tmp), files)
        try:
            open_case(path)
        except CaseError as e:
            loc = e.location
            rel = Path(loc.file).relative_to(path).as_posix() if loc.file else ""
            got = err(e.code, "" if rel == "." else rel, loc.line, loc.pointer)
            return {**got, "message": e.message, "hint": e.hint}
    return None


def main() -> int:
    bad = write_tests(OUT)
    print(f"wrote {len(TESTS) - bad} tests to {OUT.relative_to(ROOT)}")
    return 1 if bad else 0


def write_tests(out: Path) -> int:
    """Write every test of ``TESTS`` into ``out`` (emptied first); returns how many the Python
    loader disagrees with (each named on stderr and not written). tests/test_case_error_tests
    compares a fresh ``out`` with the committed folder."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    bad = 0
    for n, (slug, description, files, expected) in enumerate(TESTS, 1):
        got = python_answer(files)
        if got is not None and expected is not None:
            got = {k: v for k, v in got.items() if k in expected}  # message, hint: if pinned
        if got != expected:
            print(f"{slug}: expected {expected}, the Python loader gives {got}", file=sys.stderr)
            bad += 1
            continue
        test = {"description": description, "base": BASE, "files": files, "error": expected}
        if slug in REPLAY_REFUSED_IN:
            test["replay_refused_in"] = REPLAY_REFUSED_IN[slug]
        (out / f"{n:03d}-{slug}.json").write_bytes(canonical_document(test))
    return bad


if __name__ == "__main__":
    raise SystemExit(main())
