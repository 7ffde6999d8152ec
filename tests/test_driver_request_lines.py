"""Every request the client writes is its canonical line (spec/driver-protocol.md 1.1), the
first ``hello`` included (the held-back Go trial saw ``{"id":1,"cmd":"hello","protocol":1}``,
keys unsorted): a driver that records each line it reads, and checks it against the
canonical writing of the value it holds. And the driver gets its dialect in
``THREADS_CASES_DIALECT`` (5.3a)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from threads_cases.core.canonical import canonical_line
from threads_cases.core.strictjson import parse
from threads_cases.protocol.client import DriverImplementation, request_line

RECORDER = """
import sys
out = open(sys.argv[1], "ab")
for line in sys.stdin.buffer:
    out.write(line)
    out.flush()
    req = __import__("json").loads(line)
    if req["cmd"] == "shutdown":
        break
    answer = {"id": req["id"], "ok": True, "protocol": 1, "capabilities": ["canonicalize"],
              "implementation": {"name": "rec", "language": "python",
                                 "version": __import__("os").environ["THREADS_CASES_DIALECT"],
                                 "dialect": "threads-py", "homepage": "https://x.example"}}
    if req["cmd"] == "canonicalize":
        answer = {"id": req["id"], "ok": True, "text": "1", "document": "1\\n"}
    sys.stdout.write(__import__("json").dumps(answer) + "\\n")
    sys.stdout.flush()
"""


def test_hello_and_every_request_are_canonical_lines(tmp_path: Path) -> None:
    (tmp_path / "rec.py").write_text(RECORDER)
    seen = tmp_path / "seen.jsonl"
    impl = DriverImplementation(
        "rec", [sys.executable, str(tmp_path / "rec.py"), str(seen)], dialect="threads-py"
    )
    try:
        hello = impl.hello()
        impl.request({"cmd": "canonicalize", "value": {"b": [1.5, "é"], "a": None}})
    finally:
        impl.close()
    # the configured dialect reached the driver (driver-protocol.md 5.3a)
    assert hello["implementation"]["version"] == "threads-py"
    lines = seen.read_bytes().splitlines()
    assert [json.loads(x)["cmd"] for x in lines[:2]] == ["hello", "canonicalize"]
    for line in lines:
        assert canonical_line(parse(line)) == line


def test_a_value_canonical_json_cannot_write_is_still_sent_keys_sorted() -> None:
    line = request_line({"cmd": "match", "matcher": {"data": {"v": 2**60}}, "event": {}})
    assert line == b'{"cmd":"match","event":{},"matcher":{"data":{"v":1152921504606846976}}}'
