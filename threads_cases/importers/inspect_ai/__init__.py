"""inspect-ai eval logs (``.eval`` archives and ``.json`` logs) as threads, one sample and
epoch per thread (spec/importers.md section 11).

:mod:`.archive` reads the file and lists its samples; :mod:`.sample` maps one sample's
events to turns; :mod:`.messages` converts contents. This module picks the sample
(``sample`` / ``epoch``: the first of the file by default, with a note naming the others),
builds the header and decides how the last turn ends:

* the sample's ``limit`` (``{type, limit}``) fails it ``<type>_limit``; its ``error``
  fails it ``sample_error`` with the error's message;
* otherwise a last reply that calls tools is the agent's answer (an agent ends by calling
  ``submit()``: no model call follows): each such call becomes a text block of its input's
  JSON and ``x_inspect.submission {name, input, result?}``, the stop reason ``end_turn``;
* a sample cut short (the file stops inside it) fails its open turn ``interrupted`` with a
  note, the event the cut stopped in dropped.

Reason codes: ``import_invalid`` (not an inspect-ai log; no sample; with ``strict``, a damaged
file or event, with its JSON pointer), ``invalid_request`` (``sample`` / ``epoch`` naming
no sample of the file: the message lists them), ``io_error``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...core.errors import CaseError
from ..common import Extra, Ref, Stats, Turn, cut_short, imported_agent, stats_for
from ..cutjson import CUT_HINT
from ..isotime import iso_ms
from .archive import INSPECT_HINT, LogFile, SampleRef, read_log_file
from .sample import SampleMapper

__all__ = ["InspectSource"]


def _list(samples: list[SampleRef]) -> str:
    shown = ", ".join(f"{s.id} (epoch {s.epoch})" for s in samples[:12])
    return shown + (f", ... ({len(samples)} in all)" if len(samples) > 12 else "")


class InspectSource:
    """One sample and epoch of an inspect-ai log, read and ready to map (:meth:`items`)."""

    format = "inspect-ai"

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        sample: str | None = None,
        epoch: int | None = None,
        strict: bool = False,
        stats: Stats | None = None,
    ) -> None:
        self.path = Path(path)
        self.file = str(path)
        self.strict = strict
        self.stats = stats_for(stats, strict=strict, file=str(path))
        self.log: LogFile = read_log_file(self.path, strict=strict)
        self.ref = self._pick(sample, epoch)
        try:
            doc, self.open_path = self.ref.load()
        except ValueError as exc:  # the sample's member is not JSON, nor JSON cut short
            raise self._refuse(str(exc)) from None
        for line, why in self.log.cut:  # under --strict the first is refused
            self.stats.warn(line, "import_repaired", "cut_record", why, hint=CUT_HINT)
        if not isinstance(doc, dict):
            raise self._refuse("the sample is not a JSON object", self.ref.where)
        self.doc: dict[str, Any] = doc
        events = doc.get("events")
        if not events and isinstance(doc.get("transcript"), dict):
            events = doc["transcript"].get("events")  # older logs
        self.events: list[Any] = events if isinstance(events, list) else []
        if self.open_path and self.open_path[0] == "events" and len(self.open_path) > 2:
            k = self.open_path[1]
            if isinstance(k, int):
                self.events = self.events[:k]  # the event the file stops inside is partial
        self.cut = bool(self.log.cut) and self.open_path is not None
        self._scan()

    def _refuse(self, message: str, pointer: str | None = None) -> CaseError:
        return CaseError(
            "import_invalid", message, file=self.file, pointer=pointer, hint=INSPECT_HINT
        )

    def _pick(self, sample: str | None, epoch: int | None) -> SampleRef:
        samples = self.log.samples
        if not samples:
            raise self._refuse("the log holds no sample (was it written with log_samples off?)")
        found = [
            s
            for s in samples
            if (sample is None or s.id == sample) and (epoch is None or s.epoch == epoch)
        ]
        if not found:
            asked = " ".join(
                f"{what} {value}"
                for what, value in (("sample", sample), ("epoch", epoch))
                if value is not None
            )
            raise CaseError(
                "invalid_request",
                f"no {asked} in the log; it holds {_list(samples)}",
                file=self.file,
                hint="pass --sample ID and --epoch N of one of them",
            )
        if len(samples) > 1 and (sample is None or epoch is None):
            self.stats.notes.append(
                f"{self.file}: the log holds {len(samples)} samples ({_list(samples)}): "
                f"imported sample {found[0].id} epoch {found[0].epoch}; pick another with "
                "--sample ID --epoch N"
            )
        return found[0]

    def _scan(self) -> None:
        """The model, system text and tools (the first model event's)."""
        self.model, self.system = "", ""
        tools: dict[str, None] = {}
        mapper = SampleMapper(self.doc, self.ref.where, Stats(), lambda *a, **k: None)
        for k, ev in enumerate(self.events):
            if not isinstance(ev, dict) or mapper.in_scoring(ev) or ev.get("event") != "model":
                continue
            if not self.model and isinstance(ev.get("model"), str):
                self.model = ev["model"]
                inp = mapper.input_of(k, ev)
                self.system = "\n\n".join(
                    mapper.c.text(m.get("content")) if isinstance(m.get("content"), str) else ""
                    for m in inp
                    if isinstance(m, dict) and m.get("role") == "system"
                )
            for t in ev.get("tools") or []:
                if isinstance(t, dict) and isinstance(t.get("name"), str) and t["name"]:
                    tools.setdefault(t["name"], None)
            out = ev.get("output")
            for c in _calls_of(out):
                tools.setdefault(c, None)
        spec = self.log.header.get("eval")
        if not self.model and isinstance(spec, dict) and isinstance(spec.get("model"), str):
            self.model = spec["model"]
        self.tools = list(tools)

    # ------------------------------------------------------------------ header
    @property
    def thread_id(self) -> str:
        stem = self.path.name.removesuffix(".eval").removesuffix(".json") or "eval"
        return f"{stem}:{self.ref.id}:{self.ref.epoch}"

    @property
    def agent(self) -> dict[str, Any]:
        agent = imported_agent("inspect-ai", self.model, self.tools)
        agent["system"] = self.system
        return agent

    @property
    def metadata(self) -> dict[str, Any]:
        md: dict[str, Any] = {
            "source": "inspect-ai",
            "session_id": self.thread_id,
            "sample_id": self.ref.id,
            "epoch": self.ref.epoch,
        }
        spec = self.log.header.get("eval")
        if isinstance(spec, dict) and isinstance(spec.get("task"), str):
            md["task"] = spec["task"]
        return md

    @property
    def start_ref(self) -> Ref:
        first = next((e for e in self.events if isinstance(e, dict)), {})
        return Ref("session", iso_ms(first.get("timestamp")), 1, "sample")

    # ------------------------------------------------------------------ mapping
    def _warn(self, k: int, reason: str, message: str, *, code: str = "import_skipped") -> None:
        where = f"{self.ref.where}#/events/{k}"
        if self.strict and code == "import_skipped":
            raise self._refuse(f"{where}: {message}", f"/events/{k}")
        self.stats.warn(k + 1, code, reason, f"{where}: {message}")

    def items(self) -> Iterator[Turn | Extra]:
        mapper = SampleMapper(self.doc, self.ref.where, self.stats, self._warn, self.file)
        made = 0
        for item in (
            mapper.items(self.events)
            if self.events
            else mapper.from_messages(self.doc.get("messages"))
        ):
            made += isinstance(item, Turn)
            yield item
        turn = mapper.turn
        given = mapper.c.content(self.doc.get("input"))
        if turn is None and self.cut and given:
            # the log stops before the first model call: the turn of the sample's input
            turn = Turn(given, self.start_ref)
        if turn is None:
            return
        if turn.content is None and not made and given:
            # no model call said the user's message (events before any, or none at all):
            # the sample's first turn is its input's (spec/importers.md 11)
            turn.content = given
        self._end(turn)
        yield turn

    def _cut_short(self, turn: Turn) -> None:
        """The open turn of a sample its log stops inside: interrupted, the note naming where
        the text stops (the ``.json`` log's line, or the member's line and column) and the
        event dropped."""
        ref, path = self.ref, self.open_path or []
        stop = self.log.stops.get(ref.where) or self.log.stops.get("the log", "")
        doc = ref.where if ref.where in self.log.stops else "the log"
        why = f"{doc} stops at {stop.removeprefix(doc).strip()}" if stop else f"{doc} stops"
        why += f", inside sample {ref.id} (epoch {ref.epoch})"
        if len(path) > 1 and path[0] == "events" and isinstance(path[1], int):
            why += f", in its event {path[1] + 1} (/events/{path[1]}), which is dropped"
        cut_short(turn, why, self.stats, place=stop.partition(" column ")[0] or None)

    def _end(self, turn: Turn) -> None:
        """How the sample's last turn ends (module docstring)."""
        replies = turn.replies
        last = replies[-1] if replies else None
        end_ref = last.ref if last is not None else turn.ref
        limit, error = self.doc.get("limit"), self.doc.get("error")
        if turn.failed is not None:
            return
        if self.cut:
            self._cut_short(turn)
            return
        if isinstance(limit, dict) and isinstance(limit.get("type"), str):
            kind = limit["type"]
            turn.failed = (
                f"{kind}_limit",
                f"the sample reached its {kind} limit ({limit.get('limit')})",
                end_ref,
            )
        elif isinstance(error, dict):
            turn.failed = (
                "sample_error",
                str(error.get("message") or "the sample failed"),
                end_ref,
            )
        elif last is not None and last.tool_uses():
            blocks: list[dict[str, Any]] = []
            for b in last.blocks:
                if b.get("type") != "tool_use":
                    blocks.append(b)
                    continue
                text = json.dumps(b["input"], ensure_ascii=False, separators=(",", ":"))
                blocks.append({"type": "text", "text": text})
                data: dict[str, Any] = {"name": b["name"], "input": b["input"]}
                res = last.results.pop(b["id"], None)
                if res is not None:
                    data["result"] = res.content
                turn.items.append(Extra("x_inspect.submission", data, last.ref, "answer"))
            last.blocks = blocks
            last.stop_reason = "end_turn"


def _calls_of(output: Any) -> list[str]:
    choices = output.get("choices") if isinstance(output, dict) else None
    msg = (
        choices[0].get("message")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict)
        else None
    )
    calls = msg.get("tool_calls") if isinstance(msg, dict) else None
    return [
        c["function"]
        for c in calls or []
        if isinstance(c, dict) and isinstance(c.get("function"), str) and c["function"]
    ]
