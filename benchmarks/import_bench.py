"""Importer benchmark: speed and peak memory of importing a realistic Claude Code transcript.

    python benchmarks/import_bench.py [--mb 80] [--small-mb 20] [--repeat 5] [--check]
                                      [--profile 25] [--keep]

Generates two realistic transcripts under benchmarks/.work/ (benchmarks/claude_gen.py: many
short turns, one content block per assistant line, parallel tool calls with a result line
each and the output repeated in ``toolUseResult``, long-tailed tool outputs, images,
sidechains, progress, file-history-snapshot, system, summary and meta lines) with the same
distribution of turn sizes, so the largest turn is about the same in both. Each is imported
through the library API (``threads_cases.importers.import_to_file``) ``--repeat`` times, each
in a fresh subprocess (the two sizes taking turns, so both meet the same load), which reports:

* MB/s of transcript per second of CPU time (user + system of the child; aim: >= 50 MB/s).
  CPU time, because the machine is shared: wall time depends on the load;
* the baseline from the same child: CPU time of plain ``orjson.loads`` of every line of the
  same file, and the import's time as a multiple of it;
* peak RSS (``ru_maxrss``) minus the RSS of the same interpreter after importing the package
  and parsing the file once (tracemalloc is not used, it would slow the run several times);
* the size of the largest turn in the transcript.

Each figure is printed as the median and the best of the repeats (one run on this virtual
machine can take 1.6x the CPU of the next, orjson's baseline included); ``--check`` exits 1
when the large session's median is under 50 MB/s.

Memory should track the largest turn, not the file: the two peaks should be close while the
files differ 4x. ``--profile N`` imports the large file once more under cProfile and prints
its top N entries by own time (benchmarks/README.md keeps them). Results are written to
benchmarks/.work/import_results.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from claude_gen import generate

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"

CHILD = r"""
import json, resource, sys
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
import orjson
import threads_cases.importers as imp
t = cpu()
with open(sys.argv[1], "rb") as fh:
    for line in fh:
        orjson.loads(line)
parse = cpu() - t
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = cpu()
report = imp.import_to_file("claude-code", sys.argv[1], sys.argv[2])
dt = cpu() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"cpu_seconds": dt, "orjson_seconds": parse, "events": report.events,
                  "turns": report.turns, "out_bytes": report.bytes, "base_rss_kib": base,
                  "peak_rss_kib": peak}))
"""

PROFILE = r"""
import cProfile, pstats, sys
import threads_cases.importers as imp
prof = cProfile.Profile()
prof.enable()
imp.import_to_file("claude-code", sys.argv[1], sys.argv[2])
prof.disable()
pstats.Stats(prof).strip_dirs().sort_stats("tottime").print_stats(int(sys.argv[3]))
"""


def measure(src: Path, out: Path) -> dict[str, Any]:
    p = subprocess.run(
        [sys.executable, "-c", CHILD, str(src), str(out)],
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(p.stdout))


def profile(src: Path, out: Path, top: int) -> str:
    p = subprocess.run(
        [sys.executable, "-c", PROFILE, str(src), str(out), str(top)],
        capture_output=True,
        text=True,
        check=True,
    )
    return p.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=float, default=80.0)
    ap.add_argument("--small-mb", type=float, default=20.0)
    ap.add_argument("--repeat", type=int, default=5, metavar="N", help="runs per size (default 5)")
    ap.add_argument("--check", action="store_true", help="exit 1 under 50 MB/s (large, median)")
    ap.add_argument("--profile", type=int, default=0, metavar="N", help="print cProfile's top N")
    ap.add_argument("--keep", action="store_true", help="keep the generated files")
    args = ap.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    sizes = {"small": args.small_mb, "large": args.mb}
    files = {
        label: (WORK / f"claude-code-{mb:g}mb.jsonl", WORK / f"imported-{mb:g}mb.jsonl")
        for label, mb in sizes.items()
    }
    shapes = {label: generate(src, sizes[label]) for label, (src, _) in files.items()}
    runs: dict[str, list[dict[str, Any]]] = {label: [] for label in sizes}
    for _ in range(max(1, args.repeat)):
        for label, (src, out) in files.items():
            runs[label].append(measure(src, out))
    results = {}
    for label, shape in shapes.items():
        ms = sorted(runs[label], key=lambda m: m["cpu_seconds"])
        mid, best = ms[len(ms) // 2], ms[0]
        mbs = [shape["bytes"] / 1e6 / m["cpu_seconds"] for m in ms]
        ratios = sorted(m["cpu_seconds"] / m["orjson_seconds"] for m in ms)
        extra = max(m["peak_rss_kib"] - m["base_rss_kib"] for m in ms) / 1024
        results[label] = {
            **shape,
            **mid,
            "runs": len(ms),
            "mb_per_cpu_s": round(mbs[len(mbs) // 2], 2),
            "best_mb_per_cpu_s": round(mbs[0], 2),
            "orjson_ratio": round(ratios[len(ratios) // 2], 2),
            "extra_rss_mib": round(extra, 1),
        }
        print(
            f"{label:>5}: {shape['bytes'] / 1e6:6.1f} MB, {shape['lines']} lines, "
            f"{shape['turns']} turns, largest turn {shape['largest_turn_bytes'] / 1e6:.2f} MB -> "
            f"{mid['events']} events; {len(ms)} runs, CPU median {mid['cpu_seconds']:.2f} s = "
            f"{mbs[len(mbs) // 2]:.1f} MB/s, best {best['cpu_seconds']:.2f} s = {mbs[0]:.1f} MB/s "
            f"(aim >= 50); median {results[label]['orjson_ratio']}x orjson parsing of the file "
            f"(ratios {ratios[0]:.2f}-{ratios[-1]:.2f}); peak RSS {extra:.1f} MiB over the "
            f"{mid['base_rss_kib'] / 1024:.0f} MiB baseline"
        )
    if args.profile:
        src, out = files["large"]
        print(profile(src, out, args.profile))
    if not args.keep:
        for src, out in files.values():
            src.unlink()
            out.unlink(missing_ok=True)
    ratio = results["large"]["extra_rss_mib"] / max(results["small"]["extra_rss_mib"], 0.1)
    print(
        f"memory large/small: {ratio:.2f}x for files "
        f"{results['large']['bytes'] / results['small']['bytes']:.1f}x apart "
        "(about 1x when memory tracks the largest turn)"
    )
    (WORK / "import_results.json").write_text(json.dumps(results, indent=2) + "\n")
    if args.check and results["large"]["mb_per_cpu_s"] < 50:
        print(f"FAIL: {results['large']['mb_per_cpu_s']} MB/s (median) < 50", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
