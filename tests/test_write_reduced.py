"""`threads-cases reduce`'s writing path (threads_cases/core/log.py ``write_reduced``): the
state reduced with each message but the last held as its JSON text, written a message at a
time, gives the bytes of ``canonical_document`` of :func:`reduce_log`'s state in the log's
dialect, and the same refusals (issue 37; spec/reducer.md)."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

import orjson
import pytest

from threads_cases.core.canonical import canonical_document, canonical_line
from threads_cases.core.dialects import get_dialect
from threads_cases.core.errors import CaseError
from threads_cases.core.log import reduce_log, write_reduced
from threads_cases.core.reducer import Reducer

ROOT = Path(__file__).resolve().parent.parent
REDUCE = sorted((ROOT / "spec" / "conformance" / "reduce").glob("*.json"))
CORPUS = sorted((ROOT / "tests" / "badinput" / "logs").glob("*.jsonl"))


def _log_bytes(case: dict[str, Any]) -> bytes:
    if "log_text" in case:
        return str(case["log_text"]).encode("utf-8")
    if "log_base64" in case:
        return base64.b64decode(case["log_base64"])
    return b"".join(canonical_line(ev) + b"\n" for ev in case["log"])


def _with_floats() -> bytes:
    """006's log (two tool results merged into one message) with floats and a key above
    U+D7FF in a tool's input, which orjson's sorted writing would spell otherwise."""
    case = orjson.loads(
        (ROOT / "spec/conformance/reduce/006-consecutive-tool-results-merged.json").read_bytes()
    )
    events = case["log"]
    for ev in events:
        if ev["type"] == "model_responded":
            block = ev["data"]["message"]["content"][0]
            block["input"] = {"path": "a.txt", "\ue000k": [0.1, 1e300, -2.5e-7], "a": 1.0}
    return b"".join(canonical_line(ev) + b"\n" for ev in events)


def _samples() -> list[tuple[str, str, bytes]]:
    out = [(p.name, orjson.loads(p.read_bytes())["dialect"], b"") for p in REDUCE]
    out = [
        (
            name,
            dialect,
            _log_bytes(orjson.loads((ROOT / "spec/conformance/reduce" / name).read_bytes())),
        )
        for name, dialect, _ in out
    ]
    out += [(p.name, "threads-py", p.read_bytes()) for p in CORPUS]
    out.append(("floats", "threads-py", _with_floats()))
    return out


def _answer(fn: Any) -> bytes | tuple[str, str]:
    try:
        return fn()  # type: ignore[no-any-return]
    except CaseError as exc:
        return exc.code, exc.render()


@pytest.mark.parametrize("name,dialect,data", _samples(), ids=[n for n, _, _ in _samples()])
def test_write_reduced_writes_the_document_of_reduce_log(
    name: str, dialect: str, data: bytes
) -> None:
    d = get_dialect(dialect)
    want = _answer(
        lambda: canonical_document(d.encode_state(reduce_log(io.BytesIO(data), dialect=d)))
    )
    sink = io.BytesIO()
    got = _answer(lambda: write_reduced(io.BytesIO(data), sink.write, dialect=d))
    if isinstance(want, tuple):
        assert got == want and sink.getvalue() == b""  # refused before writing anything
    else:
        assert got is None and sink.getvalue() == want


def test_a_frozen_reducer_holds_each_message_but_the_last_as_its_json_text() -> None:
    case = orjson.loads(
        (ROOT / "spec/conformance/reduce/019-restore-earlier-then-later-snapshot.json").read_bytes()
    )
    events = [orjson.loads(line) for line in _log_bytes(case).splitlines()]
    frozen, plain = Reducer(freeze=True), Reducer()
    for ev in events:
        frozen.apply(ev)
        plain.apply(ev)
        msgs = frozen.state["messages"]
        assert all(type(m) is bytes for m in msgs[:-1]) and all(type(m) is dict for m in msgs[-1:])
        assert [orjson.loads(m) if type(m) is bytes else m for m in msgs] == plain.state["messages"]
    assert len(frozen.state["messages"]) > 1
