"""Language-neutral texts (spec/replay.md, "Texts"): what a tool result, a stop or a message
quotes is canonical JSON, never a language's own printing of values."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import new_thread
from hypothesis import given, settings
from hypothesis import strategies as st

from threads_cases.core.canonical import canonical_line
from threads_cases.core.texts import quote
from threads_cases.reference.agent import ToolContext, ToolSpec
from threads_cases.reference.egress import egress_target
from threads_cases.reference.model import ScriptedModel, text_reply, tool_reply

# names with quotes, backslashes, controls, characters beyond the BMP and unassigned ones:
# exactly the characters on which Python's repr() and JavaScript printing disagree
NAMES = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)


def _results(out: Any) -> dict[str, dict[str, Any]]:
    return {e["data"]["tool_use_id"]: e["data"] for e in out.events if e["type"] == "tool_result"}


@settings(max_examples=60, deadline=None)
@given(NAMES)
def test_an_unknown_tool_is_quoted_as_canonical_json(name: str) -> None:
    t = new_thread()
    out = t.run_turn(
        "go", ScriptedModel([tool_reply(("a", name, {"10": 1, "2": 2.0})), text_reply("ok")])
    )
    if name in {"read_file", "write_file", "list_files", "delete_file", "get_weather"}:
        return
    content = _results(out)["a"]["content"]
    assert content == "unknown tool " + json.dumps(name, ensure_ascii=False)
    assert content == "unknown tool " + canonical_line(name).decode()


def test_quote_writes_canonical_json_for_every_value() -> None:
    assert quote("it's") == '"it\'s"'
    assert quote("\U0001d4b3\u0007") == '"\U0001d4b3\\u0007"'
    assert quote({"10": 1, "2": 2}) == '{"10":1,"2":2}'  # sorted as strings, not as numbers
    assert quote(1.0) == "1"  # an integral float is written as the integer
    assert quote(["a", None, True]) == '["a",null,true]'
    assert quote("\ud800") == '"<unwritable value>"'  # a lone surrogate has no canonical form


@pytest.mark.parametrize(
    ("call", "text"),
    [
        ({"path": "n.txt", "content": 1.0}, 'bad input for write_file: "content" is not a string'),
        ({"path": 7, "content": "x"}, 'bad input for write_file: "path" is not a string'),
        ({"content": "x"}, 'bad input for write_file: "path" is missing'),
        ({"path": "n.txt"}, 'bad input for write_file: "content" is missing'),
        ({"path": {"10": 1, "2": 2}}, 'bad input for write_file: "path" is not a string'),
    ],
)
def test_a_built_in_tool_refuses_input_that_is_not_text(call: dict[str, Any], text: str) -> None:
    t = new_thread({"n.txt": "one"})
    out = t.run_turn("go", ScriptedModel([tool_reply(("a", "write_file", call)), text_reply("ok")]))
    assert _results(out)["a"] == {**_results(out)["a"], "content": text, "is_error": True}
    assert t.sandbox.read("n.txt") == b"one"  # nothing was written


def test_a_missing_file_and_a_refused_path_give_neutral_texts() -> None:
    t = new_thread()
    out = t.run_turn(
        "go",
        ScriptedModel(
            [
                tool_reply(
                    ("a", "read_file", {"path": "nope/\U0001f511.txt"}),
                    ("b", "read_file", {"path": "../x'y"}),
                    ("c", "delete_file", {"path": "gone.txt"}),
                ),
                text_reply("ok"),
            ]
        ),
    )
    res = _results(out)
    assert res["a"]["content"] == "no such file: nope/\U0001f511.txt"
    assert res["b"]["content"] == (
        'sandbox path "../x\'y" is not a relative POSIX path inside the sandbox'
    )
    assert res["c"]["content"] == "no such file: gone.txt"


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (KeyError("sk-secret-key-name"), "a required key is missing"),  # named, absent
        (
            TypeError("unsupported operand 'int' + 'str' in /home/me/app.py"),
            "a value has the wrong type",
        ),
        (ValueError("invalid literal for int() with base 10: 'hunter2'"), "a value is not valid"),
    ],
)
def test_a_handler_exception_never_reaches_the_log(error: Exception, reason: str) -> None:
    def handler(ctx: ToolContext, inp: dict[str, Any]) -> str:
        raise error

    schema = {"type": "object", "properties": {"sk-secret-key-name": {"type": "string"}}}
    tool = ToolSpec("custom", input_schema=schema, kind="sandbox", effect="read", handler=handler)
    t = new_thread(extra=(tool,))
    out = t.run_turn("go", ScriptedModel([tool_reply(("a", "custom", {})), text_reply("ok")]))
    content = _results(out)["a"]["content"]
    assert content == f"bad input for custom: the handler refused it ({reason})"
    logged = json.dumps(out.events)
    assert str(error.args[0]) not in logged


@pytest.mark.parametrize(
    ("inp", "key"),
    [({"sku": "A1"}, "A1-x"), ({"sku": "A1"}, "sku"), ({}, "count")],
)
def test_a_keyerror_of_the_handlers_own_lookup_is_handler_failed(
    inp: dict[str, Any], key: str
) -> None:
    """Only a KeyError naming an input_schema property the input lacks is the model's bad
    input (spec/replay.md 8.1); a lookup of the handler's own (a key the input has, a key
    the schema does not name) is a bug of the handler, said so, not a neutral refusal."""
    from threads_cases.core.errors import CaseError

    def handler(ctx: ToolContext, args: dict[str, Any]) -> str:
        return {"B2": "7"}[key]

    schema = {"type": "object", "properties": {"sku": {"type": "string"}}}
    tool = ToolSpec("stock", input_schema=schema, kind="sandbox", effect="read", handler=handler)
    t = new_thread(extra=(tool,))
    with pytest.raises(CaseError) as raised:
        t.run_turn("go", ScriptedModel([tool_reply(("a", "stock", inp)), text_reply("ok")]))
    assert raised.value.code == "handler_failed"
    assert raised.value.message.startswith(
        f'the handler of sandbox tool "stock" raised KeyError: {key!r} at test_neutral_texts.py:'
    )
    assert "the handler itself raised, not the model's input" in raised.value.hint


@pytest.mark.parametrize(
    ("address", "text"),
    [
        (("127.0.0.1", 9), '"127.0.0.1:9"'),
        (("2001:db8::1", 443, 0, 0), '"[2001:db8::1]:443"'),
        ((b"example.com", 80), '"example.com:80"'),
        ("/run/x.sock", '"<unknown>"'),
        (None, '"<unknown>"'),
        (("host", "80"), '"<unknown>"'),
    ],
)
def test_the_egress_target_is_host_and_port_as_json(address: Any, text: str) -> None:
    assert egress_target(address) == text


def test_name_lookups_and_child_processes_are_named_as_json() -> None:
    assert egress_target(("example.com", None), "the name lookup of") == '"example.com"'
    assert egress_target("example.com", "the name lookup of") == '"example.com"'
    assert egress_target(["git", b"fetch", Path("x")], "the child process") == (
        '["git","fetch","x"]'
    )
    assert egress_target("ls -l", "the child process") == '"ls -l"'
    assert egress_target(3, "the child process") == '"<unknown>"'


def test_validate_and_reduce_agree_on_a_usage_sum_past_2_pow_53(tmp_path: Path) -> None:
    from threads_cases.core.strictjson import parse

    root = Path(__file__).resolve().parent.parent / "spec" / "conformance" / "reduce"
    test = parse((root / "143-usage-input-sum-overflow.json").read_bytes())
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"".join(canonical_line(e) + b"\n" for e in test["log"]))
    codes = []
    for command in ("validate", "reduce"):
        proc = subprocess.run(
            [sys.executable, "-m", "threads_cases", command, str(log), "--format", "json"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode != 0, proc.stdout
        assert "log_invalid" in proc.stdout + proc.stderr
        assert "2^53-1" in proc.stdout + proc.stderr
        codes.append(proc.returncode)
    assert codes[0] == codes[1]
