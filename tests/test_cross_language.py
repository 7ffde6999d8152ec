"""Python and TypeScript through their drivers: byte-identical case writers, the same
replays, and the same matcher answers on random values.

Needs the TypeScript driver (`nox -s ts`, which `nox -s tests` runs first)."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import reference_drivers, ts_built
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from threads_cases.case.directory import read_case_files
from threads_cases.case.loader import open_case
from threads_cases.core.dialects import get_dialect
from threads_cases.core.log import read_log
from threads_cases.core.matchers import matches
from threads_cases.protocol.client import DriverImplementation
from threads_cases.reference.replay import replay_case

ROOT = Path(__file__).resolve().parent.parent
# the step-by-step replay tests and the whole cases (spec/conformance.md 2.5, 2.14)
CASES = sorted(
    p
    for area in ("replay", "cases")
    for p in (ROOT / "spec" / "conformance" / area).iterdir()
    if p.is_dir()
)

pytestmark = pytest.mark.skipif(
    not ts_built(),
    reason="the TypeScript driver is not built: run `nox -s ts`",
)


@pytest.fixture(scope="module")
def drivers() -> Iterator[dict[str, DriverImplementation]]:
    out = {d.name: d for d in reference_drivers(validate_protocol=True)}
    yield out
    for d in out.values():
        d.close()


def _thread_of(case_dir: Path) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The case's prefix plus its replayed turn, and its artifacts as base64."""
    prefix = list(read_log(case_dir / "log.threads-py.jsonl"))
    turn = replay_case(case_dir)["events"]
    arts = (
        {
            p.name: base64.b64encode(p.read_bytes()).decode()
            for p in sorted((case_dir / "artifacts").glob("*"))
        }
        if (case_dir / "artifacts").is_dir()
        else {}
    )
    return prefix + turn, arts


@pytest.mark.parametrize("case_dir", CASES, ids=[p.name for p in CASES])
def test_both_writers_rebuild_the_committed_case_byte_for_byte(
    case_dir: Path, drivers: dict[str, DriverImplementation]
) -> None:
    case = open_case(case_dir)
    log, arts = _thread_of(case_dir)
    committed = read_case_files(case_dir)
    for name, drv in drivers.items():
        d = get_dialect(drv.dialect)
        answer = drv.request(
            {
                "cmd": "write_case",
                "thread": {
                    "log": [d.encode_event(e) for e in log],
                    "dialect": drv.dialect,
                    "artifacts": arts,
                    "portable": case.meta["portable"],
                },
                "name": case.name,
                "at": case.meta["at"],
                "expect": case.meta["expect"],
                "external_effects": case.meta["external_effects"],
            }
        )
        files = {k: base64.b64decode(v) for k, v in answer["files"].items()}
        assert sorted(files) == sorted(committed), name
        for rel in committed:
            assert files[rel] == committed[rel], f"{name}: {rel} differs"


@pytest.mark.parametrize("case_dir", CASES, ids=[p.name for p in CASES])
def test_both_runtimes_replay_to_the_same_events(
    case_dir: Path, drivers: dict[str, DriverImplementation]
) -> None:
    outs = {}
    for name, drv in drivers.items():
        out = drv.request({"cmd": "replay", "case": {"path": str(case_dir)}})
        d = get_dialect(drv.dialect)
        out["events"] = [d.decode_event(e) for e in out["events"]]
        outs[name] = out
    assert outs["threads-py"] == outs["threads-ts"]
    assert outs["threads-py"]["stop"] is None


json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53) + 1, 2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False, width=64).filter(lambda f: abs(f) < 2**53)
    | st.text(max_size=8)
)
json_values = st.recursive(
    json_scalars,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c, max_size=3),
    max_leaves=12,
)


