"""Importer benchmark: throughput and peak memory of importing a large Claude Code transcript.

    python benchmarks/import_bench.py [--mb 50] [--small-mb 10] [--keep]

Generates two synthetic transcripts under benchmarks/.work/ (many turns, replies split over
several lines, parallel tool calls with one result line each, long texts, non-ASCII, a fork,
sidechain and progress lines), with the same distribution of turn sizes, so the largest turn
is about the same in both. Each is imported through the library API
(``threads_cases.importers.import_to_file``) in a fresh subprocess, which reports:

* MB/s of transcript imported (aim: >= 50 MB/s);
* peak RSS (``ru_maxrss``) minus the RSS of the same interpreter after importing the package
  (the baseline, measured in the same run; tracemalloc is not used, it would slow the run
  several times);
* the size of the largest turn in the transcript;
* with ``--ceiling``, the same import with ``strictjson.canonical_line`` swapped for a bare
  orjson encoder: the throughput a fast canonical writer would allow (the pure-Python rfc8785
  encoder takes most of the time: each event is encoded to check it and to write it, and each
  message once more for request_sha256).

Memory should track the largest turn, not the file: the two peaks should be close while the
files differ 5x. Results are printed and written to benchmarks/.work/import_results.json.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"

WORDS = (  # noqa: SIM905
    "le la les un une des données fichier test rapport τεστ データ файл naïve café "
    "function return value error import module class def self None True False "
    "config port server client request response cache index query result"
).split()


def _text(rng: random.Random, n_words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n_words))


def generate(path: Path, target_mb: float, seed: int = 7) -> dict[str, Any]:
    """Write a synthetic transcript of about ``target_mb`` MB; return its shape."""
    rng = random.Random(seed)
    target = int(target_mb * 1_000_000)
    session = "bench-session-0000-0000-000000000000"
    n = 0
    t_ms = 1_750_000_000_000
    size = 0
    turns = 0
    largest = 0
    last: str | None = None
    with open(path, "w", encoding="utf-8") as fh:

        def emit(obj: dict[str, Any]) -> int:
            nonlocal size
            line = json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"
            fh.write(line)
            b = len(line.encode("utf-8"))
            size += b
            return b

        def line(typ: str, message: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
            nonlocal n, t_ms, last
            n += 1
            t_ms += rng.randint(5, 2000)
            sec, ms = divmod(t_ms, 1000)
            import time as _t

            ts = _t.strftime("%Y-%m-%dT%H:%M:%S", _t.gmtime(sec)) + f".{ms:03d}Z"
            uid = f"{n:08x}-0000-4000-8000-{n:012x}"
            obj: dict[str, Any] = {
                "parentUuid": last,
                "isSidechain": False,
                "userType": "external",
                "cwd": "/bench",
                "sessionId": session,
                "version": "1.0.0",
                "gitBranch": "main",
                "type": typ,
                "uuid": uid,
                "timestamp": ts,
                **kw,
            }
            if message is not None:
                obj["message"] = message
            last = uid
            return obj

        while size < target:
            turns += 1
            tsize = 0
            tsize += emit(line("user", {"role": "user", "content": _text(rng, rng.randint(5, 60))}))
            steps = rng.randint(1, 5)
            for step in range(steps + 1):
                mid = f"msg_{turns}_{step}"
                usage = {
                    "input_tokens": rng.randint(10, 5000),
                    "output_tokens": rng.randint(5, 900),
                    "cache_read_input_tokens": rng.randint(0, 90000),
                }
                final = step == steps
                blocks: list[dict[str, Any]] = []
                if rng.random() < 0.5:
                    blocks.append(
                        {
                            "type": "thinking",
                            "thinking": _text(rng, rng.randint(20, 300)),
                            "signature": "c2ln",
                        }
                    )
                blocks.append({"type": "text", "text": _text(rng, rng.randint(10, 400))})
                calls = (
                    []
                    if final
                    else [
                        {
                            "type": "tool_use",
                            "id": f"toolu_{turns}_{step}_{k}",
                            "name": rng.choice(["Read", "Grep", "Bash", "Edit", "Glob"]),
                            "input": {"path": f"src/{rng.choice(WORDS)}_{k}.py", "n": k},
                        }
                        for k in range(rng.randint(1, 4))
                    ]
                )
                for i, b in enumerate(blocks + calls):
                    last_line = i == len(blocks) + len(calls) - 1
                    stop = ("end_turn" if final else "tool_use") if last_line else None
                    tsize += emit(
                        line(
                            "assistant",
                            {
                                "id": mid,
                                "type": "message",
                                "role": "assistant",
                                "model": "claude-bench-1",
                                "content": [b],
                                "stop_reason": stop,
                                "usage": usage,
                            },
                            requestId=f"req_{turns}_{step}",
                        )
                    )
                for c in calls:
                    content = _text(rng, rng.randint(100, 2500))  # a file's contents
                    tsize += emit(
                        line(
                            "user",
                            {
                                "role": "user",
                                "content": [
                                    {
                                        "type": "tool_result",
                                        "tool_use_id": c["id"],
                                        "content": content,
                                    }
                                ],
                            },
                            toolUseResult={"bytes": len(content)},
                        )
                    )
                if rng.random() < 0.1:
                    tsize += emit(
                        {
                            "type": "progress",
                            "uuid": f"p{n}",
                            "parentUuid": last,
                            "data": {"type": "hook_progress"},
                        }
                    )
            largest = max(largest, tsize)
    return {"bytes": size, "lines": n, "turns": turns, "largest_turn_bytes": largest}


CHILD = r"""
import json, os, resource, sys, time
import threads_cases.importers as imp
if sys.argv[3] == "ceiling":
    import orjson
    import threads_cases.importers.common as common, threads_cases.core.log as log
    import threads_cases.core.strictjson as sj
    fast = lambda v: orjson.dumps(v, option=orjson.OPT_SORT_KEYS)
    sj.canonical_line = log.canonical_line = common.canonical_line = fast
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
report = imp.import_to_file("claude-code", sys.argv[1], sys.argv[2])
dt = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": dt, "events": report.events, "turns": report.turns,
                  "out_bytes": report.bytes, "base_rss_kib": base, "peak_rss_kib": peak}))
