"""Every importer against the fastest parser of its format, side by side in one run (issue 31:
each importer at most 4x).

    python benchmarks/importers_bench.py [--mb 20] [--repeat 5] [--check] [--only FORMAT...]

Generates under benchmarks/.work/importers/ one realistic file per format, of about ``--mb``
MB (VCR cassettes grow with the square of their steps, so theirs are sized by steps):

* ``claude-code``: benchmarks/claude_gen.py's transcript;
* ``codex``: a rollout file of many turns (user message, reasoning, function calls with
  JSON-text arguments and their outputs of a few KB, the answer, token counts,
  ``task_complete``);
* ``swe-agent``: a ``.traj`` of one long run (function-calling steps and observations);
* ``vcr``: benchmarks/vcr_bench.py's Anthropic cassette, plain and streamed, and its OpenAI
  Responses stream;
* ``threads``: the ``threads export`` of the imported Claude Code transcript (header, events
  chained by ``prev_hash``, head);
* ``inspect-ai``: benchmarks/eval_traj_bench.py's agent loop as a ``.json`` log with inline
  inputs (it grows with the square of its steps, so it is sized by ``--steps``) and as a
  ``.eval`` archive with pooled inputs of about ``--mb`` MB;
* ``openhands``: benchmarks/eval_traj_bench.py's trajectory of about ``--mb`` MB;

and formats listed in ``threads_cases.importers.FORMATS`` that it has no generator for are
named as not measured. Each file is measured ``--repeat`` times, the files taking turns, each
time in a fresh process that times (CPU: user + system) first the baseline, then
``import_to_file`` of the same file:

* JSON Lines (claude-code, codex, threads): ``orjson.loads`` of every line;
* one JSON document (swe-agent, openhands, inspect-ai ``.json``): ``orjson.loads`` of the file;
* a zip archive (inspect-ai ``.eval``): ``zipfile`` reading each member, ``orjson.loads`` of it;
* YAML (vcr): ``yaml.load(data, Loader=yaml.CSafeLoader)`` (libyaml).

It prints the median ratio (importer / baseline) per file with the range, and writes
benchmarks/.work/importers_results.json; ``--check`` exits 1 when a median is over 4x.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HERE = ROOT / "benchmarks"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402
from claude_gen import generate  # noqa: E402
from eval_traj_bench import inspect_sample, write_inspect, write_openhands  # noqa: E402
from vcr_bench import anthropic, responses  # noqa: E402

from threads_cases.importers import FORMATS  # noqa: E402

WORK = HERE / ".work" / "importers"
AIM = 4.0

CHILD = r"""
import json, resource, sys
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
fmt, src, out, base = sys.argv[1:5]
import orjson, yaml
import threads_cases.importers as imp
with open(src, "rb") as fh:
    data = fh.read()
t = cpu()
if base == "lines":
    for line in data.splitlines():
        orjson.loads(line)
elif base == "json":
    orjson.loads(data)
elif base == "zip":
    import io, zipfile
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for name in zf.namelist():
            orjson.loads(zf.read(name))
else:
    yaml.load(data, Loader=yaml.CSafeLoader)