@settings(
    max_examples=75, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(matcher_data=json_values, event_data=json_values, same=st.booleans())
def test_python_and_typescript_agree_on_matchers_over_random_values(
    drivers: dict[str, DriverImplementation], matcher_data: Any, event_data: Any, same: bool
) -> None:
    data = {"v": event_data}
    event = {
        "event_id": "e1",
        "thread_id": "t",
        "seq": 1,
        "type": "x_probe",
        "actor_kind": "user",
        "epoch": 0,
        "branch_id": "main",
        "critical": False,
        "ts": "2026-11-29T20:00:00.000Z",
        "data": data,
    }
    matcher = {"type": "x_probe", "data": data if same else {"v": matcher_data}}
    want = matches(matcher, event)
    for drv in drivers.values():
        assert drv.request({"cmd": "match", "matcher": matcher, "event": event})["matched"] is want


@settings(
    max_examples=75, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(value=json_values)
def test_canonical_write_read_write_is_a_fixed_point_in_both_languages(
    drivers: dict[str, DriverImplementation], value: Any
) -> None:
    from threads_cases.core.canonical import canonical_document, canonical_line

    line = canonical_line(value).decode("utf-8")
    document = canonical_document(value).decode("utf-8")
    for drv in drivers.values():
        once = drv.request({"cmd": "canonicalize", "text": line})
        assert once == {"text": line, "document": document}
        again = drv.request({"cmd": "canonicalize", "text": once["document"]})
        assert again == once


# --------------------------------------------------------------------------- secrets
_SECRET_PARTS = st.sampled_from(
    [
        "AKIAIOSFODNN7EXAMPLE,wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "ghp_" + "a" * 36,
        'password: "correct horse"',
        "postgres://u:hunter22@db/x",
        "Bearer abcdefghijklmnopqrstuvwxyz012345",
        "sk-ant-api03-" + "Zq9x" * 20,
        "plain words",
    ]
)
_NOISE = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=6)


def _secret_thread(
    parts: list[str], noise: list[str]
) -> tuple[list[dict[str, Any]], dict[str, str], str]:
    from threads_cases import AgentSpec, FakeSandbox, ScriptedModel, Thread, ToolSpec
    from threads_cases.reference.agent import BUILTIN_TOOLS
    from threads_cases.reference.model import text_reply, tool_reply
    from threads_cases.reference.runtime import Clock

    text = " ".join(n + p for n, p in zip(noise, parts, strict=False))
    vault = ToolSpec("vault", "", {"type": "object"}, "external", "read", lambda i: text)
    t = Thread.create(
        agent=AgentSpec("a", "m", "s", tools=(*BUILTIN_TOOLS.values(), vault)),
        sandbox=FakeSandbox({"a.txt": text, "b.bin": text.encode("utf-16-le")}),
        thread_id="s",
        clock=Clock(1_795_982_400_000),
    )
    at = t.events[-1]["event_id"]
    t.run_turn(
        f"go {text}",
        ScriptedModel(
            [
                tool_reply(
                    ("t1", "read_file", {"path": "a.txt"}),
                    ("t2", "read_file", {"path": "b.bin"}),
                    ("t3", "vault", {"password": text or "x" * 8, "10": text, "2": 1.0}),
                ),
                text_reply(text),
            ]
        ),
    )
    arts = {k: base64.b64encode(v).decode() for k, v in t.artifacts.blobs.items()}
    return [dict(e) for e in t.events], arts, at


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(_SECRET_PARTS, min_size=1, max_size=4), st.lists(_NOISE, min_size=4, max_size=4))
def test_both_writers_redact_a_thread_byte_for_byte(
    drivers: dict[str, DriverImplementation], parts: list[str], noise: list[str]
) -> None:
    log, arts, at = _secret_thread(parts, noise)
    answers = {}
    for name, drv in drivers.items():
        try:
            answer = drv.request(
                {
                    "cmd": "write_case",
                    "thread": {"log": log, "artifacts": arts},
                    "name": "c",
                    "at": at,
                    "expect": {},
                    "external_effects": "stub",
                    "secrets": "redact",
                }
            )
            answers[name] = answer["files"]
        except Exception as exc:  # a refusal must be the same in both
            answers[name] = getattr(exc, "code", repr(exc))
    assert isinstance(answers["threads-py"], dict), answers
    assert answers["threads-py"] == answers["threads-ts"]  # byte for byte, every file
    from threads_cases.case.secrets import scan_files

    files = {k: base64.b64decode(v) for k, v in answers["threads-py"].items()}
    assert scan_files(files) == []


# --------------------------------------------------------------------------- sandbox bytes
SANDBOX_BYTES = sorted((ROOT / "spec" / "conformance" / "sandbox-bytes").glob("*.json"))


