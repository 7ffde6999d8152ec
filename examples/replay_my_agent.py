"""Replay your own agent on a saved case: `run_case(path, agent=...)`.

    python examples/replay_my_agent.py [CASE_DIR]

The case's recorded model replies and stubs answer the turn; your agent supplies the system
prompt, the tools and the handlers of its sandbox tools. Here the agent is the recorded one
with a different read_file handler (it upper-cases what it reads), so the replay produces
other tool results: the must matchers still hold, but the model requests no longer match the
recording, and the verdict is `drifted` with the reason `request_diverged`.

A folder that is not a usable case is reported as the CLI reports it: one
`error[<reason code>]: <file>:<line>: <message>` line and a hint on stderr, and the exit
status of the code (spec/reason-codes.md), never a traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from threads_cases import AgentSpec, CaseError, run_case
from threads_cases.case.loader import open_case
from threads_cases.core.log import read_log
from threads_cases.core.reducer import reduce
from threads_cases.reference.agent import ToolContext

DEFAULT = Path(__file__).resolve().parent.parent / "spec" / "conformance" / "cases" / "reads-notes"


def shouting_read_file(ctx: ToolContext, inp: dict[str, Any]) -> str:
    """A sandbox tool handler: reads through ctx (so the read is recorded) and shouts."""
    return ctx.read(str(inp["path"])).decode("utf-8").upper()


def main(case_dir: Path) -> None:
    case = open_case(case_dir)
    recorded = reduce(read_log(case.log_path("threads-py")))["agent"]
    agent = AgentSpec.from_json(recorded, handlers={"read_file": shouting_read_file})

    same = run_case(case_dir)
    mine = run_case(case_dir, agent=agent)
    print(f"recorded agent: {same.verdict} {same.reasons}")
    print(f"my agent:       {mine.verdict} {mine.reasons}")
    for check in mine.checks:
        if check.result != "pass":
            print(f"  {check.id}: {check.detail}")


def report(err: CaseError) -> int:
    """Print an error as the CLI does (code, file and line, message, hint); its exit status."""
    print(err.render(), file=sys.stderr)
    if err.hint:
        print(f"  hint: {err.hint}", file=sys.stderr)
    return err.exit_status


if __name__ == "__main__":
    try:
        main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT)
    except CaseError as err:
        sys.exit(report(err))
