"""``supply``: a supply document (spec/replay.md 5.2) from an MCP session cassette
(spec/importers.md section 10), its tools named as the agent names them (``--prefix``).

``run --supply`` and ``accept --supply`` also take the cassette itself (its tools named as
recorded); this command is for the names an agent host gives MCP tools (Claude Code's
``mcp__<server>__<tool>``) and for a file to review and commit. Errors:
``error[invalid_request]`` (exit 2) for a file that is no cassette, a cassette without a
``tools/call`` or a tool with different results; ``io_error`` (exit 1).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..core.atomic import write_atomic
from ..core.canonical import canonical_document
from ..core.errors import CaseError
from .app import app, fail
from .params import check_file, check_not_input, check_out_file, checked


@app.command()
def supply(
    cassette: Annotated[
        Path,
        typer.Argument(
            help="An MCP session cassette (mcp-recorder JSON, agent-vcr .vcr, or JSON Lines "
            "of JSON-RPC messages).",
            callback=checked(check_file),
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "-o", "--output", help="The supply document to write.", callback=checked(check_out_file)
        ),
    ],
    prefix: Annotated[
        str,
        typer.Option(
            "--prefix",
            help="Put before each tool name, as the agent names MCP tools (for example "
            "mcp__github__ for Claude Code's server github).",
        ),
    ] = "",
) -> None:
    """Write the supply document {"calls": {"tool:<prefix><name>": result}} of the cassette's
    answered tools/call requests (isError -> is_error), for `run --supply` and
    `accept --supply` (which writes the answers it used into the case's stubs)."""
    from ..importers.mcp import mcp_supply
    from ..reference.replay import check_supply

    check_not_input(out, [cassette], "cassette")
    try:
        doc = mcp_supply(cassette, prefix=prefix)
        check_supply(doc, source=str(cassette))
        write_atomic(out, canonical_document(doc), fsync=True)
    except CaseError as err:
        raise fail(err) from None
    except OSError as exc:
        problem = CaseError("io_error", f"cannot write {out}: {exc.strerror}", file=str(out))
        raise fail(problem) from None
    typer.echo(f"wrote {out}: {len(doc['calls'])} tool answer(s)")
