"""A realistic synthetic Claude Code transcript of a given size (invented content, real shapes).

    python benchmarks/claude_gen.py OUT.jsonl --mb 80 [--seed 7]

The shapes follow the real sessions in examples/sessions/ and tests/importers/realistic/ and
the trial transcripts of /work/shared/trials/ (their README), and what the Claude Code CLI
writes (version 1.x-2.x):

* every ``user``/``assistant`` line carries the full envelope (``parentUuid``,
  ``isSidechain``, ``userType``, ``cwd``, ``sessionId``, ``version``, ``gitBranch``,
  ``uuid``, ``timestamp``), about 330 bytes before its message;
* one model reply is written over several ``assistant`` lines, one content block each
  (``thinking`` with a long ``signature``, ``text``, ``tool_use``), sharing ``message.id``
  and repeating the full ``usage`` (cache counts, ``service_tier``);
* parallel tool calls come back as one ``user`` line per ``tool_result``, each with a
  ``toolUseResult`` that repeats the output (Read: the file again, Edit: the original file and
  a patch, Bash: stdout/stderr), so large outputs are written twice; outputs follow a long
  tail (median about 1.5 kB, capped at 30,000 characters for Bash and 60 kB for Read, as the
  CLI truncates them); some results are errors (``<tool_use_error>``);
* images: a screenshot read by the Read tool (base64 in the result and again in
  ``toolUseResult``) and pasted images in user prompts;
* sidechains: a ``Task`` call runs a sub-agent whose lines (``isSidechain: true``,
  ``agentId``) sit in the file before the Task result;
* ``file-history-snapshot`` before each prompt, ``progress`` lines (hooks, bash), ``system``
  lines, ``summary`` lines at the top, slash commands with their ``isMeta`` caveat and
  ``<local-command-stdout>``, interruptions, a rewound (edited) prompt now and then, and an
  automatic compaction (boundary + ``isCompactSummary`` record) every ~250 turns.

Turns are short (1 to 8 model calls, most with 1 to 3 tool calls), so most lines are under
2 kB while most bytes are tool outputs. Sizes are capped, so the largest turn is about the
same in a 20 MB and an 80 MB file (the importer's memory should follow it, not the file).
Deterministic for a seed. :func:`generate` returns the shape (bytes, lines, turns, largest
turn, and counts per line kind).
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import time
from collections import Counter
from pathlib import Path
from typing import Any

WORDS = (  # noqa: SIM905
    "the a of to in is it that for on with as be this by are or from at an not have "
    "function return value error import module class def self None True False config port "
    "server client request response cache index query result test file path data "
    "données fichier naïve café τεστ データ файл ✓ — “quoted” 🙂"
).split()
CODE_LINES = [
    "def handle(request: Request) -> Response:",
    '    """Return the cached value for ``key``, or compute it."""',
    "    if key in self._cache and not self._cache[key].expired():",
    '        raise ValueError(f"bad port {port!r}: expected 1..65535")',
    '    return {"status": \'ok\', "items": [i for i in items if i.enabled]}',
    "import { readFile } from 'node:fs/promises';",
    "  const path = `${root}\\\\${name}.json`;  // Windows paths escape \\",
    "\tfor (let i = 0; i < n; i++) { total += weights[i] * xs[i]; }",
    "SELECT id, name FROM users WHERE created_at > '2026-01-01' ORDER BY id;",
    '# TODO(mira): the retry loop ignores "Retry-After" — fix before 2.0',
    "}",
    "",
    "    logger.debug('cache miss for %s (%d entries)', key, len(self._cache))",
    '    assert json.loads(body)["version"] == 2, body',
]
MODEL = "claude-sonnet-4-5-20250929"
TOOLS = (
    "Read",
    "Read",
    "Read",
    "Bash",
    "Bash",
    "Grep",
    "Glob",
    "Edit",
    "Edit",
    "Write",
    "TodoWrite",
)


class _Gen:
    def __init__(self, fh: Any, rng: random.Random) -> None:
        self.fh = fh
        self.rng = rng
        self.n = 0
        self.t_ms = 1_760_000_000_000
        self.size = 0
        self.kinds: Counter[str] = Counter()
        self.session = "5f1c2a9e-7b3d-4e21-9a0c-2d8e6f4b1a37"
        self.cwd = "/home/dev/src/tidepool"
        # a pool of "file contents" to slice from (lines with quotes, tabs, unicode)
        lines = [rng.choice(CODE_LINES) for _ in range(6000)]
        self.pool = "\n".join(lines)
        self.png = base64.b64encode(rng.randbytes(300_000)).decode()

    # ------------------------------------------------------------------ pieces
    def words(self, n: int) -> str:
        return " ".join(self.rng.choices(WORDS, k=n))

    def file_text(self, chars: int) -> str:
        start = self.rng.randrange(0, len(self.pool) - chars - 1)
        return self.pool[start : start + chars]

    def out_size(self, cap: int) -> int:
        return min(cap, int(self.rng.lognormvariate(7.3, 1.3)))  # median ~1.5 kB

    def uuid(self) -> str:
        self.n += 1
        r = self.rng.getrandbits(48)
        return (
            f"{self.n:08x}-{r >> 32:04x}-4{(r >> 20) & 0xFFF:03x}-8{(r >> 8) & 0xFFF:03x}-{r:012x}"
        )

    def ts(self, step: tuple[int, int] = (50, 4000)) -> str:
        self.t_ms += self.rng.randint(*step)
        sec, ms = divmod(self.t_ms, 1000)
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec)) + f".{ms:03d}Z"

    def emit(self, obj: dict[str, Any], kind: str) -> int:
        line = json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"
        data = line.encode("utf-8")
        self.fh.write(data)
        self.size += len(data)
        self.kinds[kind] += 1
        return len(data)

    def envelope(self, parent: str | None, typ: str, side: str | None, **kw: Any) -> dict[str, Any]:
        obj: dict[str, Any] = {
            "parentUuid": parent,
            "isSidechain": side is not None,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session,
            "version": "2.0.14",
            "gitBranch": "main",
        }
        if side is not None:
            obj["agentId"] = side
        obj.update(kw)
        obj["type"] = typ
        obj["uuid"] = self.uuid()
        obj["timestamp"] = self.ts()
        return obj

    def usage(self) -> dict[str, Any]:
        r = self.rng
        created = r.randint(0, 4000)
        return {
            "input_tokens": r.randint(3, 40),
            "cache_creation_input_tokens": created,
            "cache_read_input_tokens": r.randint(10_000, 150_000),
            "cache_creation": {
                "ephemeral_5m_input_tokens": created,
                "ephemeral_1h_input_tokens": 0,
            },
            "output_tokens": r.randint(1, 1200),
            "service_tier": "standard",
        }

    # ------------------------------------------------------------------ tools
    def tool_call(self, k: int, name: str) -> tuple[dict[str, Any], str | list[Any], Any, bool]:
        """(tool_use block, result content, toolUseResult, is_error)."""
        r = self.rng
        tid = f"toolu_01{r.getrandbits(80):020x}"
        path = f"{self.cwd}/src/{r.choice(WORDS)}_{k}.py"
        if r.random() < 0.04:  # a failed call
            inp = {"file_path": path}
            err = "<tool_use_error>File does not exist.</tool_use_error>"
            return {"type": "tool_use", "id": tid, "name": name, "input": inp}, err, err, True
        if name == "Read" and r.random() < 0.03:  # a screenshot
            data = self.png[: r.randint(40_000, 300_000) // 4 * 4]
            src = {"type": "base64", "media_type": "image/png", "data": data}
            content: Any = [{"type": "image", "source": src}]
            tur: Any = {"type": "image", "file": {"base64": data, "type": "image/png"}}
            inp = {"file_path": path.replace(".py", ".png")}
        elif name == "Read":
            text = self.file_text(self.out_size(60_000))
            numbered = "\n".join(f"{i + 1:6}→{x}" for i, x in enumerate(text.split("\n")))
            content = numbered
            nl = text.count("\n") + 1
            tur = {
                "type": "text",
                "file": {
                    "filePath": path,
                    "content": text,
                    "numLines": nl,
                    "startLine": 1,
                    "totalLines": nl,
                },
            }
            inp = {"file_path": path}
        elif name == "Bash":
            out = self.file_text(self.out_size(30_000))
            content = out
            tur = {"stdout": out, "stderr": "", "interrupted": False, "isImage": False}
            inp = {
                "command": f"pytest -q tests/test_{r.choice(WORDS)}.py",
                "description": "Run the tests",
            }
        elif name == "Edit":
            old, new = self.file_text(r.randint(40, 400)), self.file_text(r.randint(40, 400))
            original = self.file_text(self.out_size(20_000))
            content = f"The file {path} has been updated. Here's the result of running `cat -n`:\n"
            content += self.file_text(r.randint(200, 1500))
            tur = {
                "filePath": path,
                "oldString": old,
                "newString": new,
                "originalFile": original,
                "structuredPatch": [
                    {
                        "oldStart": 10,
                        "oldLines": 3,
                        "newStart": 10,
                        "newLines": 4,
                        "lines": [f"-{old}", f"+{new}"],
                    }
                ],
                "userModified": False,
                "replaceAll": False,
            }
            inp = {"file_path": path, "old_string": old, "new_string": new}
        elif name == "Write":
            body = self.file_text(self.out_size(20_000))
            content = f"File created successfully at: {path}"
            tur = {"type": "create", "filePath": path, "content": body, "structuredPatch": []}
            inp = {"file_path": path, "content": body}
        elif name == "TodoWrite":
            todos = [
                {
                    "content": self.words(8),
                    "status": r.choice(["pending", "in_progress", "completed"]),
                    "activeForm": self.words(6),
                }
                for _ in range(r.randint(2, 7))
            ]
            content = "Todos have been modified successfully."
            tur = {"oldTodos": todos[1:], "newTodos": todos}
            inp = {"todos": todos}
        else:  # Grep, Glob
            files = [f"src/{r.choice(WORDS)}_{i}.py" for i in range(r.randint(1, 40))]
            content = "\n".join(files)
            tur = {"mode": "files_with_matches", "filenames": files, "numFiles": len(files)}
            inp = {"pattern": r.choice(WORDS), "path": self.cwd}
        return {"type": "tool_use", "id": tid, "name": name, "input": inp}, content, tur, False

    # ------------------------------------------------------------------ a reply
    def reply(
        self, parent: str, side: str | None, final: bool, calls: list[str]
    ) -> tuple[str, int]:
        r = self.rng
        mid = f"msg_01{r.getrandbits(96):024x}"
        req = f"req_011C{r.getrandbits(96):024x}"
        usage = self.usage()
        blocks: list[dict[str, Any]] = []
        if r.random() < 0.6:
            sig = base64.b64encode(r.randbytes(r.randint(150, 1800))).decode()
            blocks.append(
                {"type": "thinking", "thinking": self.words(r.randint(15, 250)), "signature": sig}
            )
        if final or r.random() < 0.7:
            blocks.append({"type": "text", "text": self.words(r.randint(5, 300 if final else 60))})
        uses = []
        results = []
        for k, name in enumerate(calls):
            use, content, tur, err = self.tool_call(k, name)
            blocks.append(use)
            uses.append(use)
            results.append((use, content, tur, err))
        size = 0
        for i, b in enumerate(blocks):
            last = i == len(blocks) - 1
            stop = ("tool_use" if uses else "end_turn") if last else None
            msg = {
                "id": mid,
                "type": "message",
                "role": "assistant",
                "model": MODEL,
                "content": [b],
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": usage,
            }
            obj = self.envelope(parent, "assistant", side, message=msg, requestId=req)
            parent = obj["uuid"]
            size += self.emit(obj, "sidechain" if side else "assistant")
        for use, content, tur, err in results:
            if side is None and use["name"] == "Bash" and r.random() < 0.5:
                for _ in range(r.randint(1, 4)):
                    size += self.emit(
                        {
                            "parentUuid": parent,
                            "isSidechain": False,
                            "type": "progress",
                            "data": {
                                "type": "bash_progress",
                                "output": self.words(12),
                                "elapsedTimeSeconds": 2,
                            },
                            "toolUseID": use["id"],
                            "parentToolUseID": use["id"],
                            "uuid": self.uuid(),
                            "timestamp": self.ts((50, 500)),
                            "sessionId": self.session,
                        },
                        "progress",
                    )
            block: dict[str, Any] = {
                "tool_use_id": use["id"],
                "type": "tool_result",
                "content": content,
            }
            if err:
                block["is_error"] = True
            obj = self.envelope(
                parent,
                "user",
                side,
                message={"role": "user", "content": [block]},
                toolUseResult=f"Error: {content}" if err else tur,
            )
            parent = obj["uuid"]
            size += self.emit(obj, "sidechain" if side else "tool_result")
        return parent, size

    # ------------------------------------------------------------------ sidechain
    def sidechain(self, parent: str, prompt: str) -> tuple[str, int, dict[str, Any]]:
        """A Task sub-agent: its lines (isSidechain) and the Task result's toolUseResult."""
        r = self.rng
        agent = f"{r.getrandbits(32):08x}"
        obj = self.envelope(None, "user", agent, message={"role": "user", "content": prompt})
        side_parent = obj["uuid"]
        size = self.emit(obj, "sidechain")
        steps = r.randint(2, 6)
        for s in range(steps):
            final = s == steps - 1
            calls = (
                []
                if final
                else [r.choice(("Read", "Grep", "Glob", "Bash")) for _ in range(r.randint(1, 3))]
            )
            side_parent, n = self.reply(side_parent, agent, final, calls)
            size += n
        summary = self.words(r.randint(60, 400))
        tur = {
            "status": "completed",
            "prompt": prompt,
            "agentId": agent,
            "content": [{"type": "text", "text": summary}],
            "totalDurationMs": r.randint(5000, 90000),
            "totalTokens": r.randint(5000, 60000),
            "totalToolUseCount": steps - 1,
        }
        return parent, size, {"summary": summary, "tur": tur}

    # ------------------------------------------------------------------ a turn
    def prompt_content(self) -> Any:
        r = self.rng
        text = self.words(r.randint(4, 80))
        if r.random() < 0.02:  # a pasted screenshot
            data = self.png[: r.randint(40_000, 250_000) // 4 * 4]
            return [
                {"type": "text", "text": text},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": data},
                },
            ]
        return text

    def command(self, parent: str | None) -> tuple[str, int]:
        size = 0
        obj = self.envelope(
            parent,
            "user",
            None,
            message={
                "role": "user",
                "content": "Caveat: The messages below were generated by the user while running "
                "local commands. DO NOT respond to these messages or otherwise consider them in "
                "your response unless the user explicitly asks you to.",
            },
            isMeta=True,
        )
        size += self.emit(obj, "meta")
        cmd = (
            "<command-name>/model</command-name>\n<command-message>model</command-message>\n"
            "<command-args></command-args>"
        )
        obj = self.envelope(obj["uuid"], "user", None, message={"role": "user", "content": cmd})
        size += self.emit(obj, "meta")
        out = "<local-command-stdout>Set model to Sonnet 4.5</local-command-stdout>"
        obj = self.envelope(obj["uuid"], "user", None, message={"role": "user", "content": out})
        size += self.emit(obj, "meta")
        return obj["uuid"], size

    def turn(self, parent: str | None, turn_no: int) -> tuple[str, int, str | None]:
        """One turn; returns (last uuid, bytes, the prompt's parent for a later rewind)."""
        r = self.rng
        size = 0
        if r.random() < 0.03:
            parent, n = self.command(parent)
            size += n
        size += self.emit(
            {
                "type": "file-history-snapshot",
                "messageId": self.uuid(),
                "snapshot": {
                    "messageId": f"m{turn_no}",
                    "trackedFileBackups": {
                        f"src/{w}.py": {
                            "backupFileName": f"{r.getrandbits(64):016x}@v{turn_no}",
                            "version": turn_no,
                            "backupTime": self.ts((0, 1)),
                        }
                        for w in r.sample(WORDS, r.randint(0, 6))
                    },
                    "timestamp": self.ts((0, 1)),
                },
                "isSnapshotUpdate": False,
            },
            "snapshot",
        )
        prompt_parent = parent
        obj = self.envelope(
            parent, "user", None, message={"role": "user", "content": self.prompt_content()}
        )
        parent = obj["uuid"]
        size += self.emit(obj, "prompt")
        steps = min(8, 1 + int(r.expovariate(0.45)))
        for s in range(steps):
            final = s == steps - 1
            if final:
                calls: list[str] = []
            elif r.random() < 0.04:
                calls = ["Task"]
            else:
                calls = [r.choice(TOOLS) for _ in range(1 if r.random() < 0.6 else r.randint(2, 4))]
            if calls == ["Task"]:
                parent, n = self.task(parent)
                size += n
                continue
            if not final and r.random() < 0.01:  # the user interrupts a tool call
                parent, n = self.reply(parent, None, False, calls[:1])
                size += n
                obj = self.envelope(
                    parent,
                    "user",
                    None,
                    message={
                        "role": "user",
                        "content": [
                            {"type": "text", "text": "[Request interrupted by user for tool use]"}
                        ],
                    },
                )
                return obj["uuid"], size + self.emit(obj, "interrupt"), prompt_parent
            parent, n = self.reply(parent, None, final, calls)
            size += n
        if r.random() < 0.15:
            obj = self.envelope(
                parent,
                "system",
                None,
                subtype="informational",
                content=f"Running PostToolUse hooks… ({r.randint(1, 3)} done)",
                isMeta=False,
                level="info",
            )
            parent = obj["uuid"]
            size += self.emit(obj, "system")
        return parent, size, prompt_parent

    def task(self, parent: str) -> tuple[str, int]:
        r = self.rng
        tid = f"toolu_01{r.getrandbits(80):020x}"
        prompt = self.words(r.randint(20, 120))
        use = {
            "type": "tool_use",
            "id": tid,
            "name": "Task",
            "input": {
                "description": self.words(4),
                "prompt": prompt,
                "subagent_type": "general-purpose",
            },
        }
        mid = f"msg_01{r.getrandbits(96):024x}"
        msg = {
            "id": mid,
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [use],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": self.usage(),
        }
        obj = self.envelope(parent, "assistant", None, message=msg, requestId=f"req_{mid}")
        parent = obj["uuid"]
        size = self.emit(obj, "assistant")
        parent, n, res = self.sidechain(parent, prompt)
        size += n
        block = {
            "tool_use_id": tid,
            "type": "tool_result",
            "content": [{"type": "text", "text": res["summary"]}],
        }
        obj = self.envelope(
            parent,
            "user",
            None,
            message={"role": "user", "content": [block]},
            toolUseResult=res["tur"],
        )
        return obj["uuid"], size + self.emit(obj, "tool_result")

    def compaction(self, parent: str) -> str:
        obj = self.envelope(
            None,
            "system",
            None,
            subtype="compact_boundary",
            content="Conversation compacted",
            isMeta=False,
            level="info",
            logicalParentUuid=parent,
            compactMetadata={"trigger": "auto", "preTokens": 155_000},
        )
        self.emit(obj, "system")
        text = (
            "This session is being continued from a previous conversation that ran out of context. "
            + self.words(600)
        )
        obj2 = self.envelope(
            obj["uuid"],
            "user",
            None,
            message={"role": "user", "content": text},
            isCompactSummary=True,
        )
        self.emit(obj2, "compact")
        return obj2["uuid"]


