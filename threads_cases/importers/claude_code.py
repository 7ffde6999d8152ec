"""Claude Code session transcripts (``~/.claude/projects/<project>/<session>.jsonl``).

Each line is a JSON object with a ``type``; ``user`` and ``assistant`` lines carry
``uuid``, ``parentUuid``, ``sessionId``, ``timestamp``, ``isSidechain``, ``isMeta`` and a
``message`` in the Anthropic Messages shape (``{role, content, ...}``; assistant messages
also ``id``, ``model``, ``stop_reason``, ``usage``).

Mapping rules:

* **Conversation.** A *real* user message (a ``user`` line that is not ``isMeta``, not only
  ``tool_result`` blocks, not an interruption notice and not local command output) ends the
  turn before it and starts one: ``user_message`` + ``turn_started``. A ``user`` line
  holding only ``tool_result`` blocks answers tool calls: each block becomes the
  ``tool_result`` of its ``tool_called`` (parallel calls come back as one user line per result).
* **Replies.** Claude Code writes one model reply over several ``assistant`` lines sharing
  ``message.id`` (or, without ids, chained by ``parentUuid``; one content block a line,
  possibly with tool results between them); they are merged into one ``model_requested`` +
  ``model_responded`` whose usage is the copy with the largest token total
  (:mod:`.claude_mapping`). Compaction records are extension events inside their turn.
  ``stop_reason`` is ``tool_use`` when the reply calls a tool, else the message's own (or
  ``end_turn`` when it has none).
* **Turn end.** The last reply before the next real user message ends the turn:
  ``turn_completed`` (its stop_reason, usage summed over the turn) when it calls no tool;
  ``turn_failed {code: "interrupted"}`` when the user interrupted (``[Request interrupted by
  user...]``), when the transcript stops before the model answered its tool results, when
  no reply came at all, or when the file ends in a damaged record inside the turn and its
  last reply has no final stop reason (spec/importers.md section 1; a null stop reason alone
  is no sign: completed replies have it too).
* **Kept as extension events** (not conversation; reducers skip them):
  ``isMeta`` user lines and local command output (``<local-command-stdout>``...)
  -> ``x_claude_code.meta {content}``; a slash command the model never answered
  (``<command-name>...``) -> ``x_claude_code.command {content}``; ``system`` lines ->
  ``x_claude_code.system {subtype?, content?, level?}``; ``summary`` lines ->
  ``x_claude_code.summary {summary?, leafUuid?}``; an interruption notice outside a turn ->
  ``x_claude_code.meta``.
* **Dropped** (counted by ``--verbose``): ``progress``, ``queue-operation``,
  ``file-history-snapshot``, lines of unknown type, blank lines, copies of earlier lines (a
  repeated uuid on a line of the same type and time; a uuid reused with other content keeps
  both lines, with a ``reused_id`` warning), tool results
  whose call is not in the turn, lines of branches not followed, and sidechain lines.
* **Sidechains.** ``isSidechain`` lines (sub-agent conversations) are dropped from the main
  thread. A file holding only sidechain lines imports as a thread of its own (thread_id
  ``<sessionId>:<agentId>``).
* **Forks.** ``uuid``/``parentUuid`` form a tree. A parent with two or more children that are
  real user messages is a fork (an edited or rewound message). At each fork the child whose
  subtree holds the newest line is followed; ``branch`` (a uuid) follows the branch holding
  that uuid instead. Other branching (for example tool results hanging off different lines of
  one split reply) is not a fork and is kept.

Unknown fields are ignored everywhere. Streaming: a first pass keeps, per line with a uuid,
its parent, whether it is a real user message and whether it is a sidechain line (a few
dozen bytes); a second pass maps the lines it keeps, holding one turn at a time.
"""

from __future__ import annotations

import os
import re
from array import array
from collections.abc import Iterator
from typing import Any

from ..core.errors import CaseError
from .claude_mapping import DROPPED_TYPES, ClaudeMapper
from .claude_tree import REAL as _REAL
from .claude_tree import SIDE as _SIDE
from .claude_tree import Tree as _Tree
from .claude_tree import dropped as _dropped
from .common import (
    Extra,
    Ref,
    Stats,
    Turn,
    import_error,
    imported_agent,
    wrong_format_hint,
)
from .source import NO_TIME, TranscriptSource

LINE_TYPES = (
    "user",
    "assistant",
    "system",
    "summary",
    "progress",
    "queue-operation",
    "file-history-snapshot",
)
_TYPE_GUESS = re.compile(rb'"type"\s*:\s*"([A-Za-z_-]+)"')
_ROLE_GUESS = re.compile(rb'"role"\s*:\s*"(user|assistant)"')


