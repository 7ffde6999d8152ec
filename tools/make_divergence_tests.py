"""Write spec/conformance/divergence/: data-only tests of the first divergence of a drifted
run (spec/reports.md 7.4, spec/conformance.md 2.8).

Each test is one real replay of a shipped conformance case on ``threads-py`` (its canonical
prefix, its replayed turn and the replayed request hashes) against the case's recorded
replies, some of whose request records are changed here as an agent change would change them
(a system prompt, a tool description, a tool result's text, a message more or less...),
with ``request_sha256`` recomputed for each changed request. The expected ``divergence`` is
what the Python implementation computes; ``ts/test/divergence.test.ts`` must give the same
bytes. Run ``python tools/make_divergence_tests.py`` after changing the rules.
"""

from __future__ import annotations

import copy
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from threads_cases.case.loader import open_case  # noqa: E402
from threads_cases.case.requests import delta_records, expand_records  # noqa: E402
from threads_cases.core.canonical import canonical_document  # noqa: E402
from threads_cases.core.dialects import get_dialect  # noqa: E402
from threads_cases.core.request import request_sha256  # noqa: E402
from threads_cases.harness.check.checks import replay  # noqa: E402
from threads_cases.harness.check.divergence import (  # noqa: E402
    replayed_requests,
    request_divergence,
)
from threads_cases.protocol.server import PythonImplementation  # noqa: E402

CASES = ROOT / "spec" / "conformance" / "cases"
OUT = ROOT / "spec" / "conformance" / "divergence"

Requests = list[dict[str, Any]]
Edit = Callable[[Requests], None]


def on(call: int, change: Callable[[dict[str, Any]], None]) -> Edit:
    def edit(requests: Requests) -> None:
        change(requests[call])

    return edit


