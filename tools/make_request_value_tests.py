"""Write spec/conformance/driver-requests/values.json and the reduce/ and canonical/ tests of
issue 35 (the rules of spec/driver-protocol.md 1.3 and 3.2b, strict-json.md 2.4 and 2.7,
thread-log.md 5.1b): every value here is written by hand, the expected answers are the rules'.

Run: python tools/make_request_value_tests.py (rewrites the files; the test suites check that
each file is a canonical document)."""

from __future__ import annotations

import json
from pathlib import Path

from threads_cases.core.canonical import canonical_document, canonical_line

ROOT = Path(__file__).resolve().parent.parent / "spec" / "conformance"
SHA = "0" * 64
STARTED = json.loads((ROOT / "reduce" / "001-thread-started-only.json").read_text())["log"][0]


def x_event(data_json: str) -> str:
    """Line 2 of a log: an x_ event whose data is ``data_json`` (JSON text, as written)."""
    head = canonical_line(
        {
            "actor_kind": "system",
            "branch_id": "main",
            "critical": False,
            "data": {"v": 0},
            "epoch": 0,
            "event_id": "e1",
            "seq": 1,
            "thread_id": STARTED["thread_id"],
            "ts": "2026-11-29T20:05:00.001Z",
            "type": "x_v",
        }
    ).decode()
    return head.replace('{"v":0}', data_json)


def log_text(data_json: str) -> str:
    return canonical_line(STARTED).decode() + "\n" + x_event(data_json) + "\n"


def t(description: str, code: str, pointer: str, **kw: object) -> dict[str, object]:
    return {"description": description, "code": code, "pointer": pointer, **kw}


WRITE = {
    "at": "e0",
    "cmd": "write_case",
    "expect": {"expect": [], "must": []},
    "external_effects": "stub",
    "id": 1,
    "name": "n",
}
REQUESTS = [
    t(
        "a request without an id is not carried out: invalid_request at the root, "
        "answered with id null",
        "invalid_request",
        "",
        request={"cmd": "hello", "protocol": 1},
    ),
    t(
        "an id written 1.0 is the integer 1, and the answer carries it as 1",
        "invalid_request",
        "/cmd",
        request_text='{"cmd":"nope","id":1.0}',
        answer_id=1,
    ),
    t(
        "a reduce with two log sources is refused at the root, whatever the sources",
        "invalid_request",
        "",
        request={"cmd": "reduce", "id": 1, "log": [], "log_text": ""},
    ),
    t(
        "a reduce with no log source is refused at the root",
        "invalid_request",
        "",
        request={"cmd": "reduce", "id": 1},
    ),
    t(
        "a canonicalize with no input is refused at the root",
        "invalid_request",
        "",
        request={"cmd": "canonicalize", "id": 1},
    ),
    t(
        "base64 without its padding is refused at the key that holds it",
        "invalid_request",
        "/log_base64",
        request={"cmd": "reduce", "id": 1, "log_base64": "e30"},
    ),
    t(
        "base64 in the URL-safe alphabet is refused",
        "invalid_request",
        "/text_base64",
        request={"cmd": "canonicalize", "id": 1, "text_base64": "-_8="},
    ),
    t(
        "base64 holding a line break is refused",
        "invalid_request",
        "/text_base64",
        request={"cmd": "canonicalize", "id": 1, "text_base64": "e30=\n"},
    ),
    t(
        "base64 whose unused bits are not zero is refused (one text per bytes)",
        "invalid_request",
        "/text_base64",
        request={"cmd": "canonicalize", "id": 1, "text_base64": "e31="},
    ),
    t(
        "an artifact's bytes that are not base64 are refused at that artifact",
        "invalid_request",
        f"/thread/artifacts/{SHA}",
        request={**WRITE, "thread": {"artifacts": {SHA: "not base64"}, "log": [STARTED]}},
    ),
    t(
        "an invalid matcher is refused at its pointer in the request, under /matcher",
        "invalid_request",
        "/matcher/Zed",
        request={
            "cmd": "match",
            "event": {"data": {}, "type": "x"},
            "id": 1,
            "matcher": {"Zed": 1, "type": "x"},
        },
    ),
    t(
        "a matcher holding a double canonical JSON cannot write (1e16) is refused at it",
        "invalid_request",
        "/matcher/data/v",
        request_text='{"cmd":"match","event":{"data":{},"type":"x"},"id":1,'
        '"matcher":{"data":{"v":1e16},"type":"x"}}',
        answer_id=1,
    ),
    t(
        "an event holding a double canonical JSON cannot write (1e16) is refused at it",
        "invalid_request",
        "/event/data/v/0",
        request_text='{"cmd":"match","event":{"data":{"v":[1e16]},"type":"x"},"id":1,'
        '"matcher":{"type":"x"}}',
        answer_id=1,
    ),
    t(
        "a log given as values holding the double 1e16 is refused at that number",
        "log_invalid",
        "/data/v",
        request_text='{"cmd":"reduce","dialect":"threads-py","id":1,"log":['
        + canonical_line(STARTED).decode()
        + ","
        + x_event('{"v":1e16}')
        + "]}",
        answer_id=1,
    ),
]

