"""Compare the importer's answers between two source trees, byte for byte (issue 20).

    python benchmarks/import_compare.py OLD_ROOT [NEW_ROOT] [--big]

``OLD_ROOT`` is a checkout (or ``git archive`` of ``threads_cases``, ``schemas`` and ``spec``)
of the code before a change; ``NEW_ROOT`` defaults to this checkout. Every input below is
imported by both, each in lenient and strict mode, and the answers must be identical: the
log's bytes, the statistics (skipped lines per kind, invalid lines, notes, every warning with
its line) or the refusal (reason code, message, file, line, pointer, hint). Inputs: the
sample transcripts (examples/sessions, tests/importers, /work/shared/trials when present) and
edge cases generated here from them (floats, keys above U+D7FF and U+FFFF, deep nesting,
timestamp spellings, duplicate keys, big integers, lone surrogates, damaged lines, malformed
records, repeated uuids, sidechains). The other formats (issue 31): every sample under
tests/importers/{vcr,inspect-ai,openhands,swe-agent}, as its format and as ``auto``, each also
cut short (a third and two thirds of its bytes) and the YAML gzipped; ``threads export`` files
of the samples' imported logs and of the tests' export (tests/threads_exports.py), whole, with a
broken chain, a wrong head, without their head, a line cut, in the threads-ts dialect.
``--big`` adds the generated 20 and 80 MB sessions of benchmarks/import_bench.py (kept under
benchmarks/.work/ with ``--keep``) and the files of benchmarks/importers_bench.py when present
(benchmarks/.work/importers/).

Exit status 1 when any answer differs, with the inputs that differ.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from threads_cases.core.errors import CaseError
from threads_cases.importers import import_to_file

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORK = HERE / ".work" / "compare"

CHILD = r"""
import hashlib, json, sys
from threads_cases.core.errors import CaseError
import threads_cases.importers as imp
out = []
for fmt, path, strict, branch in json.loads(sys.argv[1]):
    dst = sys.argv[2]
    rec = {"input": [fmt, path, strict, branch]}
    try:
        rep = imp.import_to_file(fmt, path, dst, strict=strict, branch=branch)
        data = open(dst, "rb").read()
        st = rep.stats
        rec["ok"] = {
            "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data),
            "events": rep.events, "turns": rep.turns,
            "skipped": sorted(st.skipped.items()), "invalid": st.invalid, "notes": st.notes,
            "warnings": [w.as_json() for w in st.warnings],
        }
        evs = imp.import_events(fmt, path, strict=strict, branch=branch)
        rec["ok"]["events_api"] = hashlib.sha256(
            json.dumps(evs, ensure_ascii=False, sort_keys=True).encode("utf-8", "surrogatepass")
        ).hexdigest()
    except CaseError as err:
        loc = err.location
        rec["error"] = [err.code, err.message, loc.file, loc.line, loc.pointer, err.hint]
    out.append(rec)
