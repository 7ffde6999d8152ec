"""OpenAI Codex CLI transcripts, in the two shapes it writes (detected from the first lines):
``codex exec --json`` event streams (:mod:`.exec`) and rollout files (:mod:`.rollout`).
Each module's docstring lists which lines become which events (spec/importers.md section 3).

Tools are kind ``external``; ``web_search`` and read-only names are effect ``read``, the rest
``write``. Unknown line types, item types and fields are skipped (counted by ``--verbose``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from ..common import (
    Extra,
    Ref,
    Stats,
    Turn,
    import_error,
    imported_agent,
    parse_ts_ms,
    wrong_format_hint,
)
from ..source import TranscriptSource
from .exec import EXEC_TYPES, ExecMapper, exec_item, exec_problem, exec_tool_name
from .rollout import ROLLOUT_TYPES, RolloutMapper, records_turn_ends, rollout_problem

_CALLS = ("function_call", "custom_tool_call")

__all__ = ["EXEC_TYPES", "ROLLOUT_TYPES", "CodexSource"]


class CodexSource(TranscriptSource):
    """One Codex transcript (exec stream or rollout), scanned and ready to map.

    Attributes: ``shape`` (``"exec"`` or ``"rollout"``), ``thread_id``, ``agent``,
    ``metadata``, ``start_ref``. Raises ``CaseError("import_invalid")`` for a malformed line
    (with ``strict``; else skipped with a warning) or a file that is neither shape.
    """

    format = "codex"

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        prompt: str | None = None,
        strict: bool = False,
        stats: Stats | None = None,
    ) -> None:
        super().__init__(path, strict=strict, stats=stats)
        self.prompt = prompt
        self.shape = ""
        self.thread_id = ""
        self.model = ""
        self.cwd: str | None = None
        self.first_ts: int | None = None
        #: a rollout whose writer records every turn's end (rollout.records_turn_ends)
        self.turn_ends = False
        self._tools: dict[str, None] = {}
        self._scan()

    # ------------------------------------------------------------------ pass 1
    def _problem(self, obj: Any) -> tuple[str, str | None]:
        if not isinstance(obj, dict):
            return "unparseable", "a transcript line must be a JSON object"
        t = obj.get("type")
        if "type" in obj and not isinstance(t, str):
            return "unparseable", "type must be a string"
        problem = exec_problem(obj) if self.shape == "exec" else rollout_problem(obj)
        return str(t), problem

    def _detect(self, obj: Any) -> bool:
        """Set ``shape`` from a line when it tells; True once the shape is known."""
        t = obj.get("type") if isinstance(obj, dict) else None
        if t in ROLLOUT_TYPES and "payload" in obj:
            self.shape = "rollout"
        elif t in EXEC_TYPES:
            self.shape = "exec"
        return bool(self.shape)

    def _scan(self) -> None:
        pending: list[tuple[int, int, Any]] = []  # records read before the shape was known
        for idx, lineno, obj in self._records():
            if not self.shape:
                if not self._detect(obj):
                    pending.append((idx, lineno, obj))
                    continue
                for record in pending:
                    self._take(*record)
                pending = []
            self._take(idx, lineno, obj)
        if not self.shape:
            empty = self.nothing_read()
            raise import_error(
                f"{empty}: neither a `codex exec --json` stream nor a rollout file"
                if empty
                else "neither a `codex exec --json` stream nor a rollout file "
                "(no line of a known type)",
                file=self.file,
                line=None,
                kind=None,
                hint=wrong_format_hint(self.file, "codex"),
            )
        self.tools = list(self._tools)
        if not self.thread_id:
            self.thread_id = self.path.stem or "codex"

    def _take(self, idx: int, lineno: int, obj: Any) -> None:
        if self.shape == "rollout" and type(obj) is dict and self.first_ts is not None:
            # the usual rollout record, as the lines below take it: one call fewer a line
            t = obj.get("type")
            if type(t) is str:
                problem = rollout_problem(obj)
                if problem:
                    self._invalid(lineno, t, problem)
                    return
                self.keep[idx] = 1
                p = obj.get("payload")
                if t != "response_item":
                    if isinstance(p, dict):
                        self._take_rollout(t, p)
                elif isinstance(p, dict):  # _take_rollout's part for a response item
                    pt = p.get("type")
                    if pt in _CALLS:
                        self._tools.setdefault(p["name"], None)
                    elif pt == "local_shell_call":
                        self._tools.setdefault("local_shell", None)
                return
        kind, problem = self._problem(obj)
        if problem:
            self._invalid(lineno, kind, problem)
            return
        self.keep[idx] = 1
        if self.first_ts is None:
            self.first_ts = parse_ts_ms(obj.get("timestamp"))
        if self.shape == "exec":
            self._take_exec(obj)
        elif isinstance(obj.get("payload"), dict):
            self._take_rollout(obj["type"], obj["payload"])

    def _take_exec(self, obj: dict[str, Any]) -> None:
        t = obj.get("type")
        if t == "thread.started" and isinstance(obj.get("thread_id"), str):
            self.thread_id = self.thread_id or obj["thread_id"]
        elif t in ("item.started", "item.completed"):
            name = exec_tool_name(exec_item(obj))
            if name:
                self._tools.setdefault(name, None)

    def _take_rollout(self, t: str, p: dict[str, Any]) -> None:
        if not self.turn_ends and t in ("session_meta", "event_msg"):
            self.turn_ends = records_turn_ends(t, p)
        if t == "session_meta":
            meta: dict[str, Any] = p["meta"] if isinstance(p.get("meta"), dict) else p
            if isinstance(meta.get("id"), str) and not self.thread_id:
                self.thread_id = meta["id"]
            if isinstance(meta.get("cwd"), str) and self.cwd is None:
                self.cwd = meta["cwd"]
        elif t == "turn_context":
            if isinstance(p.get("model"), str) and not self.model:
                self.model = p["model"]
            if isinstance(p.get("cwd"), str) and self.cwd is None:
                self.cwd = p["cwd"]
        elif t == "response_item" and p.get("type") in ("function_call", "custom_tool_call"):
            self._tools.setdefault(p["name"], None)
        elif t == "response_item" and p.get("type") == "local_shell_call":
            self._tools.setdefault("local_shell", None)

    # ------------------------------------------------------------------ header
    @property
    def agent(self) -> dict[str, Any]:
        return imported_agent("codex", self.model, self.tools)

    @property
    def metadata(self) -> dict[str, Any]:
        md: dict[str, Any] = {"source": "codex", "session_id": self.thread_id, "shape": self.shape}
        if self.cwd is not None:
            md["cwd"] = self.cwd
        return md

    @property
    def start_ref(self) -> Ref:
        return Ref("session", self.first_ts, 1, "session")

    # ------------------------------------------------------------------ pass 2
    def items(self) -> Iterator[Turn | Extra]:
        """Map the kept lines to turns and extension events (:mod:`.exec`, :mod:`.rollout`)."""
        if self.shape == "exec":
            return ExecMapper(self.prompt, self.stats).items(self._kept())
        mapper = RolloutMapper(self.stats, cut_at_end=self.cut_at_end, turn_ends=self.turn_ends)
        return mapper.items(self._kept_timed())
