"""Broken drivers: each fault gets its own verdict and reason, and the suite goes on."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import cli

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "spec" / "conformance" / "cases"
DRIVER = Path(__file__).resolve().parent / "drivers" / "faulty_driver.py"
PICK = ["reads-notes", "weather-stub", "writes-summary"]


def _suite(
    tmp_path: Path, mode: str, timeout: float = 60, *extra: str, healthy: bool = False
) -> list[dict[str, object]]:
    """Run the three cases on the faulty driver (``--jobs 1``: it sees them in order) and,
    with ``healthy``, on threads-py too, which must then pass them all: the suite goes on.
    Returns the faulty driver's results by case."""
    cases = tmp_path / "cases"
    for name in PICK:
        shutil.copytree(CASES / name, cases / name)
    (tmp_path / "threads-cases.toml").write_text(
        f"[implementations.faulty]\ncommand = [{json.dumps(sys.executable)}, "
        f'{json.dumps(str(DRIVER))}, "{mode}"]\ndialect = "threads-py"\ntimeout = {timeout}\n'
    )
    proc = cli(  # the garbage driver writes "Traceback?" on stdout, quoted in the report
        "run",
        "cases",
        "--impl",
        "faulty",
        *(["--impl", "threads-py"] if healthy else []),
        "--format",
        "json",
        "--jobs",
        "1",
        *extra,
        cwd=tmp_path,
        timeout=120,
        traceback_ok=True,
    )
    assert "Traceback" not in proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert lines[0]["kind"] == "header" and lines[-1]["kind"] == "footer"
    results = [r for r in lines if r["kind"] == "result"]
    assert sorted(r["case"] for r in results if r["implementation"] == "faulty") == sorted(PICK)
    if healthy:  # the healthy implementation ran every case: the suite went on
        py = [r for r in results if r["implementation"] == "threads-py"]
        assert sorted(r["case"] for r in py) == sorted(PICK)
        assert all(r["verdict"] == "pass" for r in py)
    assert proc.returncode == (0 if all(r["verdict"] in ("pass", "skip") for r in results) else 3)
    return sorted((r for r in results if r["implementation"] == "faulty"), key=lambda r: r["case"])


def _by_case(results: list[dict[str, object]]) -> dict[object, tuple[object, object]]:
    return {r["case"]: (r["verdict"], r["reasons"]) for r in results}


def test_a_driver_that_crashes_on_start_errors_every_case_then_gives_up(tmp_path: Path) -> None:
    got = _suite(tmp_path, "crash-start", healthy=True)
    assert [r["verdict"] for r in got] == ["error"] * 3
    reasons = [r["reasons"][0] for r in got]
    assert set(reasons) <= {"driver_crashed", "driver_unavailable"}
    assert "crashing on start" in got[0]["message"]  # the stderr tail is shown


def test_junit_output_escapes_control_characters_of_a_driver_stderr(tmp_path: Path) -> None:
    got = _suite(tmp_path, "crash-start", 60, "--junit", "junit.xml")
    assert "\x1b[31m" in got[0]["message"]  # the JSON report keeps the bytes as they were
    root = ET.parse(tmp_path / "junit.xml").getroot()  # an XML parser reads the file
    errors = [e for e in root.iter("error") if "crashing on start" in (e.get("message") or "")]
    assert errors, ET.tostring(root)
    assert "\\x1b[31m" in errors[0].get("message", "")
    assert "\\x00" in errors[0].get("message", "")
    assert "\x1b" not in (tmp_path / "junit.xml").read_text()


def test_a_driver_that_crashes_mid_run_is_restarted(tmp_path: Path) -> None:
    got = _by_case(_suite(tmp_path, "crash-mid"))
    verdicts = sorted(v for v, _ in got.values())
    assert verdicts == ["error", "pass", "pass"]
    crashed = [r for v, r in got.values() if v == "error"]
    assert crashed == [["driver_crashed"]]


def test_a_hanging_driver_times_out_and_the_next_case_runs(tmp_path: Path) -> None:
    # the timeout must only catch the hang: the restarted driver answers well within it even
    # on a loaded machine
    got = _suite(tmp_path, "hang", timeout=3, healthy=True)
    assert got[0]["verdict"] == "error" and got[0]["reasons"] == ["driver_timeout"]
    assert "hanging" in got[0]["message"]
    assert [r["verdict"] for r in got[1:]] == ["pass", "pass"]


@pytest.mark.parametrize("mode", ["garbage", "wrong-id", "huge-line"])
def test_a_driver_breaking_the_protocol_gets_protocol_error(tmp_path: Path, mode: str) -> None:
    got = _suite(tmp_path, mode)
    if mode == "wrong-id":
        assert all(r["reasons"] in (["protocol_error"], ["driver_unavailable"]) for r in got)
        assert got[0]["reasons"] == ["protocol_error"]
    else:
        assert got[0]["verdict"] == "error" and got[0]["reasons"] == ["protocol_error"]
        assert [r["verdict"] for r in got[1:]] == ["pass", "pass"]