def guess_type(body: bytes) -> str:
    """The line type named in a line that does not parse, or ``"unparseable"``."""
    for m in _TYPE_GUESS.finditer(body):
        t = m.group(1).decode()
        if t in LINE_TYPES:
            return t
    role = _ROLE_GUESS.search(body)  # the top-level type often comes after the message
    return role.group(1).decode() if role else "unparseable"


def _block_problem(b: Any) -> str | None:
    """What is wrong with a content block, as the end of a message that starts with the
    block's place (``message.content[0]``), or None."""
    t = b.get("type") if isinstance(b, dict) else None
    if not isinstance(t, str) or not t:
        return " must be an object with a non-empty string type"
    if t == "text":
        if not isinstance(b.get("text"), str):
            return ".text must be a string"
    elif t == "tool_use":
        i, n = b.get("id"), b.get("name")
        if not (isinstance(i, str) and i and isinstance(n, str) and n) or not isinstance(
            b.get("input"), dict
        ):
            return " (tool_use) needs a non-empty id and name and an object input"
    elif t == "tool_result":
        u = b.get("tool_use_id")
        if not isinstance(u, str) or not u:
            return ".tool_use_id must be a non-empty string"
        e = b.get("is_error")
        if e is not None and not isinstance(e, bool):
            return ".is_error must be a boolean"
        c = b.get("content")
        if isinstance(c, list):
            for k, x in enumerate(c):
                p = _block_problem(x)
                if p:
                    return f".content[{k}]{p}"
    elif t == "thinking":
        if not isinstance(b.get("thinking"), str):
            return ".thinking must be a string"
    elif t == "image" and not isinstance(b.get("source"), dict):
        return ".source must be an object"
    return None


def line_problem(obj: Any) -> str | None:
    """Why a parsed line cannot be imported, or None. Unknown types and fields are fine."""
    if not isinstance(obj, dict):
        return "a transcript line must be a JSON object"
    get = obj.get
    t = get("type")
    if not isinstance(t, str) and "type" in obj:
        return "type must be a string"
    v = get("uuid")
    if v is not None and not isinstance(v, str):
        return "uuid must be a string"
    v = get("parentUuid")
    if v is not None and not isinstance(v, str):
        return "parentUuid must be a string"
    v = get("sessionId")
    if v is not None and not isinstance(v, str):
        return "sessionId must be a string"
    if t != "user" and t != "assistant":
        return None
    msg = get("message")
    if not isinstance(msg, dict):
        return "message must be an object"
    content = msg.get("content")
    if isinstance(content, str):
        return None
    if not isinstance(content, list):
        if t == "user":
            return "message.content must be a string or a list of blocks"
        return "message.content must be a list of blocks"
    if t == "assistant":
        u = msg.get("usage")
        if u is not None and not isinstance(u, dict):
            return "message.usage must be an object"
    for i, b in enumerate(content):
        if type(b) is dict and _usual_block(b):
            continue  # what _block_problem accepts, told in one step
        p = _block_problem(b)
        if p:
            return f"message.content[{i}]{p}"
    return None


def _usual_block(b: dict[str, Any]) -> bool:
    """Whether ``b`` is a usual block :func:`_block_problem` surely finds nothing wrong with
    (a text, tool_use, thinking block, or a tool_result whose content is not a list of
    blocks), by exact types; False when it cannot tell (:func:`_block_problem` decides)."""
    t = b.get("type")
    if t == "text":
        return type(b.get("text")) is str
    if t == "tool_use":
        i, n = b.get("id"), b.get("name")
        return (
            type(i) is str
            and i != ""
            and type(n) is str
            and n != ""
            and (type(b.get("input")) is dict)
        )
    if t == "tool_result":
        u, e = b.get("tool_use_id"), b.get("is_error")
        return (
            type(u) is str
            and u != ""
            and (e is None or type(e) is bool)
            and type(b.get("content")) is not list
        )
    if t == "thinking":
        return type(b.get("thinking")) is str
    return False


