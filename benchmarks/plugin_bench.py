"""The pytest plugin against the CLI on the same cases (issue 37), as a CPU ratio.

    python benchmarks/plugin_bench.py [--cases 1000] [--rounds 3] [--check]

Each round runs, in fresh subprocesses one after the other (interleaved, so a busy moment of
the shared machine falls on both alike), ``threads-cases run DIR --impl threads-py
--isolation guard --jobs 1 --format json`` and ``pytest -p no:cacheprovider
--threads-cases DIR -q`` on the same generated cases (benchmarks/run.py's small cases,
threads-py in process for both), each from an empty folder. CPU is user + system of the
process and its children; the figure is the median over rounds of plugin CPU / CLI CPU (and
the same for wall time). Bytecode is written (``PYTHONDONTWRITEBYTECODE`` unset). ``--check``
exits 1 over :data:`BUDGET`. Writes benchmarks/.work/plugin_results.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

#: plugin CPU / CLI CPU on the same cases (issue 37's aim)
BUDGET = 1.2


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("THREADS_CASES_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def timed(cmd: list[str], cwd: Path) -> tuple[float, float, int]:
    """(wall s, CPU s of the process tree, exit status) of one run of ``cmd``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, env=_env(), check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.returncode


def main() -> int:
    from run import make_cases  # benchmarks/run.py: the generated small cases

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--check", action="store_true", help=f"exit 1 over {BUDGET}x")
    args = ap.parse_args()
    root = make_cases(args.cases)
    cli = [sys.executable, "-m", "threads_cases", "run", str(root), "--impl", "threads-py"]
    cli += ["--isolation", "guard", "--jobs", "1", "--format", "json"]
    plugin = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly"]
    plugin += ["--threads-cases", str(root), "-q", "--no-header"]
    rows: dict[str, list[tuple[float, float]]] = {"cli": [], "plugin": []}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.rounds):
            for name, cmd in (("cli", cli), ("plugin", plugin)):
                wall, cpu, status = timed(cmd, Path(tmp))
                assert status == 0, (name, status)
                rows[name].append((wall, cpu))
    cpu_ratio = statistics.median(
        p[1] / c[1] for c, p in zip(rows["cli"], rows["plugin"], strict=True)
    )
    wall_ratio = statistics.median(
        p[0] / c[0] for c, p in zip(rows["cli"], rows["plugin"], strict=True)
    )
    out = {
        "cases": args.cases,
        "rounds": args.rounds,
        "cli_cpu_s": [round(c, 3) for _, c in rows["cli"]],
        "plugin_cpu_s": [round(c, 3) for _, c in rows["plugin"]],
        "cpu_ratio": round(cpu_ratio, 3),
        "wall_ratio": round(wall_ratio, 3),
        "load": os.getloadavg()[0],
        "aim": f"<= {BUDGET}",
    }
    print(json.dumps(out))
    (HERE / ".work").mkdir(exist_ok=True)
    (HERE / ".work" / "plugin_results.json").write_text(json.dumps(out, indent=2) + "\n")
    return 1 if args.check and cpu_ratio > BUDGET else 0


if __name__ == "__main__":
    sys.exit(main())