REDUCE = {
    "151-column-counts-code-points.json": {
        "description": "the column of a syntax refusal counts Unicode code points: a character "
        "outside the BMP before the token is one column",
        "dialect": "threads-py",
        "error": "log_invalid",
        "error_line": 2,
        "log_text": log_text('{"v":["\U0001f600",NaN]}'),
    },
    "152-leading-zero-column.json": {
        "description": "a number with a leading zero is located at that zero",
        "dialect": "threads-py",
        "error": "log_invalid",
        "error_line": 2,
        "log_text": log_text('{"v":-01}'),
    },
    "155-minus-infinity-column.json": {
        "description": "a minus sign not followed by a digit (-Infinity) is located at the "
        "character after it",
        "dialect": "threads-py",
        "error": "log_invalid",
        "error_line": 2,
        "log_text": log_text('{"v":-Infinity}'),
    },
    "153-wide-double-in-text.json": {
        "description": "a double canonical JSON cannot write (1e16) is refused in a log file as "
        "in a log given as values, at its pointer",
        "dialect": "threads-py",
        "error": "log_invalid",
        "error_line": 2,
        "error_pointer": "/data/w",
        "log_text": log_text('{"v":1e15,"w":1E+16}'),
    },
    "154-nesting-far-past-256-located-by-pointer.json": {
        "description": "a line nested far past 256 levels is refused at the pointer of its first "
        "container at level 257, in text order",
        "dialect": "threads-py",
        "error": "log_invalid",
        "error_line": 2,
        "error_pointer": "/data/v/1" + "/0" * 253,
        "log_text": log_text('{"v":[0,' + "[" * 3000 + "]" * 3000 + "]}"),
    },
}
CANONICAL = {
    "052-number-underflow.json": {
        "description": "a number below the smallest double reads as the double nearest to it, 0",
        "document": "0\n",
        "input_text": "1e-400",
        "line": "0",
    },
    "053-number-negative-underflow.json": {
        "description": "a negative number below the smallest double reads as -0, written 0",
        "document": "[\n  0\n]\n",
        "input_text": "[-1e-400]",
        "line": "[0]",
    },
}


def column_of(text: str, token: str) -> int:
    """1-based column, in code points, of ``token`` on line 2 of ``text``."""
    return text.split("\n")[1].index(token) + 1


def main() -> None:
    REDUCE["151-column-counts-code-points.json"]["error_column"] = column_of(
        str(REDUCE["151-column-counts-code-points.json"]["log_text"]), "NaN"
    )
    REDUCE["152-leading-zero-column.json"]["error_column"] = (
        column_of(str(REDUCE["152-leading-zero-column.json"]["log_text"]), "-01") + 1
    )
    REDUCE["155-minus-infinity-column.json"]["error_column"] = (
        column_of(str(REDUCE["155-minus-infinity-column.json"]["log_text"]), "-Inf") + 1
    )
    doc = {
        "description": "Driver requests whose values the request schemas cannot check: the id "
        "rule, one reduce source, strict base64, pointers into the request and values canonical "
        "JSON cannot write, answered the same by every driver (spec/driver-protocol.md 1.3, 3.2b).",
        "tests": REQUESTS,
    }
    (ROOT / "driver-requests" / "values.json").write_bytes(canonical_document(doc))
    for name, test in REDUCE.items():
        (ROOT / "reduce" / name).write_bytes(canonical_document(test))
    for name, test in CANONICAL.items():
        (ROOT / "canonical" / name).write_bytes(canonical_document(test))


if __name__ == "__main__":
    main()