"""


def measure(src: Path, out: Path, mode: str = "normal") -> dict[str, Any]:
    p = subprocess.run(
        [sys.executable, "-c", CHILD, str(src), str(out), mode],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(p.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=float, default=50.0)
    ap.add_argument("--small-mb", type=float, default=10.0)
    ap.add_argument("--keep", action="store_true", help="keep the generated files")
    ap.add_argument(
        "--ceiling",
        action="store_true",
        help="also time the large file with strictjson.canonical_line replaced by a "
        "bare orjson encoder (unchecked, not RFC 8785 for floats): what a fast "
        "canonical writer would give",
    )
    args = ap.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    results = {}
    for label, mb in (("small", args.small_mb), ("large", args.mb)):
        src = WORK / f"claude-code-{mb:g}mb.jsonl"
        shape = generate(src, mb)
        m = measure(src, WORK / f"imported-{mb:g}mb.jsonl")
        mbs = shape["bytes"] / 1e6 / m["seconds"]
        extra = (m["peak_rss_kib"] - m["base_rss_kib"]) / 1024
        results[label] = {**shape, **m, "mb_per_s": round(mbs, 2), "extra_rss_mib": round(extra, 1)}
        print(
            f"{label:>5}: {shape['bytes'] / 1e6:7.1f} MB, {shape['lines']} lines, "
            f"{shape['turns']} turns, largest turn {shape['largest_turn_bytes'] / 1e6:.2f} MB -> "
            f"{m['events']} events in {m['seconds']:.2f} s = {mbs:.1f} MB/s (aim >= 50); "
            f"peak RSS {m['peak_rss_kib'] / 1024:.0f} MiB, {extra:.1f} MiB over the "
            f"{m['base_rss_kib'] / 1024:.0f} MiB baseline"
        )
        if args.ceiling and label == "large":
            c = measure(src, WORK / f"imported-{mb:g}mb.jsonl", "ceiling")
            results["ceiling"] = {
                "seconds": c["seconds"],
                "mb_per_s": round(shape["bytes"] / 1e6 / c["seconds"], 2),
            }
            print(
                f"ceiling: {results['ceiling']['mb_per_s']:.1f} MB/s with a bare orjson "
                "encoder in place of strictjson.canonical_line (rfc8785, pure Python)"
            )
        if not args.keep:
            src.unlink()
            (WORK / f"imported-{mb:g}mb.jsonl").unlink()
    ratio = results["large"]["extra_rss_mib"] / max(results["small"]["extra_rss_mib"], 0.1)
    print(
        f"memory large/small: {ratio:.2f}x for files "
        f"{results['large']['bytes'] / results['small']['bytes']:.1f}x apart "
        "(about 1x when memory tracks the largest turn)"
    )
    (WORK / "import_results.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