def put(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """Set the value at a slash path (list indexes as digits) of a request."""

    def change(req: dict[str, Any]) -> None:
        *parts, last = path.strip("/").split("/")
        target: Any = req
        for p in parts:
            target = target[int(p)] if isinstance(target, list) else target[p]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value

    return change


def drop_record(call: int) -> Callable[[list[dict[str, Any]]], None]:
    def change(replies: list[dict[str, Any]]) -> None:
        replies[call].pop("request")
        replies[call]["request_sha256"] = "f" * 64

    return change


def wrong_hash(call: int) -> Callable[[list[dict[str, Any]]], None]:
    def change(replies: list[dict[str, Any]]) -> None:
        replies[call]["request_sha256"] = "0" * 64

    return change


TERSE = "You are a terse assistant."
SYSTEM = "You are a careful assistant. Use tools when they help."
LONG = "Read a UTF-8 text file from the sandbox. " * 5
SMILES = "\U0001f642" * 70

#: slug -> (description, base case, request edits, reply edits)
TESTS: list[tuple[str, str, str, list[Edit], list[Callable[[list[dict[str, Any]]], None]]]] = [
    ("equal", "An unchanged replay has no divergence.", "reads-notes", [], []),
    (
        "system-prompt",
        "A changed system prompt diverges at /system of model call 0, both values whole.",
        "reads-notes",
        [
            on(0, put("/system", "You are a terse assistant.")),
            on(1, put("/system", "You are a terse assistant.")),
        ],
        [],
    ),
    (
        "system-prompt-extra-line",
        "A system prompt that lost a line names that line: line 2, recorded text, replayed absent.",
        "reads-notes",
        [on(0, put("/system", SYSTEM + "\nNever guess."))],
        [],
    ),
    (
        "tool-description",
        "A changed tool description diverges at /tools/0/description.",
        "reads-notes",
        [on(0, put("/tools/0/description", "Read a file."))],
        [],
    ),
    (
        "sandbox-file",
        "A sandbox file read with other bytes diverges at the tool result's text of model call 1, "
        "line 1.",
        "reads-notes",
        [on(1, put("/messages/2/content/0/content", "buy bread\ncall Ana\n"))],
        [],
    ),
    (
        "tool-result-text",
        "An external tool's result with another text diverges at that tool_result's content.",
        "weather-stub",
        [on(1, put("/messages/2/content/0/content", "Rainy, 9 C"))],
        [],
    ),
    (
        "extra-message-in-replay",
        "A replay with a message the recording lacks: the pointer is its index, recorded absent.",
        "reads-notes",
        [on(1, lambda r: r["messages"].pop())],
        [],
    ),
    (
        "missing-message-in-replay",
        "A recording with a message the replay lacks: the pointer is its index, replayed absent.",
        "reads-notes",
        [on(1, lambda r: r["messages"].append({"role": "user", "content": "and eggs"}))],
        [],
    ),
    (
        "extra-tool",
        "A tool the replay no longer offers diverges at /tools/<n> with replayed absent.",
        "reads-notes",
        [on(0, lambda r: r["tools"].append(copy.deepcopy(r["tools"][0]) | {"name": "old_tool"}))],
        [],
    ),
    (
        "model-name",
        "A changed model name diverges at /model.",
        "reads-notes",
        [on(0, put("/model", "model-x-0"))],
        [],
    ),
    (
        "non-bmp-text",
        "Text outside the Basic Multilingual Plane is compared and shown whole in JSON.",
        "reads-notes",
        [on(0, put("/messages/0/content", "What is on my list? \U0001f642\U0001f4dd"))],
        [],
    ),
    (
        "non-bmp-shortened",
        "A long non-BMP value is shortened by code points (57 and ...), never inside a pair.",
        "reads-notes",
        [on(0, put("/system", SMILES))],
        [],
    ),
    (
        "long-value-shortened",
        "A long value is shortened to 60 characters in the summary and kept whole in the record.",
        "reads-notes",
        [on(0, put("/tools/0/description", LONG))],
        [],
    ),
    (
        "key-escaping",
        "A key holding / and ~ is escaped in the pointer as ~1 and ~0.",
        "reads-notes",
        [on(0, lambda r: r["tools"][0]["input_schema"]["properties"].update({"a~b/c": {}}))],
        [],
    ),
    (
        "utf16-key-order",
        "Keys are walked in UTF-16 code-unit order (the order of canonical JSON): a non-BMP key "
        "comes before U+FF61.",
        "reads-notes",
        [on(0, lambda r: r["tools"][0].update({"\uff61": 1, "\U0001f600": 2}))],
        [],
    ),
    (
        "type-change",
        "A value whose type changed (a number recorded, a string replayed) diverges at it.",
        "reads-notes",
        [on(0, put("/tools/0/input_schema/type", 7))],
        [],
    ),
    (
        "no-request-record",
        "A reply without a request record (an older case) diverges at /request_sha256 with a note.",
        "reads-notes",
        [],
        [drop_record(0)],
    ),
    (
        "equal-requests-other-hash",
        "Equal requests under another recorded hash diverge at /request_sha256 with a note.",
        "reads-notes",
        [],
        [wrong_hash(1)],
    ),
]


def build(
    base: str, edits: list[Edit], reply_edits: list[Callable[[list[dict[str, Any]]], None]]
) -> dict[str, Any]:
    case = open_case(CASES / base)
    impl = PythonImplementation()
    try:
        out = replay(case, impl, get_dialect(impl.dialect), None)
    finally:
        impl.close()
    prefix = [dict(e) for e in case.logs[impl.dialect]]
    replies = [
        {"request": r["request"], "request_sha256": r["request_sha256"]}
        for r in case.read("model.json")["replies"]
    ]
    requests: Requests = copy.deepcopy([r for r in expand_records(replies) if r is not None])
    before = [request_sha256(r) for r in requests]
    for edit in edits:
        edit(requests)
    for reply, req, record, old in zip(
        replies, requests, delta_records(requests), before, strict=True
    ):
        reply["request"] = record
        new = request_sha256(req)
        if new != old:
            reply["request_sha256"] = new
    for change in reply_edits:
        change(replies)
    return {
        "prefix": prefix,
        "events": out["events"],
        "requests": list(out["requests"]),
        "replies": replies,
    }


def expected(test: dict[str, Any]) -> dict[str, Any] | None:
    hit = request_divergence(
        expand_records(test["replies"]),
        [r["request_sha256"] for r in test["replies"]],
        replayed_requests(test["prefix"], test["events"]),
        test["requests"],
        test["events"],
    )
    return None if hit is None else hit.to_json()


def main() -> int:
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    for n, (slug, description, base, edits, reply_edits) in enumerate(TESTS, 1):
        test = {"description": description, **build(base, edits, reply_edits)}
        test["divergence"] = expected(test)
        if (test["divergence"] is None) != (slug == "equal"):
            print(f"{slug}: unexpected divergence {test['divergence']}", file=sys.stderr)
            return 1
        (OUT / f"{n:03d}-{slug}.json").write_bytes(canonical_document(test))
    print(f"wrote {len(TESTS)} tests to {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
