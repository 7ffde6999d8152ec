"""The inspect-ai and OpenHands importers against orjson's parse of the same file, in one run.

    python benchmarks/eval_traj_bench.py              # the default sizes, median of 5 runs
    python benchmarks/eval_traj_bench.py --steps 400  # longer agent loops (bigger files)

Generates under benchmarks/.work/eval-traj/ one agent loop of ``--steps`` tool calls (each
result a few KB) in four files, as their writers lay them out:

* an inspect-ai ``.json`` log whose model events carry their whole ``input`` (older logs:
  the file grows with the square of the steps),
* the same sample as a ``.eval`` archive whose model events carry ``input_refs`` into the
  message pool (newer logs),
* an OpenHands trajectory (a JSON list of actions and observations with their
  ``tool_call_metadata``).

For each file it measures, in the same process and run, the CPU time of
``import_to_file(FORMAT, ...)`` (the whole importer: reading, rebuilding inputs, pairing,
writing the canonical, checked log) and of the fastest parse of the same bytes (orjson;
for the archive, reading its members with zipfile and parsing each with orjson), and prints
the ratio (importer / parser). The aim (issue 31) is at most 4x.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import statistics
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from threads_cases.importers import import_to_file  # noqa: E402

WORK = ROOT / "benchmarks" / ".work" / "eval-traj"
WORDS = [
    "the",
    "test",
    "reads",
    "each",
    "line",
    "of",
    "the",
    "file",
    "and",
    "the",
    "output",
    "matches",
    "when",
    "it",
    "passes",
]


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _ts(k: int) -> str:
    return f"2026-03-04T{10 + k // 3600:02d}:{k // 60 % 60:02d}:{k % 60:02d}.000000+00:00"


def inspect_sample(steps: int, *, pooled: bool, seed: int = 1) -> dict[str, Any]:
    rng = random.Random(seed)
    msgs: list[dict[str, Any]] = [
        {"id": "sys", "role": "system", "content": "You are an engineer."},
        {"id": "task", "role": "user", "content": "Fix the failing test."},
    ]
    events: list[dict[str, Any]] = []
    for s in range(steps + 1):
        last = s == steps
        out: dict[str, Any] = {"id": f"a{s}", "role": "assistant", "content": _text(rng, 40)}
        if not last:
            out["tool_calls"] = [
                {"id": f"call_{s}", "function": "bash", "arguments": {"cmd": f"cat m{s}.py"}}
            ]
        ev: dict[str, Any] = {
            "event": "model",
            "timestamp": _ts(2 * s),
            "model": "m",
            "input": [] if pooled else list(msgs),
            "tools": [{"name": "bash", "description": "", "parameters": {}}],
            "tool_choice": "auto",
            "config": {},
            "output": {
                "choices": [{"message": out, "stop_reason": "stop" if last else "tool_calls"}],
                "usage": {"input_tokens": 100 * s, "output_tokens": 30},
            },
        }
        if pooled:
            ev["input_refs"] = [[0, len(msgs)]]
        events.append(ev)
        msgs.append(out)
        if not last:
            result = _text(rng, 600)
            events.append(
                {
                    "event": "tool",
                    "timestamp": _ts(2 * s + 1),
                    "id": f"call_{s}",
                    "function": "bash",
                    "arguments": {"cmd": f"cat m{s}.py"},
                    "result": result,
                }
            )
            msgs.append(
                {"id": f"t{s}", "role": "tool", "tool_call_id": f"call_{s}", "content": result}
            )
    sample: dict[str, Any] = {
        "id": 1,
        "epoch": 1,
        "input": "Fix the failing test.",
        "events": events,
    }
    if pooled:
        sample["events_data"] = {"messages": msgs, "calls": []}
    return sample


def write_inspect(json_path: Path, eval_path: Path, steps: int) -> None:
    header = {"version": 2, "status": "success", "eval": {"task": "t", "model": "m"}}
    doc = {**header, "samples": [inspect_sample(steps, pooled=False)]}
    json_path.write_text(json.dumps(doc, indent=2))
    with zipfile.ZipFile(eval_path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("header.json", json.dumps(header))
        zf.writestr("samples/1_epoch_1.json", json.dumps(inspect_sample(steps, pooled=True)))


def write_openhands(path: Path, steps: int, seed: int = 2) -> None:
    rng = random.Random(seed)
    evs: list[dict[str, Any]] = [
        {
            "id": 0,
            "timestamp": _ts(0),
            "source": "user",
            "action": "message",
            "message": "Fix it.",
            "args": {"content": "Fix it."},
        },
    ]
    for s in range(steps):
        cid = f"toolu_{s}"
        resp = {
            "id": f"r{s}",
            "model": "m",
            "choices": [
                {
                    "message": {
                        "content": _text(rng, 40),
                        "tool_calls": [
                            {
                                "id": cid,
                                "function": {
                                    "name": "execute_bash",
                                    "arguments": json.dumps({"command": f"cat m{s}.py"}),
                                },
                            }
                        ],
                    }
                }
            ],
            "usage": {"prompt_tokens": 100 * s, "completion_tokens": 30},
        }
        meta = {
            "function_name": "execute_bash",
            "tool_call_id": cid,
            "model_response": resp,
            "total_calls_in_response": 1,
        }
        evs.append(
            {
                "id": 2 * s + 1,
                "timestamp": _ts(2 * s + 1),
                "source": "agent",
                "action": "run",
                "message": "",
                "args": {"command": f"cat m{s}.py"},
                "tool_call_metadata": meta,
            }
        )
        evs.append(
            {
                "id": 2 * s + 2,
                "timestamp": _ts(2 * s + 2),
                "source": "agent",
                "observation": "run",
                "cause": 2 * s + 1,
                "content": _text(rng, 600),
                "extras": {"metadata": {"exit_code": 0}},
                "tool_call_metadata": meta,
            }
        )
    evs.append(
        {
            "id": 2 * steps + 1,
            "timestamp": _ts(2 * steps + 1),
            "source": "agent",
            "action": "message",
            "message": "Done.",
            "args": {"content": "Done."},
        }
    )
    path.write_text(json.dumps(evs, indent=2))


def _cpu(fn: Any) -> float:
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def _parse(path: Path) -> None:
    data = path.read_bytes()
    if data[:2] == b"PK":
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            for name in zf.namelist():
                orjson.loads(zf.read(name))
    else:
        orjson.loads(data)


def measure(fmt: str, path: Path, runs: int) -> tuple[float, float]:
    """Median CPU seconds of the importer and of the fastest parse of the same file."""
    out = WORK / "out.jsonl"
    imp, parse = [], []
    for _ in range(runs):  # interleaved, so a slow minute slows both
        parse.append(_cpu(lambda: _parse(path)))
        imp.append(_cpu(lambda: import_to_file(fmt, path, out)))
    return statistics.median(imp), statistics.median(parse)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=150, help="tool steps per agent loop")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    files = {
        "inspect-ai .json, inline inputs": ("inspect-ai", WORK / "inline.json"),
        "inspect-ai .eval, pooled inputs": ("inspect-ai", WORK / "pooled.eval"),
        "openhands trajectory": ("openhands", WORK / "trajectory.json"),
    }
    write_inspect(
        files["inspect-ai .json, inline inputs"][1],
        files["inspect-ai .eval, pooled inputs"][1],
        args.steps,
    )
    write_openhands(files["openhands trajectory"][1], args.steps)
    worst = 0.0
    print(f"{'file':<32} {'MB':>6} {'import s':>9} {'orjson s':>9} {'ratio':>6}")
    for name, (fmt, path) in files.items():
        imp, parse = measure(fmt, path, args.runs)
        ratio = imp / parse
        worst = max(worst, ratio)
        mb = path.stat().st_size / 1e6
        print(f"{name:<32} {mb:>6.1f} {imp:>9.3f} {parse:>9.3f} {ratio:>6.2f}")
    print(f"worst ratio {worst:.2f} (aim: <= 4)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