parse = cpu() - t
t = cpu()
report = imp.import_to_file(fmt, src, out)
print(json.dumps({"import_s": cpu() - t, "parse_s": parse, "events": report.events}))
"""

_WORDS = [
    "the",
    "file",
    "reads",
    "lines",
    "of",
    "text",
    "and",
    "writes",
    "a",
    "log",
    "for",
    "each",
    "turn",
    "it",
    "finds",
]


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n))


def _rollout_lines(rng: random.Random, turn: int, ts: list[int]) -> list[dict[str, Any]]:
    def at() -> str:
        ts[0] += 700
        s, ms = divmod(ts[0], 1000)
        return f"2026-03-02T{s // 3600 % 24:02d}:{s // 60 % 60:02d}:{s % 60:02d}.{ms:03d}Z"

    def item(t: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": at(), "type": t, "payload": payload}

    prompt = _text(rng, 20)
    out = [
        item(
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": prompt}],
            },
        ),
        item("event_msg", {"type": "user_message", "message": prompt, "images": []}),
    ]
    for k in range(rng.randint(1, 6)):
        cid = f"call_{turn}_{k}"
        out.append(
            item(
                "response_item",
                {
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": _text(rng, 30)}],
                    "content": None,
                },
            )
        )
        args = json.dumps({"command": ["bash", "-lc", f"cat src/f{k}.py"], "workdir": "/w"})
        out.append(
            item(
                "response_item",
                {"type": "function_call", "name": "shell", "arguments": args, "call_id": cid},
            )
        )
        body = orjson.dumps(
            {
                "output": _text(rng, rng.randint(50, 900)),
                "metadata": {"exit_code": 0, "duration_seconds": 0.1},
            }
        ).decode()  # compact, as the CLI writes it
        out.append(
            item("response_item", {"type": "function_call_output", "call_id": cid, "output": body})
        )
    answer = _text(rng, 60)
    usage = {
        "input_tokens": 3000,
        "cached_input_tokens": 0,
        "output_tokens": 40,
        "reasoning_output_tokens": 0,
        "total_tokens": 3040,
    }
    out += [
        item(
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": answer}],
            },
        ),
        item(
            "event_msg",
            {
                "type": "token_count",
                "info": {"total_token_usage": usage, "last_token_usage": usage},
            },
        ),
        item("event_msg", {"type": "task_complete", "last_agent_message": answer}),
    ]
    return out


def codex_rollout(path: Path, mb: float, seed: int = 3) -> None:
    rng, ts = random.Random(seed), [32_400_000]
    meta = {
        "timestamp": "2026-03-02T09:00:00.000Z",
        "type": "session_meta",
        "payload": {
            "id": "0199eeee-0000-7000-8000-00000000bench",
            "timestamp": "2026-03-02T09:00:00.000Z",
            "cwd": "/w",
            "originator": "codex_cli_rs",
            "cli_version": "0.120.0",
        },
    }
    with path.open("wb") as fh:
        fh.write(orjson.dumps(meta) + b"\n")
        turn = 0
        while fh.tell() < mb * 1e6:
            turn += 1
            for rec in _rollout_lines(rng, turn, ts):
                fh.write(orjson.dumps(rec) + b"\n")


def swe_traj(path: Path, mb: float, seed: int = 4) -> None:
    rng = random.Random(seed)
    history: list[dict[str, Any]] = [
        {"role": "system", "content": "SETTING: " + _text(rng, 80)},
        {"role": "user", "content": "<uploaded_files>\n" + _text(rng, 200)},
    ]
    size, step = 0, 0
    while size < mb * 1e6:
        step += 1
        cid = f"call_{step}"
        args = json.dumps({"command": f"sed -n {step},{step + 40}p src/m.py"})
        call = {"id": cid, "type": "function", "function": {"name": "bash", "arguments": args}}
        obs = _text(rng, rng.randint(100, 1500))
        history.append({"role": "assistant", "content": _text(rng, 40), "tool_calls": [call]})
        history.append({"role": "tool", "content": obs, "tool_call_ids": [cid]})
        size += len(obs) + 400
    history.append(
        {
            "role": "assistant",
            "content": "done",
            "tool_calls": [
                {
                    "id": "call_end",
                    "type": "function",
                    "function": {"name": "submit", "arguments": "{}"},
                }
            ],
        }
    )
    doc = {
        "history": history,
        "trajectory": [],
        "info": {"exit_status": "submitted", "submission": "diff --git a b"},
    }
    path.write_bytes(orjson.dumps(doc))


def threads_export(path: Path, log: Path) -> None:
    """The export of an imported log: header, each line with its prev_hash, the head."""
    events = [orjson.loads(x) for x in log.read_bytes().splitlines()]
    from threads_cases.core.canonical import canonical_line

    lines = [canonical_line({"threads_export": 1, "thread_id": events[0]["thread_id"]})]
    for ev in events:
        lines.append(canonical_line({**ev, "prev_hash": hashlib.sha256(lines[-1]).hexdigest()}))
    head = {
        "events": len(events),
        "seq": len(events) - 1,
        "sha256": hashlib.sha256(lines[-1]).hexdigest(),
    }
    lines.append(canonical_line({"head": head}))
    path.write_bytes(b"\n".join(lines) + b"\n")


def pooled_eval(path: Path, steps: int) -> None:
    """An inspect-ai ``.eval`` archive of one sample of ``steps`` tool steps, pooled inputs."""
    import zipfile

    header = {"version": 2, "status": "success", "eval": {"task": "t", "model": "m"}}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("header.json", json.dumps(header))
        zf.writestr("samples/1_epoch_1.json", json.dumps(inspect_sample(steps, pooled=True)))


def inputs(mb: float, steps: int, only: list[str]) -> list[tuple[str, str, Path, str]]:
    """``(label, format, file, baseline)`` of each generated file."""
    WORK.mkdir(parents=True, exist_ok=True)
    out: list[tuple[str, str, Path, str]] = []
    want = set(only) if only else set(FORMATS)
    cc = WORK / "claude-code.jsonl"
    if want & {"claude-code", "threads"}:
        generate(cc, mb)
    if "claude-code" in want:
        out.append(("claude-code", "claude-code", cc, "lines"))
    if "codex" in want:
        codex_rollout(WORK / "codex-rollout.jsonl", mb)
        out.append(("codex rollout", "codex", WORK / "codex-rollout.jsonl", "lines"))
    if "swe-agent" in want:
        swe_traj(WORK / "run.traj", mb)
        out.append(("swe-agent", "swe-agent", WORK / "run.traj", "json"))
    if "vcr" in want:
        for label, make in (
            ("vcr anthropic", lambda p: anthropic(p, steps, stream=False)),
            ("vcr anthropic sse", lambda p: anthropic(p, steps, stream=True)),
            ("vcr responses sse", lambda p: responses(p, steps)),
        ):
            p = WORK / (label.replace(" ", "-") + ".yaml")
            make(p)
            out.append((label, "vcr", p, "yaml"))
    if "threads" in want:
        from threads_cases.importers import import_to_file

        log = WORK / "cc-log.jsonl"
        import_to_file("claude-code", cc, log)
        threads_export(WORK / "export.jsonl", log)
        out.append(("threads export", "threads", WORK / "export.jsonl", "lines"))
    if "inspect-ai" in want:
        # the inline log of --steps tool steps (60: about 7 MB), the archive of about --mb MB
        write_inspect(WORK / "inline.json", WORK / "small.eval", steps)
        pooled_eval(WORK / "pooled.eval", int(mb * 190))
        out.append(("inspect-ai json", "inspect-ai", WORK / "inline.json", "json"))
        out.append(("inspect-ai eval", "inspect-ai", WORK / "pooled.eval", "zip"))
    if "openhands" in want:
        write_openhands(WORK / "trajectory.json", int(mb * 190))
        out.append(("openhands", "openhands", WORK / "trajectory.json", "json"))
    return out


def measure(fmt: str, src: Path, base: str) -> dict[str, Any]:
    out = WORK / "out.jsonl"
    p = subprocess.run(
        [sys.executable, "-c", CHILD, fmt, str(src), str(out), base],
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(p.stdout))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=float, default=20.0, help="size of the JSON files (MB)")
    ap.add_argument("--steps", type=int, default=60, help="tool steps of each VCR cassette")
    ap.add_argument("--repeat", type=int, default=5, metavar="N")
    ap.add_argument("--check", action="store_true", help=f"exit 1 when a median is over {AIM}x")
    ap.add_argument("--only", nargs="*", default=[], metavar="FORMAT")
    args = ap.parse_args()
    files = inputs(args.mb, args.steps, args.only)
    covered = {f for _, f, _, _ in files}
    runs: dict[str, list[dict[str, Any]]] = {label: [] for label, *_ in files}
    for _ in range(max(1, args.repeat)):
        for label, fmt, src, base in files:
            runs[label].append(measure(fmt, src, base))
    results, over = {}, []
    for label, fmt, src, base in files:
        ratios = sorted(m["import_s"] / m["parse_s"] for m in runs[label])
        med = ratios[len(ratios) // 2]
        mid = sorted(runs[label], key=lambda m: m["import_s"])[len(ratios) // 2]
        results[label] = {
            "format": fmt,
            "bytes": src.stat().st_size,
            "baseline": base,
            "median_ratio": round(med, 2),
            "ratios": [round(r, 2) for r in ratios],
            **mid,
        }
        mark = "" if med <= AIM else f"  OVER {AIM}x"
        print(
            f"{label:>18}: {src.stat().st_size / 1e6:6.1f} MB, {mid['events']} events, "
            f"import {mid['import_s']:.2f} s / {base} parse {mid['parse_s']:.2f} s = "
            f"{med:.2f}x (range {ratios[0]:.2f}-{ratios[-1]:.2f}){mark}"
        )
        if med > AIM:
            over.append(label)
    for fmt in FORMATS:
        if fmt not in covered and (not args.only or fmt in args.only):
            print(f"{fmt:>18}: not measured (no generator for this format yet)")
    (WORK.parent / "importers_results.json").write_text(json.dumps(results, indent=2) + "\n")
    if args.check and over:
        print(f"FAIL: over {AIM}x: {', '.join(over)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