def test_a_driver_exiting_with_status_0_mid_request_is_a_crash(tmp_path: Path) -> None:
    got = _suite(tmp_path, "exit0")
    assert got[0]["verdict"] == "error" and got[0]["reasons"] == ["driver_crashed"]
    assert [r["verdict"] for r in got[1:]] == ["pass", "pass"]


# ----------------------------------------------------- issue 19.3: one bad driver, one case


def test_an_answer_breaking_its_schema_is_protocol_error_with_the_pointer(tmp_path: Path) -> None:
    """Answers are checked against schemas/driver/<cmd>.answer.schema.json always, not only
    with --validate-protocol (spec/driver-protocol.md 4.1)."""
    got = _suite(tmp_path, "bad-hash")
    assert [r["verdict"] for r in got] == ["error", "pass", "pass"], got
    assert got[0]["reasons"] == ["protocol_error"]
    assert "/requests/0" in str(got[0]["message"])


@pytest.mark.parametrize("mode", ["missing-field", "wrong-type"])
def test_an_ok_answer_missing_or_mistyping_a_field_is_protocol_error_for_that_case(
    tmp_path: Path, mode: str
) -> None:
    got = _suite(tmp_path, mode)
    assert [r["verdict"] for r in got] == ["error", "pass", "pass"], got
    assert got[0]["reasons"] == ["protocol_error"]
    assert "/events" in str(got[0]["message"]) or "/stop" in str(got[0]["message"])


def test_a_driver_closing_stdout_while_running_is_driver_crashed_and_restarted(
    tmp_path: Path,
) -> None:
    got = _suite(tmp_path, "close-stdout")
    assert [r["verdict"] for r in got] == ["error", "pass", "pass"], got
    assert got[0]["reasons"] == ["driver_crashed"]
    assert "closed its stdout" in str(got[0]["message"])


def test_an_unknown_error_code_is_protocol_error_quoting_the_driver(tmp_path: Path) -> None:
    got = _suite(tmp_path, "unknown-code")
    assert [r["verdict"] for r in got] == ["error", "pass", "pass"], got
    assert got[0]["reasons"] == ["protocol_error"]
    assert "kaboom" in str(got[0]["message"]) and "the driver's own words" in str(got[0]["message"])


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0]
    except (OSError, IndexError):
        return False
    return state != "Z"  # a zombie nobody reaped is dead too


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_a_timeout_kills_the_drivers_whole_process_group(tmp_path: Path) -> None:
    got = _suite(tmp_path, "orphan", 3)
    assert got[0]["reasons"] == ["driver_timeout"]
    pids = [int(p) for p in (tmp_path / ".faulty-orphans").read_text().split()]
    assert pids
    assert [p for p in pids if _alive(p)] == []


def test_a_stderr_flood_keeps_only_a_bounded_tail(tmp_path: Path) -> None:
    from threads_cases.protocol.client import STDERR_TAIL_BYTES, DriverImplementation

    shutil.copytree(CASES / "reads-notes", tmp_path / "reads-notes")
    impl = DriverImplementation(
        "faulty",
        [sys.executable, str(DRIVER), "stderr-flood"],
        dialect="threads-py",
        cwd=str(tmp_path),
    )
    try:
        answer = impl.request({"cmd": "replay", "case": {"path": str(tmp_path / "reads-notes")}})
        assert answer["stop"] is None
        for _ in range(100):  # the stderr pump catches up
            if impl.stderr_tail().endswith("END-OF-FLOOD"):
                break
            subprocess.run(["sleep", "0.1"], check=True)
        assert impl.stderr_tail().endswith("END-OF-FLOOD")
        assert len(impl._stderr) <= STDERR_TAIL_BYTES
    finally:
        impl.close()


def test_the_known_codes_are_read_from_the_spec() -> None:
    from threads_cases.protocol.answers import known_codes

    codes = known_codes()
    assert {"protocol_error", "egress_blocked", "case_invalid", "driver_crashed"} <= codes
    assert "kaboom" not in codes and len(codes) > 30


def test_a_driver_gone_before_the_hello_leaves_nothing_to_flush_at_exit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A request whose flush met a closed pipe stayed in the pipe's buffer, and was flushed
    again when the dropped process was collected: "Exception ignored ... BrokenPipeError" and
    a traceback on the harness's stderr (seen with a driver that a sandbox wrapper could not
    start). The hello is written only once the driver has exited, so its flush always fails."""
    import gc

    from threads_cases.core.errors import CaseError
    from threads_cases.protocol.client import DriverImplementation

    send = DriverImplementation._send

    def send_after_exit(self: DriverImplementation, message: dict[str, object], cmd: str) -> None:
        assert self._proc is not None
        self._proc.wait(timeout=60)
        send(self, message, cmd)

    monkeypatch.setattr(DriverImplementation, "_send", send_after_exit)
    unraisable: list[object] = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    impl = DriverImplementation(
        "gone", [sys.executable, "-c", "import os; os.close(0)"], dialect="threads-py"
    )
    with pytest.raises(CaseError) as err:
        impl.hello()
    gc.collect()
    assert err.value.code == "driver_crashed"
    assert unraisable == []