@pytest.mark.parametrize("path", SANDBOX_BYTES, ids=[p.stem for p in SANDBOX_BYTES])
def test_both_writers_supply_sandbox_bytes_byte_for_byte(
    path: Path, tmp_path: Path, drivers: dict[str, DriverImplementation]
) -> None:
    """case-format.md 5.9 through each driver's ``write_case`` with ``sandbox_dir``: the same
    files byte for byte, or the same refusal (code and message), as the Python writer."""
    from test_conformance_sandbox_bytes import lay_out

    from threads_cases.core.strictjson import parse

    t = parse(path.read_bytes())
    box = lay_out(t, tmp_path)
    answers: dict[str, Any] = {}
    for name, drv in drivers.items():
        try:
            answer = drv.request(
                {
                    "cmd": "write_case",
                    "thread": {"log": t["log"], "artifacts": t["artifacts"]},
                    "name": "c",
                    "at": t["at"],
                    "expect": {},
                    "external_effects": "stub",
                    "secrets": t["secrets"],
                    "sandbox_dir": str(box),
                }
            )
            answers[name] = answer["files"]
        except Exception as exc:  # a refusal must be the same in both
            message = str(getattr(exc, "message", "")).removeprefix(f"{name}: ")
            answers[name] = (getattr(exc, "code", repr(exc)), message)
    py, ts = answers["threads-py"], answers["threads-ts"]
    if isinstance(py, tuple) and py[0] == "log_invalid":  # schema texts differ by library
        assert ts[0] == "log_invalid", ts
    else:
        assert py == ts
    if "saved" in t:
        arts = sorted(k.removeprefix("artifacts/") for k in answers["threads-py"] if "/" in k)
        assert arts == t["saved"]["artifacts"]
    else:  # a path a log file cannot hold is refused by the drivers' log check first
        assert answers["threads-py"][0] in (t["error"]["code"], "log_invalid")


# --------------------------------------------------------------------------- depth limits
def _deep_turn(levels: int) -> tuple[list[dict[str, Any]], str]:
    """A recorded turn whose model reply calls an external tool with an input that makes the
    reply event ``levels`` deep (the input is level 6 of its event), and its fork point."""
    from threads_cases import AgentSpec, FakeSandbox, ScriptedModel, Thread, ToolSpec
    from threads_cases.reference.model import text_reply, tool_reply
    from threads_cases.reference.runtime import Clock

    deep: Any = []
    for _ in range(levels - 7):
        deep = [deep]
    probe = ToolSpec("probe", "", {"type": "object"}, "external", "read", lambda i: "ok")
    t = Thread.create(
        agent=AgentSpec("a", "m", "s", tools=(probe,)),
        sandbox=FakeSandbox({}),
        thread_id="deep",
        clock=Clock(1_795_982_400_000),
    )
    at = t.events[-1]["event_id"]
    t.run_turn("go", ScriptedModel([tool_reply(("t1", "probe", {"v": deep})), text_reply("done")]))
    return [dict(e) for e in t.events], at


def test_a_turn_at_the_depth_limit_fits_every_message_in_both_languages(
    drivers: dict[str, DriverImplementation],
) -> None:
    """thread-log.md 5.1a: a reply nested exactly 248 levels deep is written, reduced and
    replayed by both drivers (every request and answer within 256 levels, each answer with its
    request's id), byte for byte the same."""
    from threads_cases.core.depth import MAX_EVENT_DEPTH, too_deep

    log, at = _deep_turn(MAX_EVENT_DEPTH)
    assert any(too_deep(e, MAX_EVENT_DEPTH - 1) for e in log)
    assert not any(too_deep(e) for e in log)
    written = {}
    for name, drv in drivers.items():
        answer = drv.request(
            {
                "cmd": "write_case",
                "thread": {"log": log},
                "name": "deep",
                "at": at,
                "expect": {},
                "external_effects": "stub",
            }
        )
        written[name] = answer["files"]
        state = drv.request({"cmd": "reduce", "dialect": "threads-py", "log": log})["state"]
        assert state["status"] == "idle"
    assert written["threads-py"] == written["threads-ts"]
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        case_dir = Path(tmp) / "deep"
        for rel, b64 in written["threads-py"].items():
            (case_dir / rel).parent.mkdir(parents=True, exist_ok=True)
            (case_dir / rel).write_bytes(base64.b64decode(b64))
        outs = {}
        for name, drv in drivers.items():
            out = drv.request({"cmd": "replay", "case": {"path": str(case_dir)}})
            d = get_dialect(drv.dialect)
            outs[name] = [d.decode_event(e) for e in out["events"]], out["requests"], out["stop"]
        assert outs["threads-py"] == outs["threads-ts"]
        assert outs["threads-py"][2] is None


def test_a_reply_past_the_depth_limit_is_never_recorded() -> None:
    """One level more cannot be recorded: the turn fails instead of logging the reply (the
    log readers of both languages refuse such an event: reduce/ and driver-requests/)."""
    from threads_cases.core.depth import MAX_EVENT_DEPTH, too_deep

    log, _ = _deep_turn(MAX_EVENT_DEPTH + 1)
    assert "turn_failed" in [e["type"] for e in log]
    assert not any(too_deep(e) for e in log)
