from threads_cases import reduce


def test_sample_log_reduces_to_an_idle_thread() -> None:
    state = reduce("examples/sample-thread.jsonl")
    assert state["status"] == "idle"
    assert state["turns"][0]["status"] == "completed"
    assert state["sandbox"]["files"] == {"a.txt": "a" * 64}
