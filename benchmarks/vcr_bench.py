"""The VCR cassette importer against the fastest YAML parser of the same file, in one run.

    python benchmarks/vcr_bench.py              # the default sizes, median of 5 runs
    python benchmarks/vcr_bench.py --steps 120  # longer agent loops (bigger files)

Generates under benchmarks/.work/ three cassettes of one agent loop each, as vcrpy writes
them (each request repeats the whole conversation, as the APIs require, so a cassette grows
with the square of its steps): the Anthropic Messages API non-streamed and streamed (SSE)
and the OpenAI Responses API streamed, every step a tool call with a result of a few KB.

For each file it measures, in the same process and run, the CPU time of

* ``import_to_file("vcr", ...)``: reading, decoding, reassembling, building the turns and
  writing the canonical, checked log (the whole importer), and
* ``yaml.load(data, Loader=yaml.CSafeLoader)`` of the same bytes: libyaml, the fastest
  parser of the format, reading the file only,

and prints the ratio (importer / parser). The aim (issue 31) is at most 4x.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from threads_cases.importers import import_to_file  # noqa: E402

WORK = ROOT / "benchmarks" / ".work" / "vcr"
A_URI = "https://api.anthropic.com/v1/messages"
R_URI = "https://api.openai.com/v1/responses"
WORDS = [
    "the",
    "file",
    "reads",
    "lines",
    "of",
    "text",
    "and",
    "the",
    "test",
    "passes",
    "when",
    "the",
    "output",
    "matches",
]


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _dump(path: Path, interactions: list[dict[str, Any]]) -> None:
    doc = {"interactions": interactions, "version": 1}
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    path.write_text(yaml.dump(doc, Dumper=dumper, default_flow_style=False, width=1 << 20))


def _inter(uri: str, body: dict[str, Any], text: str, ctype: str) -> dict[str, Any]:
    return {
        "request": {
            "body": json.dumps(body, separators=(",", ":")),
            "headers": {"content-type": ["application/json"]},
            "method": "POST",
            "uri": uri,
        },
        "response": {
            "body": {"string": text},
            "headers": {"content-type": [ctype], "date": ["Mon, 02 Mar 2026 09:00:00 GMT"]},
            "status": {"code": 200, "message": "OK"},
        },
    }


def _sse(events: list[dict[str, Any]]) -> str:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def _anthropic_stream(mid: str, blocks: list[dict[str, Any]], stop: str) -> str:
    evs: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"id": mid, "model": "claude", "usage": {}}}
    ]
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            evs.append(
                {
                    "type": "content_block_start",
                    "index": i,
                    "content_block": {"type": "text", "text": ""},
                }
            )
            words = b["text"].split(" ")
            for k in range(0, len(words), 4):
                piece = " ".join(words[k : k + 4]) + " "
                evs.append(
                    {
                        "type": "content_block_delta",
                        "index": i,
                        "delta": {"type": "text_delta", "text": piece},
                    }
                )
        else:
            start = {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}
            evs.append({"type": "content_block_start", "index": i, "content_block": start})
            args = json.dumps(b["input"])
            for k in range(0, len(args), 12):
                delta = {"type": "input_json_delta", "partial_json": args[k : k + 12]}
                evs.append({"type": "content_block_delta", "index": i, "delta": delta})
        evs.append({"type": "content_block_stop", "index": i})
    evs.append(
        {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 30}}
    )
    evs.append({"type": "message_stop"})
    return _sse(evs)


def anthropic(path: Path, steps: int, *, stream: bool, seed: int = 1) -> None:
    rng = random.Random(seed)
    msgs: list[dict[str, Any]] = [{"role": "user", "content": "Fix the failing test."}]
    out = []
    tools = [
        {"name": "read_file", "description": "Read a file", "input_schema": {"type": "object"}}
    ]
    for s in range(steps + 1):
        last = s == steps
        blocks: list[dict[str, Any]] = [{"type": "text", "text": _text(rng, 40)}]
        if not last:
            blocks.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_{s:04d}",
                    "name": "read_file",
                    "input": {"path": f"src/m{s}.py"},
                }
            )
        stop = "end_turn" if last else "tool_use"
        body = {
            "model": "claude",
            "max_tokens": 4096,
            "tools": tools,
            "messages": list(msgs),
            "stream": stream,
        }
        if stream:
            out.append(
                _inter(
                    A_URI, body, _anthropic_stream(f"msg_{s}", blocks, stop), "text/event-stream"
                )
            )
        else:
            resp = {
                "id": f"msg_{s}",
                "type": "message",
                "role": "assistant",
                "model": "claude",
                "content": blocks,
                "stop_reason": stop,
                "usage": {"input_tokens": 100 * s, "output_tokens": 30},
            }
            out.append(_inter(A_URI, body, json.dumps(resp), "application/json"))
        msgs.append({"role": "assistant", "content": blocks})
        if not last:
            result = {
                "type": "tool_result",
                "tool_use_id": f"toolu_{s:04d}",
                "content": _text(rng, 600),
            }
            msgs.append({"role": "user", "content": [result]})
    _dump(path, out)


def responses(path: Path, steps: int, seed: int = 2) -> None:
    rng = random.Random(seed)
    items: list[dict[str, Any]] = [{"role": "user", "content": "Run the build."}]
    out = []
    tools = [{"type": "function", "name": "run", "parameters": {"type": "object"}}]
    for s in range(steps + 1):
        last = s == steps
        if last:
            output = [
                {
                    "type": "message",
                    "id": f"msg_{s}",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": _text(rng, 40)}],
                }
            ]
        else:
            output = [
                {
                    "type": "function_call",
                    "id": f"fc_{s}",
                    "call_id": f"call_{s}",
                    "name": "run",
                    "arguments": json.dumps({"cmd": f"make step{s}"}),
                }
            ]
        resp = {
            "id": f"resp_{s}",
            "object": "response",
            "status": "completed",
            "model": "gpt",
            "output": output,
            "usage": {"input_tokens": 100 * s, "output_tokens": 20},
        }
        evs = [
            {
                "type": "response.created",
                "response": {**resp, "status": "in_progress", "output": []},
            }
        ]
        for k, it in enumerate(output):
            evs.append({"type": "response.output_item.added", "output_index": k, "item": it})
            evs.append({"type": "response.output_item.done", "output_index": k, "item": it})
        evs.append({"type": "response.completed", "response": resp})
        body = {"model": "gpt", "stream": True, "tools": tools, "input": list(items)}
        out.append(_inter(R_URI, body, _sse(evs), "text/event-stream"))
        items.extend(output)
        if not last:
            items.append(
                {"type": "function_call_output", "call_id": f"call_{s}", "output": _text(rng, 600)}
            )
    _dump(path, out)


def _cpu(fn: Any) -> float:
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def measure(path: Path, runs: int) -> tuple[float, float]:
    """Median CPU seconds of the importer and of libyaml's parse of the same bytes."""
    loader = getattr(yaml, "CSafeLoader", None)
    if loader is None:
        raise SystemExit("PyYAML without libyaml: the baseline would not be the fastest parser")
    out = WORK / "out.jsonl"
    data = path.read_bytes()
    imp, parse = [], []
    for _ in range(runs):  # interleaved, so a slow minute slows both
        parse.append(_cpu(lambda: yaml.load(data, Loader=loader)))
        imp.append(_cpu(lambda: import_to_file("vcr", path, out)))
    return statistics.median(imp), statistics.median(parse)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=60, help="tool steps per agent loop")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    files = {
        "anthropic, non-streamed": WORK / "anthropic.yaml",
        "anthropic, streamed": WORK / "anthropic-stream.yaml",
        "openai responses, streamed": WORK / "responses-stream.yaml",
    }
    anthropic(files["anthropic, non-streamed"], args.steps, stream=False)
    anthropic(files["anthropic, streamed"], args.steps, stream=True)
    responses(files["openai responses, streamed"], args.steps)
    worst = 0.0
    print(f"{'cassette':<28} {'MB':>6} {'import s':>9} {'libyaml s':>10} {'ratio':>6}")
    for name, path in files.items():
        imp, parse = measure(path, args.runs)
        ratio = imp / parse
        worst = max(worst, ratio)
        mb = path.stat().st_size / 1e6
        print(f"{name:<28} {mb:>6.1f} {imp:>9.3f} {parse:>10.3f} {ratio:>6.2f}")
    print(f"worst ratio {worst:.2f} (aim: <= 4)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