class ClaudeCodeSource(TranscriptSource):
    """One Claude Code transcript, scanned (pass 1) and ready to map (pass 2, :meth:`items`).

    Attributes after construction: ``thread_id``, ``agent``, ``metadata``, ``start_ref``,
    ``sidechain_only``. Raises ``CaseError("import_invalid")`` for a malformed line with
    ``strict`` (else it is skipped with a warning) and ``CaseError("invalid_request")`` for an
    unknown ``branch`` uuid.
    """

    format = "claude-code"

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        branch: str | None = None,
        strict: bool = False,
        stats: Stats | None = None,
    ) -> None:
        super().__init__(path, strict=strict, stats=stats)
        self._scan(branch)

    # ------------------------------------------------------------------ pass 1
    def _kind_of(self, body: bytes) -> str:
        return guess_type(body)

    def _scan(self, branch: str | None) -> None:
        tree = _Tree()
        self._start_header()
        # the records pass 2 would only count (progress...): their index and type
        unmapped, unmapped_type = array("l"), bytearray()
        known = self._read_records(tree, unmapped, unmapped_type)
        if not known:
            # an empty file, or only lines of unknown types: nothing says it is a Claude Code
            # transcript, and there is no session to name the thread after
            empty = self.nothing_read()
            raise import_error(
                f"{empty}: not a Claude Code transcript"
                if empty
                else f"no line of a known type ({', '.join(LINE_TYPES)}): "
                "not a Claude Code transcript",
                file=self.file,
                line=None,
                kind=None,
                hint=wrong_format_hint(self.file, "claude-code"),
            )
        tree.link()
        self.sidechain_only = self._conv[False] == 0 and self._conv[True] > 0
        chosen = _SIDE if self.sidechain_only else 0
        self.model = self._models.get(bool(chosen), "")
        self.tools = list(self._tools[bool(chosen)])
        target = None
        if branch is not None:
            target = tree.index.get(branch)
            if target is None or (tree.flags[target] & _SIDE) != chosen:
                raise CaseError(
                    "invalid_request",
                    f"--branch {branch!r} is not the uuid of a "
                    f"{'sidechain' if chosen else 'main'} line of {self.file}",
                    hint='list the uuids with: grep -o \'"uuid":"[^"]*"\' FILE',
                )
        self._select(tree.record, tree.parent, tree.flags, chosen, target)
        self._unmap(unmapped, unmapped_type)
        self.leaf_uuid = None
        if self._leaf is not None:
            self.leaf_uuid = next((u for u, n in tree.index.items() if n == self._leaf), None)
        self.forks = self._fork_count

    def _read_records(self, tree: _Tree, unmapped: array[int], unmapped_type: bytearray) -> int:
        """Pass 1 over the records: check each, collect the header fields, build ``tree``
        and list the records of :data:`DROPPED_TYPES` (index and type); the number of
        records of a known line type."""
        known = 0
        keep, stats, held = self.keep, self.stats, self._values
        for idx, lineno, obj in self._records():
            problem = line_problem(obj)
            if problem:
                kind = str(obj.get("type")) if isinstance(obj, dict) else "unparseable"
                self._invalid(lineno, kind, problem)
                held[idx] = None  # pass 2 never maps it: not held
                continue
            t = obj.get("type")
            # the copy of a tool's output Claude Code writes beside its tool_result (often a
            # third of the file): never mapped, so freed now, while its memory is warm, rather
            # than held for pass 2 (it is not part of what tells a copied line either)
            obj.pop("toolUseResult", None)
            known += t in LINE_TYPES
            side = bool(obj.get("isSidechain"))
            self._take(idx, obj, t, side)
            keep[idx] = 1
            same = tree.repeats(obj, t, self.times, idx)
            if same is not None and same >= 0:
                stats.skip("line repeating an earlier uuid")
                keep[idx] = 0
                held[idx] = None
            else:
                if same is not None:
                    self._reused(obj["uuid"], tree.lines[-1 - same], lineno)
                tree.add(idx, lineno, obj, t, side)
            if t in DROPPED_TYPES:  # only counted (_unmap): pass 2 never maps it
                unmapped.append(idx)
                unmapped_type.append(DROPPED_TYPES.index(t))
                held[idx] = None
        return known

    def _reused(self, uid: str, first: int, lineno: int) -> None:
        """A uuid of line ``first`` reused at ``lineno`` by a record with other content: both
        kept (spec/importers.md section 2.5), with an ``import_repaired`` warning (with or
        without ``strict``: the line itself reads)."""
        self.stats.warn(
            lineno,
            "import_repaired",
            "reused_id",
            f"uuid {uid!r} of line {first} is reused here by a record with other content; "
            "both records kept, the records after naming it as parent attach to this one",
        )

    def _unmap(self, unmapped: array[int], types: bytearray) -> None:
        """Unmark the kept records of a type the mapping only counts (``unmapped``, with
        their :data:`DROPPED_TYPES` index in ``types``), counted here as it counts them:
        pass 2 does not read them again."""
        keep, skip = self.keep, self.stats.skip
        for idx, k in zip(unmapped, types, strict=True):
            if keep[idx]:
                keep[idx] = 0
                skip(f"{DROPPED_TYPES[k]} line")

    def _start_header(self) -> None:
        """The header fields before the first record (:meth:`_take` fills them)."""
        self._tools: dict[bool, dict[str, None]] = {False: {}, True: {}}
        self._models: dict[bool, str] = {}
        self._conv = {False: 0, True: 0}
        self.session_id = ""
        self.cwd: str | None = None
        self.agent_id: str | None = None
        self.first_ts: int | None = None

    def _take(self, idx: int, obj: dict[str, Any], t: Any, side: bool) -> None:
        """Collect the header fields of one well-formed record (``idx``: its index, ``t``: its
        type, ``side``: whether it is a sidechain line)."""
        if self.first_ts is None:
            ms = self.times[idx]  # the record's time, read by the first pass
            self.first_ts = None if ms == NO_TIME else ms
        if not self.session_id and isinstance(obj.get("sessionId"), str):
            self.session_id = obj["sessionId"]
        if self.cwd is None and isinstance(obj.get("cwd"), str):
            self.cwd = obj["cwd"]
        if self.agent_id is None and "agentId" in obj and isinstance(obj["agentId"], str):
            self.agent_id = obj["agentId"]
        if t == "user" or t == "assistant":
            self._conv[side] += 1
        if t != "assistant":
            return
        msg = obj["message"]
        if side not in self._models:
            m = msg.get("model")
            if isinstance(m, str) and m and not m.startswith("<"):
                self._models[side] = m
        content = msg["content"]
        if isinstance(content, list):
            tools = self._tools[side]
            for b in content:
                if b["type"] == "tool_use":
                    tools.setdefault(b["name"], None)

    def _select(
        self,
        node_line: array[int],
        parent: array[int],
        flags: bytearray,
        chosen: int,
        target: int | None,
    ) -> None:
        """Mark the records of the followed branch in ``self.keep`` (``node_line``: the record
        index of each node; see the module docstring)."""
        n = len(node_line)
        in_set = [(f & _SIDE) == chosen for f in flags]
        forks: dict[int, list[int]] = {}
        for i in [i for i, f in enumerate(flags) if f & _REAL]:  # real user messages only
            if in_set[i] and parent[i] >= 0:
                forks.setdefault(parent[i], []).append(i)
        forks = {p: c for p, c in forks.items() if len(c) > 1}
        self._fork_count = len(forks)
        keep, skip = self.keep, self.stats.skip
        other = (
            "sidechain line (not in the main thread)"
            if chosen == 0
            else "main-thread line in a sidechain file"
        )
        if not forks:  # the usual file: no branch to drop, only the other side's lines
            for i in [i for i, s in enumerate(in_set) if not s]:
                keep[node_line[i]] = 0
                skip(other)
            leaf = next((i for i in range(n - 1, -1, -1) if in_set[i]), None)
            self._leaf = target if target is not None else leaf
            return
        dropped = _dropped(forks, parent, target)
        leaf = None
        for i in range(n):
            line = node_line[i]
            if not in_set[i]:
                keep[line] = 0
                skip(other)
            elif dropped[i]:
                keep[line] = 0
                skip("line of a branch not followed (fork)")
            else:
                leaf = i
        self._leaf = target if target is not None else leaf

    # ------------------------------------------------------------------ header
    @property
    def thread_id(self) -> str:
        sid = self.session_id or self.path.stem or "claude-code"
        if self.sidechain_only:
            return f"{sid}:{self.agent_id or 'sidechain'}"
        return sid

    @property
    def agent(self) -> dict[str, Any]:
        return imported_agent("claude-code", self.model, self.tools)

    @property
    def metadata(self) -> dict[str, Any]:
        md: dict[str, Any] = {"source": "claude-code", "session_id": self.session_id}
        if self.cwd is not None:
            md["cwd"] = self.cwd
        if self.sidechain_only:
            md["sidechain"] = True
            if self.agent_id:
                md["agent_id"] = self.agent_id
        if self.forks:
            md["forks"] = self.forks
            md["leaf_uuid"] = self.leaf_uuid
        return md

    @property
    def start_ref(self) -> Ref:
        return Ref("session", self.first_ts, 1, "session")

    # ------------------------------------------------------------------ pass 2
    def items(self) -> Iterator[Turn | Extra]:
        """Map the kept records to turns and extension events (:mod:`.claude_mapping`)."""
        mapper = ClaudeMapper(self.stats, cut_at_end=self.cut_at_end)
        return mapper.items(self._kept_timed())
