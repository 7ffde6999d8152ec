"""What a sample's ``threads-cases run`` line says it prints, checked (tests/test_readme.py and
tests/test_docs_samples.py run every sample through :func:`with_claim_checks`).

A shell line ``threads-cases run ... # fail: must_unmatched, first divergence shown`` claims
a verdict (the comment's first word: ``pass``, ``drifted``, ``fail``, ``error``, ``skip``)
and, after a colon, optionally a reason code (a word with an underscore). The sample runs as
written; after each such line one more command reads the last report that run wrote
(``.threads-cases/last-report.jsonl`` of the nearest folder upward holding one) and exits 1
unless every result has that verdict and, where one is claimed, that reason. A comment that
does not start with a verdict (``# replay it on threads-py and threads-ts``) claims nothing.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

#: a ``threads-cases run`` command line with a verdict comment (not continued on the next line)
CLAIM = re.compile(
    r"^\s*threads-cases run\b[^#\n]*#\s*(?P<verdict>pass|drifted|fail|error|skip)\b"
    r"(?::\s*(?P<reason>[a-z]+(?:_[a-z]+)+)\b)?"
)

#: the check run after a claiming line: ``python CHECKER VERDICT REASON|-``
CHECKER = """import json, sys
from pathlib import Path

verdict, reason = sys.argv[1], sys.argv[2]
here = Path.cwd()
found = [d / ".threads-cases" / "last-report.jsonl" for d in (here, *here.parents)]
report = next((f for f in found if f.is_file()), None)
if report is None:
    sys.exit(f"the sample claims {verdict}, but no run left .threads-cases/last-report.jsonl")
lines = [json.loads(x) for x in report.read_text(encoding="utf-8").splitlines() if x]
results = [r for r in lines if r.get("kind") == "result"]
wrong = [r for r in results if r["verdict"] != verdict or reason not in ("-", *r["reasons"])]
if not results or wrong:
    got = "; ".join(f"{r['case']} [{r['implementation']}] {r['verdict']} {r['reasons']}"
                    for r in results) or "no results"
    sys.exit(f"the sample claims {verdict} {reason}, the run gave: {got}")
"""


def claims(code: str) -> list[tuple[str, str | None]]:
    """The (verdict, reason or None) each claiming line of a shell sample makes, in order."""
    found = []
    for line in code.splitlines():
        m = CLAIM.match(line)
        if m and not line.rstrip().endswith("\\"):
            found.append((m["verdict"], m["reason"]))
    return found


def with_claim_checks(code: str, python: Path, checker: Path) -> str:
    """``code`` (a shell sample) with a check of the last report after every claiming line;
    the sample's own lines are unchanged. ``checker`` is where :data:`CHECKER` is written
    (outside the sample's folder, so ``git add -A`` never sees it)."""
    if not claims(code):
        return code
    checker.write_text(CHECKER, encoding="utf-8")
    out = []
    for line in code.splitlines():
        out.append(line)
        m = CLAIM.match(line)
        if m and not line.rstrip().endswith("\\"):
            args = [str(python), str(checker), m["verdict"], m["reason"] or "-"]
            out.append(shlex.join(args))
    return "\n".join(out) + "\n"