def generate(path: Path, target_mb: float, seed: int = 7) -> dict[str, Any]:
    """Write a realistic transcript of about ``target_mb`` MB to ``path``; return its shape:
    ``bytes``, ``lines``, ``turns``, ``largest_turn_bytes`` and ``kinds`` (lines per kind)."""
    rng = random.Random(seed)
    target = int(target_mb * 1_000_000)
    turns = 0
    largest = 0
    with open(path, "wb") as fh:
        g = _Gen(fh, rng)
        for i in range(2):
            g.emit(
                {
                    "type": "summary",
                    "summary": g.words(6),
                    "leafUuid": f"00000000-0000-4000-8000-{i:012x}",
                },
                "summary",
            )
        parent: str | None = None
        while g.size < target:
            turns += 1
            if turns % 250 == 0 and parent is not None:
                parent = g.compaction(parent)
            last, size, prompt_parent = g.turn(parent, turns)
            largest = max(largest, size)
            # now and then a rewound prompt: the next turn hangs off the same parent (a fork)
            rewind = rng.random() < 0.005 and prompt_parent is not None
            parent = prompt_parent if rewind else last
    return {
        "bytes": g.size,
        "lines": sum(g.kinds.values()),
        "turns": turns,
        "largest_turn_bytes": largest,
        "kinds": dict(g.kinds),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--mb", type=float, default=80.0)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    print(json.dumps(generate(args.out, args.mb, args.seed)))


if __name__ == "__main__":
    main()
