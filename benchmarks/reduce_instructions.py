"""`reduce_log` and a plain orjson loop over the same log, in instructions (callgrind), which
the load of a shared machine does not move.

    python benchmarks/reduce_instructions.py [--events 10000]

Runs ``valgrind --tool=callgrind`` on three processes that each import the package and
reduce a 3-event log and compile every event type's validator (so compiled validators and
imports are paid in all three: they are compiled on first use), then: do
nothing more, run the orjson loop, or ``reduce_log`` the generated log of ``--events``
events. The figure is (reduce - nothing) / (loop - nothing). Needs valgrind on PATH.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"
sys.path.insert(0, str(HERE))

from gen import write_log  # noqa: E402

SCRIPT = """
import sys, orjson
from threads_cases.core.log import reduce_log
from threads_cases.core.schemas import compiled_event_validators
reduce_log(sys.argv[2])
compiled_event_validators()[0].items()  # every type's validator compiled (on first use)
if sys.argv[1] == "loop":
    with open(sys.argv[3], "rb") as fh:
        for line in fh:
            orjson.loads(line)
elif sys.argv[1] == "reduce":
    reduce_log(sys.argv[3])
"""


def instructions(mode: str, tiny: Path, log: Path) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={tmp}/out",
                sys.executable,
                "-c",
                SCRIPT,
                mode,
                str(tiny),
                str(log),
            ],
            capture_output=True,
            text=True,
            check=True,
            env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
        )
    m = re.search(r"Collected : (\d+)", out.stderr)
    if m is None:
        raise SystemExit(f"no instruction count in valgrind's output:\n{out.stderr[-2000:]}")
    return int(m.group(1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=10_000)
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: skipped")
        return 0
    WORK.mkdir(exist_ok=True)
    log = WORK / f"log-{args.events}.jsonl"
    if not log.exists():
        write_log(log, target_events=args.events)
    tiny = WORK / "log-3.jsonl"
    tiny.write_bytes(b"".join(log.read_bytes().splitlines(keepends=True)[:3]))
    none, loop, ours = (instructions(m, tiny, log) for m in ("none", "loop", "reduce"))
    ratio = (ours - none) / (loop - none)
    print(
        f"reduce_log {(ours - none) / 1e6:.1f} M instructions, orjson loop "
        f"{(loop - none) / 1e6:.1f} M, ratio {ratio:.2f}x ({args.events} events)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
