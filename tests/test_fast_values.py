"""Option values coerced without pydantic (threads_cases/cli/fast_values.py) are the values
typer's own coercion gives: every parameter of every command, over a spread of inputs, both
ways, outcomes compared (value, or the error's type and message). That a `run` imports no
pydantic: tests/test_fast_start.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
import typer.main

from threads_cases import cli
from threads_cases.cli.fast_values import fast_process_value


def _commands() -> list[tuple[str, Any]]:
    group = typer.main.get_command(cli._load())  # unpolished: typer's own process_value
    out = []
    for name, cmd in group.commands.items():  # type: ignore[attr-defined]
        subs = getattr(cmd, "commands", None)
        if subs:
            out += [(f"{name} {sub_name}", sub) for sub_name, sub in subs.items()]
        else:
            out.append((name, cmd))
    return out


def _inputs(param: Any, tmp: Path) -> list[Any]:
    (tmp / "file.txt").write_text("x")
    leaves: list[Any] = ["", "0", "1", "12", "01", "-1", "0.5", "1e3", "abc", " 3", "x\x00y"]
    leaves += [str(tmp / "file.txt"), str(tmp), str(tmp / "missing"), "-"]
    desc = param.type_descriptor
    leaves += [str(c) for c in (desc.choices or ())] + [str(c).upper() for c in desc.choices or ()]
    values = [None, param.default, *leaves]
    if param.multiple or param.nargs == -1:
        values = [None, (), *[(v,) for v in leaves], tuple(leaves[1:4]), "abc"]
    return values


def _outcome(call: Any, ctx: Any, value: Any) -> Any:
    try:
        return ("value", call(ctx, value))
    except Exception as exc:  # the comparison covers refusals too
        return ("error", type(exc).__name__, str(exc))


def test_every_value_coerced_without_pydantic_is_the_value_typer_gives(tmp_path: Path) -> None:
    sure = 0
    for name, cmd in _commands():
        ctx = typer.Context(cmd, info_name=name)
        for param in cmd.params:
            if getattr(param, "type_descriptor", None) is None:
                continue
            fast = fast_process_value(param, param.process_value)
            for value in _inputs(param, tmp_path):
                mine = _outcome(fast, ctx, value)
                theirs = _outcome(param.process_value, ctx, value)
                assert mine == theirs, f"{name} {param.name}: {value!r}"
                sure += mine[0] == "value"
    assert sure > 500  # the comparison ran over real coercions, not only refusals