print(json.dumps(out, ensure_ascii=True))
"""


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _dump(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _write(name: str, lines: list[str] | bytes) -> Path:
    p = WORK / name
    if isinstance(lines, bytes):
        p.write_bytes(lines)
    else:
        p.write_bytes(("\n".join(lines) + "\n").encode("utf-8", "surrogatepass"))
    return p


def _mutate(src: Path, name: str, change: Any, *, which: str = "tool_use") -> Path:
    """``src`` with ``change(obj)`` applied to the first line holding ``which``."""
    out, done = [], False
    for line in _lines(src):
        obj = json.loads(line)
        if not done and _holds(obj, which):
            change(obj)
            done = True
            out.append(_dump(obj))
        else:
            out.append(line)
    assert done, (src, which)
    return _write(name, out)


def _holds(obj: Any, which: str) -> bool:
    if not isinstance(obj, dict):
        return False
    if which in ("user", "assistant", "system", "progress"):
        return obj.get("type") == which
    content = (
        obj.get("message", {}).get("content") if isinstance(obj.get("message"), dict) else None
    )
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == which for b in content
    )


def _block(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(b for b in obj["message"]["content"] if b.get("type") == kind)


def _nest(depth: int) -> Any:
    v: Any = 1
    for i in range(depth):
        v = [v] if i % 2 else {"k": v}
    return v


TIMES = [
    "2025-09-14T10:00:05.123Z",
    "2025-09-14T10:00:05Z",
    "2025-09-14T10:00:05.123456Z",
    "2025-09-14T10:00:05.1Z",
    "2025-09-14 10:00:05.123Z",
    "2025-09-14T10:00:05,123Z",
    "2025-09-14T12:00:05.123+02:00",
    "2025-09-14T12:00:05.123+0200",
    "2025-09-14T10:00:05.123z",
    "2025-09-14T10:00:05.123-00:30",
    1757844005,
    1757844005123,
    1757844005.5,
    None,
    "2025-02-30T10:00:05.123Z",
    "2025-09-14T24:00:05.123Z",
    "2025-09-14T10:00:05.123+24:00",
    "0000-01-01T00:00:00.000Z",
    "9999-12-31T23:59:59.999-01:00",
    "yesterday",
    True,
    -5,
    [],
]


def edge_cases(sample: Path, sidechain: Path) -> list[Path]:
    """Generated inputs (written under benchmarks/.work/compare/)."""
    WORK.mkdir(parents=True, exist_ok=True)
    cases: list[Path] = []

    def tool_input(name: str, value: Any) -> None:
        def change(obj: dict[str, Any]) -> None:
            _block(obj, "tool_use")["input"] = value

        cases.append(_mutate(sample, name, change))

    tool_input("float-input.jsonl", {"ratio": 0.1, "big": 1e21, "tiny": 5e-324, "n": 2.0})
    tool_input("unsafe-float-input.jsonl", {"x": 1e17})
    tool_input("key-above-ffff.jsonl", {"\U0001d4b3": 1, "\ue000": 2, "\ud7ff": 3, "a": 4})
    tool_input("key-e000.jsonl", {"\ue000": "x", "\uffff": "y"})
    tool_input("key-ascii-unicode.jsonl", {"é": 1, "z": 2})
    for d in (200, 240, 246, 248, 249, 250, 251, 252, 253, 254, 255, 256, 300):
        tool_input(f"deep-{d}.jsonl", {"v": _nest(d)})
    tool_input("int-limit.jsonl", {"max": 2**53 - 1, "min": -(2**53 - 1)})

    def result_content(name: str, value: Any) -> None:
        def change(obj: dict[str, Any]) -> None:
            _block(obj, "tool_result")["content"] = value

        cases.append(_mutate(sample, name, change, which="tool_result"))

    def tool_use_result(name: str, where: str) -> None:
        def change(obj: dict[str, Any]) -> None:
            out = {"stdout": "x" * 50, "n": 1}
            if where == "first":
                items = [("toolUseResult", out), *obj.items()]
                obj.clear()
                obj.update(items)
            elif where == "last":
                obj["toolUseResult"] = out
            elif where == "middle":
                items = list(obj.items())
                items.insert(3, ("toolUseResult", out))
                obj.clear()
                obj.update(items)
            elif where == "nested-too":  # the same bytes inside the message, and at the top
                b = _block(obj, "tool_result")
                b["content"] = [{"type": "text", "text": "t", "a": 1, "toolUseResult": out}]
                obj["toolUseResult"] = out
            elif where == "float":
                obj["toolUseResult"] = {"v": 1.5, "w": 1e21}
            elif where == "deep":
                obj["toolUseResult"] = _nest(240)

        cases.append(_mutate(sample, name, change, which="tool_result"))

    for where in ("first", "last", "middle", "nested-too", "float", "deep"):
        tool_use_result(f"tool-use-result-{where}.jsonl", where)
    result_content("result-float.jsonl", [{"type": "text", "text": "x", "score": 0.5}])
    result_content("result-deep.jsonl", [{"type": "text", "text": "x", "n": _nest(253)}])
    result_content("result-high-key.jsonl", [{"type": "text", "text": "x", "\U0001f600": 1}])
    result_content("result-none.jsonl", None)
    result_content("result-number.jsonl", 5)

    def usage(name: str, value: Any) -> None:
        def change(obj: dict[str, Any]) -> None:
            obj["message"]["usage"] = value

        cases.append(_mutate(sample, name, change, which="assistant"))

    usage("usage-float.jsonl", {"input_tokens": 1.5, "output_tokens": 2})
    usage("usage-huge.jsonl", {"input_tokens": 2**53 - 1, "output_tokens": 2**53 - 1})
    usage("usage-bool.jsonl", {"input_tokens": True, "output_tokens": 3})

    for i, ts in enumerate(TIMES):

        def set_ts(obj: dict[str, Any], ts: Any = ts) -> None:
            obj["timestamp"] = ts

        cases.append(_mutate(sample, f"ts-{i:02d}.jsonl", set_ts, which="user"))
        cases.append(_mutate(sample, f"ts-assistant-{i:02d}.jsonl", set_ts, which="assistant"))
    # every line's time in one other spelling
    for i, ts in enumerate(TIMES[1:10]):
        out = []
        for line in _lines(sample):
            obj = json.loads(line)
            if isinstance(obj, dict) and "timestamp" in obj:
                obj["timestamp"] = ts
            out.append(_dump(obj))
        cases.append(_write(f"ts-all-{i:02d}.jsonl", out))

    raw = _lines(sample)
    first_tool = next(i for i, x in enumerate(raw) if '"tool_use"' in x)
    first_user = next(i for i, x in enumerate(raw) if '"type":"user"' in x)
    last = len(raw) - 1

    def replace(name: str, index: int, text: str) -> None:
        lines = list(raw)
        lines[index] = text
        cases.append(_write(name, lines))

    replace("dup-key-top.jsonl", first_tool, raw[first_tool][:-1] + ',"type":"assistant"}')
    replace(
        "dup-key-nested.jsonl",
        first_tool,
        raw[first_tool].replace('"input":{', '"input":{"a":1,"a":2,', 1),
    )
    replace(
        "big-int-input.jsonl",
        first_tool,
        raw[first_tool].replace('"input":{', '"input":{"n":123456789012345678901234,', 1),
    )
    replace(
        "big-int-64.jsonl",
        first_tool,
        raw[first_tool].replace('"input":{', '"input":{"n":9007199254740993,', 1),
    )
    replace(
        "surrogate-input.jsonl",
        first_tool,
        raw[first_tool].replace('"input":{', '"input":{"s":"a\\ud800b",', 1),
    )
    replace(
        "surrogate-pair-escaped.jsonl",
        first_tool,
        raw[first_tool].replace(
            '"input":{', '"input":{"s":"\\ud83d\\ude00","\\ud83d\\ude01":1,', 1
        ),
    )
    replace(
        "escaped-colon.jsonl",
        first_tool,
        raw[first_tool].replace('"input":{', '"input":{"s":"a\\u003ab","c:":":",', 1),
    )
    replace("surrogate-key.jsonl", first_user, raw[first_user][:-1] + ',"\\udc00x":1}')
    replace("invalid-utf8.jsonl", first_user, raw[first_user])
    lines_b = [x.encode() for x in raw]
    lines_b[first_user] = lines_b[first_user].replace(
        b'"content":', b'"x":"\xff\xfe","content":', 1
    )
    cases.append(_write("invalid-utf8-bytes.jsonl", b"\n".join(lines_b) + b"\n"))
    lines_b = [x.encode() for x in raw]
    lines_b[first_user] = b"\x00\x00\x00" + lines_b[first_user]
    cases.append(_write("nul-run.jsonl", b"\n".join(lines_b) + b"\n"))
    cases.append(_write("crlf.jsonl", ("\r\n".join(raw) + "\r\n").encode()))
    cases.append(_write("bom.jsonl", b"\xef\xbb\xbf" + ("\n".join(raw) + "\n").encode()))
    cases.append(_write("no-final-newline.jsonl", "\n".join(raw).encode()))
    replace("blank-line.jsonl", first_user, "   ")
    replace("empty-line.jsonl", first_user, "")
    replace("cr-line.jsonl", first_user, "\r")
    replace("empty-line-end.jsonl", last, raw[last] + "\n\n")
    replace("joined.jsonl", first_user, raw[first_user] + raw[first_user + 1])
    replace("cut.jsonl", first_user, raw[first_user][: len(raw[first_user]) // 2])
    replace("cut-joined.jsonl", first_user, raw[first_user][:40] + raw[first_user + 1])
    replace("nan.jsonl", first_tool, raw[first_tool].replace('"input":{', '"input":{"n":NaN,', 1))
    replace("not-object.jsonl", first_user, "[1,2,3]")
    replace("string-line.jsonl", first_user, '"hello"')
    replace("last-cut.jsonl", last, raw[last][:-3])

    def malformed(name: str, change: Any, which: str = "user") -> None:
        cases.append(_mutate(sample, name, change, which=which))

    malformed("msg-not-object.jsonl", lambda o: o.__setitem__("message", 5))
    malformed("content-number.jsonl", lambda o: o["message"].__setitem__("content", 5))
    malformed(
        "content-str-assistant.jsonl",
        lambda o: o["message"].__setitem__("content", "plain text"),
        "assistant",
    )
    malformed("uuid-number.jsonl", lambda o: o.__setitem__("uuid", 5))
    malformed("type-number.jsonl", lambda o: o.__setitem__("type", 5))
    malformed("type-unknown.jsonl", lambda o: o.__setitem__("type", "mystery"))
    malformed(
        "tool-use-no-id.jsonl", lambda o: _block(o, "tool_use").__setitem__("id", ""), "tool_use"
    )
    malformed(
        "tool-result-no-id.jsonl",
        lambda o: _block(o, "tool_result").__setitem__("tool_use_id", 3),
        "tool_result",
    )
    malformed(
        "tool-result-bad-error.jsonl",
        lambda o: _block(o, "tool_result").__setitem__("is_error", "yes"),
        "tool_result",
    )
    malformed(
        "tool-result-bad-block.jsonl",
        lambda o: _block(o, "tool_result").__setitem__("content", [{"type": ""}]),
        "tool_result",
    )
    malformed(
        "usage-not-object.jsonl", lambda o: o["message"].__setitem__("usage", [1]), "assistant"
    )
    malformed("session-surrogate.jsonl", lambda o: o.__setitem__("sessionId", "s\ud800"))
    malformed("session-high.jsonl", lambda o: o.__setitem__("sessionId", "s\U0001f600"))
    malformed(
        "model-high.jsonl", lambda o: o["message"].__setitem__("model", "m\U0001f600"), "assistant"
    )
    malformed("text-surrogate.jsonl", lambda o: o["message"].__setitem__("content", "a\udc00"))
    malformed("cwd-float.jsonl", lambda o: o.__setitem__("cwd", 1.5))

    # repeated uuids, a parent that comes later, a line with no uuid
    lines = list(raw)
    lines.insert(first_user + 1, raw[first_user])
    cases.append(_write("repeated-uuid.jsonl", lines))
    lines = list(raw)
    lines.append(lines.pop(first_user))
    cases.append(_write("user-moved-last.jsonl", lines))
    cases.append(_write("reversed.jsonl", list(reversed(raw))))
    cases.append(_write("only-unknown.jsonl", ['{"type":"mystery"}', '{"a":1}']))
    cases.append(_write("empty.jsonl", b""))
    # sidechain file with a main line, and a main file with its sidechain
    side = _lines(sidechain)
    cases.append(_write("side-plus-main.jsonl", side + raw[:3]))
    return cases


def cut_short_cases() -> list[Path]:
    """Transcripts that stop inside a turn (spec/importers.md section 1): the example session
    cut in the middle of a reply, a Codex exec stream without its last turn.completed, a
    rollout file whose last record is cut."""
    example = (ROOT / "examples" / "sessions" / "claude-code-session.jsonl").read_bytes()
    exec_lines = _lines(ROOT / "tests" / "importers" / "codex-exec-basic.jsonl")
    rollout = (ROOT / "tests" / "importers" / "codex-rollout-basic.jsonl").read_bytes()
    return [
        _write("cut-mid-reply.jsonl", example[:3000]),
        _write("codex-exec-no-turn-end.jsonl", exec_lines[:-1]),
        _write("codex-rollout-cut-end.jsonl", rollout[: rollout.rindex(b'"payload"') + 12]),
    ]


_OTHER = {
    "vcr": "vcr",
    "inspect-ai": "inspect-ai",
    "openhands": "openhands",
    "swe-agent": "swe-agent",
}


def other_format_cases() -> list[tuple[str, Path]]:
    """``(format, file)`` of the samples of the formats of issue 31 and their damaged forms."""
    import gzip

    out: list[tuple[str, Path]] = []
    for folder, fmt in _OTHER.items():
        for p in sorted((ROOT / "tests" / "importers" / folder).iterdir()):
            if not p.is_file():  # a sample of several files (openhands/v1): not one input
                continue
            data = p.read_bytes()
            out.append((fmt, p))
            for k in (1, 2):
                out.append((fmt, _write(f"{folder}-{k}third-{p.name}", data[: len(data) * k // 3])))
            if p.suffix == ".yaml":
                out.append((fmt, _write(p.name + ".gz", gzip.compress(data, mtime=0))))
    return out


def _write_lines(name: str, lines: list[bytes]) -> Path:
    return _write(name, b"".join(x + b"\n" for x in lines))


def _export(log_lines: list[bytes], dialect: str = "threads-py") -> list[bytes]:
    sys.path.insert(0, str(ROOT / "tests"))
    from threads_exports import THREAD, export_lines

    evs = [{**json.loads(x), "thread_id": THREAD} for x in log_lines]  # the header's
    return list(export_lines(evs, dialect=dialect))


def threads_export_cases(logs: list[Path]) -> list[Path]:
    """``threads export`` files of the given imported logs, and damaged ones (module doc)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from threads_exports import events

    out: list[Path] = []
    sets = [(p.stem, p.read_bytes().splitlines()) for p in logs]
    sets.append(("tests", [json.dumps(e).encode() for e in events()]))
    for name, lines in sets:
        if not lines:
            continue
        exp = _export(lines)
        out.append(_write_lines(f"export-{name}.jsonl", exp))
        out.append(_write_lines(f"export-ts-{name}.jsonl", _export(lines, "threads-ts")))
        mid = len(exp) // 2
        broken, at = list(exp), exp[mid].find(b'"prev_hash":"') + 13
        if at >= 13:  # one hex digit of the middle line's prev_hash changed
            digit = b"1" if exp[mid][at : at + 1] == b"0" else b"0"
            broken[mid] = exp[mid][:at] + digit + exp[mid][at + 1 :]
        out.append(_write_lines(f"export-chain-{name}.jsonl", broken))
        out.append(_write_lines(f"export-nohead-{name}.jsonl", exp[:-1]))
        out.append(
            _write_lines(
                f"export-badhead-{name}.jsonl",
                [*exp[:-1], exp[-1].replace(b'"events":', b'"events":1', 1)],
            )
        )
        out.append(
            _write_lines(f"export-cut-{name}.jsonl", [*exp[:mid], exp[mid][: len(exp[mid]) // 2]])
        )
    return out


def inputs(big: bool) -> list[tuple[str, str, bool, str | None]]:
    samples = sorted((ROOT / "examples" / "sessions").glob("*.jsonl"))
    samples += sorted((ROOT / "tests" / "importers").rglob("*.jsonl"))
    trials = Path("/work/shared/trials")
    if trials.is_dir():
        samples += sorted(trials.glob("*.jsonl"))
    sample = ROOT / "tests" / "importers" / "claude-code-parallel.jsonl"
    side = ROOT / "tests" / "importers" / "claude-code-sidechain.jsonl"
    generated = edge_cases(sample, side)
    generated += edge_cases(
        ROOT / "tests" / "importers" / "realistic" / "cc-sdk-no-ids-parallel.jsonl", side
    )
    generated += cut_short_cases()
    out: list[tuple[str, str, bool, str | None]] = []
    for p in samples + generated:
        fmt = "codex" if "codex" in p.name else "claude-code"
        for strict in (False, True):
            out.append((fmt, str(p), strict, None))
            if fmt == "codex":
                out.append(("claude-code", str(p), strict, None))  # the wrong format
    others = other_format_cases()
    logs = []
    for k, p in enumerate(samples[:12]):
        log = WORK / f"log-{k}.jsonl"
        fmt = "codex" if "codex" in p.name else "claude-code"
        try:
            import_to_file(fmt, p, log)
            logs.append(log)
        except CaseError:
            pass
    others += [("threads", p) for p in threads_export_cases(logs)]
    for fmt, p in others:
        for strict in (False, True):
            out.append((fmt, str(p), strict, None))
            out.append(("auto", str(p), strict, None))
    fork = ROOT / "tests" / "importers" / "claude-code-fork.jsonl"
    for line in _lines(fork):
        uid = json.loads(line).get("uuid")
        if uid:
            out.append(("claude-code", str(fork), False, uid))
    out.append(("claude-code", str(fork), False, "no-such-uuid"))
    if big:
        for mb in ("20", "80"):
            p = HERE / ".work" / f"claude-code-{mb}mb.jsonl"
            if p.exists():
                out.append(("claude-code", str(p), False, None))
                out.append(("claude-code", str(p), True, None))
            else:
                print(f"missing {p} (run import_bench.py --keep)", file=sys.stderr)
        bench = HERE / ".work" / "importers"
        for name, fmt in (
            ("claude-code.jsonl", "claude-code"),
            ("codex-rollout.jsonl", "codex"),
            ("run.traj", "swe-agent"),
            ("vcr-anthropic.yaml", "vcr"),
            ("vcr-anthropic-sse.yaml", "vcr"),
            ("vcr-responses-sse.yaml", "vcr"),
            ("export.jsonl", "threads"),
            ("inline.json", "inspect-ai"),
            ("pooled.eval", "inspect-ai"),
            ("trajectory.json", "openhands"),
        ):
            if (bench / name).exists():
                out.append((fmt, str(bench / name), False, None))
            else:
                print(f"missing {bench / name} (run importers_bench.py)", file=sys.stderr)
    return out


def answers(root: Path, todo: list[tuple[str, str, bool, str | None]]) -> list[Any]:
    env = dict(os.environ, PYTHONPATH=str(root))
    dst = WORK / f"out-{hashlib.sha256(str(root).encode()).hexdigest()[:8]}.jsonl"
    p = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(todo), str(dst)],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(WORK),  # not a checkout: `python -c` puts the working folder first on sys.path
    )
    if p.returncode:
        sys.exit(f"{root}: {p.stderr}")
    return list(json.loads(p.stdout))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old", type=Path)
    ap.add_argument("new", type=Path, nargs="?", default=ROOT)
    ap.add_argument("--big", action="store_true")
    args = ap.parse_args()
    todo = inputs(args.big)
    old, new = answers(args.old, todo), answers(args.new, todo)
    bad = [(a, b) for a, b in zip(old, new, strict=True) if a != b]
    errors = sum("error" in a for a in old)
    print(f"{len(todo)} imports compared ({errors} refused), {len(bad)} differ")
    for a, b in bad[:20]:
        print(json.dumps(a)[:600])
        print(json.dumps(b)[:600])
        print()
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
