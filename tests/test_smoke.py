from pathlib import Path

from threads_cases import get_dialect, reduce
from threads_cases.core.strictjson import read_json_file

CASE = Path(__file__).parent.parent / "spec" / "conformance" / "cases" / "reads-notes"


def test_a_case_log_reduces_to_its_expected_state_in_both_dialects() -> None:
    for impl in ("threads-py", "threads-ts"):
        d = get_dialect(impl)
        state = reduce(CASE / f"log.{impl}.jsonl", dialect=impl)
        assert d.encode_state(state) == read_json_file(CASE / f"expected.{impl}.json")
        assert state["status"] == "idle"
