"""Fill in ``differences`` in each test of spec/conformance/match/ (spec/matchers.md 7.2 and
10.1): the places where the event does not fit the matcher, in path order, each
``{pointer, expected, actual, missing, extra}``; empty exactly when ``matched`` is true.

Run ``python tools/make_match_differences.py`` after adding a match test (without
``differences``), then read the new lists: they are what every implementation's ``match``
answer must carry, and the TypeScript suite checks them independently.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from threads_cases.core.canonical import canonical_document  # noqa: E402
from threads_cases.core.matchers import differences  # noqa: E402
from threads_cases.core.strictjson import parse  # noqa: E402

DIR = ROOT / "spec" / "conformance" / "match"


def main() -> int:
    for path in sorted(DIR.glob("*.json")):
        doc: dict[str, Any] = parse(path.read_bytes())
        matcher = parse(doc["matcher_text"].encode()) if "matcher_text" in doc else doc["matcher"]
        event = parse(doc["event_text"].encode()) if "event_text" in doc else doc["event"]
        diffs = [d.to_json() for d in differences(matcher, event)]
        if (not diffs) is not doc["matched"]:
            print(f"{path.name}: differences disagree with matched", file=sys.stderr)
            return 1
        doc["differences"] = diffs
        path.write_bytes(canonical_document(doc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
