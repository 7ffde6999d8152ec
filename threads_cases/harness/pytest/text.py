"""The text of a failed item of the pytest plugin (:mod:`.plugin`): the CLI's failure
panel as plain text, headed by the verdict and reasons (spec/reports.md section 4)."""

from __future__ import annotations

import dataclasses
import io
import re

from ..run.runner import CaseResult

#: The CLI's options a hint may name, and the plugin's spelling of each.
_OPTIONS = {
    "--agent": "--threads-cases-agent",
    "--app-dir": "--threads-cases-app-dir",
    "--impl": "--threads-cases-impl",
}
_OPTION = re.compile(r"(?<![\w-])(--agent|--app-dir|--impl)(?![\w-])")


def pytest_wording(hint: str) -> str:
    """``hint`` as a pytest user acts on it: the CLI's ``--agent``, ``--app-dir`` and
    ``--impl`` become the plugin's ``--threads-cases-agent``, ``--threads-cases-app-dir`` and
    ``--threads-cases-impl``; the rest is unchanged."""
    return _OPTION.sub(lambda m: _OPTIONS[m.group(1)], hint)


def failure_text(result: CaseResult, width: int = 120) -> str:
    """The CLI's failure panel as plain text, then the reasons line; for an implementation
    that cannot start, the one line saying why and how to build or install it."""
    from rich.console import Console

    from threads_cases.core.errors import REASON_HINTS
    from threads_cases.harness.report.suite_view import render_failure

    if result.verdict == "error" and result.reasons == ["driver_unavailable"]:
        reason = " ".join(line.strip() for line in result.message.splitlines())
        return f"threads-cases: {result.implementation} could not start: {reason}"

    result = dataclasses.replace(result, hint=pytest_wording(result.hint))
    buf = io.StringIO()
    Console(
        file=buf, width=width, no_color=True, force_terminal=False, highlight=False, emoji=False
    ).print(render_failure(result))
    head = (
        f"threads-cases: {result.case} [{result.implementation}] {result.verdict}: "
        f"{', '.join(result.reasons) or '-'}"
    )
    if result.warnings:
        head += f" (warnings: {', '.join(result.warnings)})"
    errored = result.verdict == "error" and result.reasons and not result.hint
    # the panel shows the error's own hint; the code's general one only when it has none
    hint = pytest_wording(REASON_HINTS.get(result.reasons[0], "")) if errored else ""
    hint = f"\n  hint: {hint}" if hint else ""
    return head + "\n" + buf.getvalue().rstrip() + hint + f"\ncase: {result.path}"
