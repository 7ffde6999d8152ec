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

Beside them, in the same rounds, a bare pytest session of as many trivial items (one test
function parametrized ``--cases`` times, ``pass`` as its body, this plugin installed but not
asked for): pytest's own start-up, collection and per-item protocol, which the plugin's items
pay on top of the cases' work. ``floor_ratio`` is (bare pytest CPU + CLI CPU - CLI start-up)
/ CLI CPU, the CLI's start-up being ``threads-cases run --help`` in the same round: the
ratio the plugin would reach if its items cost nothing beyond pytest's and the CLI's work.
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
    bare = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly"]
    bare += ["-q", "--no-header", "test_bare.py"]
    startup = [sys.executable, "-m", "threads_cases", "run", "--help"]
    rows: dict[str, list[tuple[float, float]]] = {"cli": [], "plugin": [], "bare": [], "up": []}
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as bare_dir:
        (Path(bare_dir) / "test_bare.py").write_text(
            "import pytest\n\n\n"
            f"@pytest.mark.parametrize('i', range({args.cases}))\n"
            "def test_bare(i):\n    pass\n"
        )
        runs = (("cli", cli, tmp), ("plugin", plugin, tmp), ("bare", bare, bare_dir))
        for _ in range(args.rounds):
            for name, cmd, where in (*runs, ("up", startup, tmp)):
                wall, cpu, status = timed(cmd, Path(where))
                assert status == 0, (name, status)
                rows[name].append((wall, cpu))
    cpu_ratio = statistics.median(
        p[1] / c[1] for c, p in zip(rows["cli"], rows["plugin"], strict=True)
    )
    wall_ratio = statistics.median(
        p[0] / c[0] for c, p in zip(rows["cli"], rows["plugin"], strict=True)
    )
    floor = statistics.median(
        (b[1] + c[1] - u[1]) / c[1]
        for c, b, u in zip(rows["cli"], rows["bare"], rows["up"], strict=True)
    )
    out = {
        "cases": args.cases,
        "rounds": args.rounds,
        "cli_cpu_s": [round(c, 3) for _, c in rows["cli"]],
        "plugin_cpu_s": [round(c, 3) for _, c in rows["plugin"]],
        "bare_pytest_cpu_s": [round(c, 3) for _, c in rows["bare"]],
        "cli_startup_cpu_s": [round(c, 3) for _, c in rows["up"]],
        "cpu_ratio": round(cpu_ratio, 3),
        "floor_ratio": round(floor, 3),
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
