"""Call ids a reply repeats (spec/importers.md section 4, "Duplicate call ids").

The APIs give every tool call of one reply its own id (Anthropic refuses a request whose
message repeats a ``tool_use`` id; OpenAI's ``tool_calls`` ids and Responses ``call_id`` s
are unique too), so a result names its call by id alone. A hand-written or damaged
recording can still give two calls of one reply the same id, and the results the next
request (or the transcript) holds then carry that id twice. Paired by id alone, both calls
would get the same result; and a thread's ``tool_result`` names its call by ``tool_use_id``
alone (reducer.md 4.7), so the thread itself could not tell them apart.

So the importers pair such results by occurrence within the reply, as the calls were made:
the first result with id X answers the first call with id X, the second the second. The
thread keeps one id per call: :func:`scope_call_ids` writes the second and later calls of an
id as ``<id>-dup2``, ``<id>-dup3``... (the next free number when the reply already holds
that id), in the reply's content and in their ``tool_called`` / ``tool_result`` events, and
records the ids in :attr:`.common.Reply.aliases`, which :meth:`.common.Reply.answer` follows.
Each repeated id is an ``import_repaired`` warning, reason ``duplicate_call_id``, naming the
place and the id (:func:`scope_and_report`); ``strict`` refuses it (``import_invalid``), as
every warning.

Ids reused by *different* replies are no duplicates: a call id is scoped to its reply (each
reply's calls are answered before the next reply is made, so the reducer never holds two).
"""

from __future__ import annotations

from typing import Any

from .common import Reply, Stats

#: the reason of the warning (spec/importers.md section 4)
DUPLICATE_CALL_ID = "duplicate_call_id"


def scope_call_ids(reply: Reply, start: int = 0) -> list[tuple[str, list[str]]]:
    """Give each tool_use block of ``reply`` from ``reply.blocks[start]`` on an id no earlier
    block of the reply holds (module docstring): ``(id, the ids its calls are now written
    with)`` for each id that repeated, in block order; ``[]`` (nothing changed) when none did.
    ``start`` lets a reader that appends blocks one by one check only the new ones."""
    blocks = reply.blocks
    seen: set[Any] = set()
    again: list[int] = []
    for k, b in enumerate(blocks):
        if b.get("type") != "tool_use":
            continue
        cid = b.get("id")
        if k >= start and cid in seen and isinstance(cid, str):
            again.append(k)
        seen.add(cid)
    if not again:
        return []
    aliases = reply.aliases if reply.aliases is not None else {}
    out: dict[str, list[str]] = {}
    for k in again:
        cid = blocks[k]["id"]
        ids = aliases.setdefault(cid, [cid])
        n = len(ids) + 1
        new = f"{cid}-dup{n}"
        while new in seen:
            n += 1
            new = f"{cid}-dup{n}"
        seen.add(new)
        ids.append(new)
        blocks[k] = {**blocks[k], "id": new}  # a new block: the source's value stays as it is
        out[cid] = ids
    reply.aliases = aliases
    return list(out.items())


def duplicate_message(call_id: str, ids: list[str]) -> str:
    """The warning's text for ``call_id`` given to the calls now written as ``ids``."""
    later = ", ".join(repr(i) for i in ids[1:])
    return (
        f"{len(ids)} tool calls of one reply have the id {call_id!r}; their results pair "
        f"with them by occurrence (the first result with this id answers the first call), "
        f"the later calls written as {later}"
    )


def scope_and_report(
    reply: Reply, start: int = 0, *, where: str, line: int | None, stats: Stats
) -> None:
    """:func:`scope_call_ids` from ``reply.blocks[start]`` on, then one ``import_repaired``
    warning (reason ``duplicate_call_id``) per repeated id, its message led by ``where`` (the
    place, as the importer's other warnings name it); under ``--strict`` the stats refuse it
    (:class:`.common.Stats`)."""
    for call_id, ids in scope_call_ids(reply, start):
        message = f"{where}: {duplicate_message(call_id, ids)}"
        stats.warn(line or 0, "import_repaired", DUPLICATE_CALL_ID, message)
