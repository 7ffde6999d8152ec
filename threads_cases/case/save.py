"""Saving a turn as a case (spec/case-format.md, section 3): ``save_case`` and its refusals.

The case is the log up to and including the fork point ``at``, the next user input after it
and the turn that input started. A refusal never raises: it comes back as
``SaveResult(ok=False, error=SaveError(code, message))`` with one of the codes
``invalid_request``, ``event_not_found``, ``no_turn_after_fork``, ``turn_incomplete``,
``egress_policy_unsupported``, ``case_exists``, ``log_invalid``, ``unsafe_value``,
``secret_detected``, ``case_too_large``, ``replay_failed``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.dialects import get_dialect
from ..core.errors import CaseError
from ..core.files import MAX_CASE_BYTES as MAX_CASE_BYTES
from ..core.files import RECORDING_LISTS, check_recording_bytes
from ..core.texts import quote
from ..reference.runtime import ArtifactStore
from ..reference.sandbox import SandboxProvider
from .build import TERMINAL as TERMINAL
from .build import build_case_files as build_case_files
from .build import interruption_of as interruption_of
from .build import recorded_parts as recorded_parts
from .build import split_turn
from .directory import (
    DEFAULT_DIALECTS,
    CaseExpectation,
    check_case_name,
)
from .writer import write_case_dir

SECRETS_MODES = ("refuse", "redact", "allow")
NOT_VERIFIED_WARNING = (
    "warning: --no-verify: the case was not replayed before it was written; its first run may fail"
)


@dataclass(frozen=True)
class SavedCase:
    """Where a case was saved: ``path``, ``portable``, ``fingerprint`` ("sha256:<hex>") and
    ``outcome`` ("created", "unchanged" or "replaced")."""

    path: Path
    portable: bool
    fingerprint: str
    outcome: str = "created"
    #: False when the save was asked not to replay the case first (``verify=False``)
    verified: bool = True
    #: model requests of the turn whose recorded request_sha256 is not the hash of the
    #: request the reducer builds: ``{"event_id", "index", "recorded", "computed"}``
    request_mismatches: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class SaveError:
    """A refusal: ``code`` (a reason code), ``message`` (one sentence, never a secret value),
    ``hint`` (one line saying what to do) and, where the refusal has one, its location:
    ``file``, 1-based ``line`` and JSON ``pointer`` (the keys of ``Problem.to_json``)."""

    code: str
    message: str
    hint: str = ""
    file: str | None = None
    line: int | None = None
    pointer: str | None = None

    @classmethod
    def of(cls, err: CaseError, code: str | None = None) -> SaveError:
        """``err`` as a refusal (``code`` in place of its own when given)."""
        loc = err.location
        return cls(code or err.code, err.message, err.hint, loc.file, loc.line, loc.pointer)

    def error(self) -> CaseError:
        """This refusal as the :class:`CaseError` the command line prints."""
        return CaseError(
            self.code,
            self.message,
            file=self.file,
            line=self.line,
            pointer=self.pointer,
            hint=self.hint,
        )

    def to_json(self) -> dict[str, Any]:
        """``{"code", "message", "hint"}`` (no ``hint`` when empty) and the location's
        ``file``, ``line`` and ``pointer`` where the refusal has them."""
        doc: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.hint:
            doc["hint"] = self.hint
        where = {"file": self.file, "line": self.line, "pointer": self.pointer}
        return doc | {k: v for k, v in where.items() if v is not None}


@dataclass(frozen=True)
class SaveResult:
    """``ok`` and either ``value`` (:class:`SavedCase`) or ``error`` (:class:`SaveError`)."""

    ok: bool
    value: SavedCase | None = None
    error: SaveError | None = None
    #: lines for the user (drafted matchers, a skipped verification, request mismatches)
    warnings: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        if self.ok and self.value is not None:
            return {
                "ok": True,
                "path": str(self.value.path),
                "portable": self.value.portable,
                "fingerprint": self.value.fingerprint,
                "outcome": self.value.outcome,
                "verified": self.value.verified,
                "request_mismatches": list(self.value.request_mismatches),
                "warnings": list(self.warnings),
            }
        assert self.error is not None
        return {"ok": False, **self.error.to_json()}


def _expectation(expect: Any) -> CaseExpectation:
    from ..core.matchers import validate_matcher

    if expect is None:
        return CaseExpectation()
    if isinstance(expect, dict):
        expect = CaseExpectation(list(expect.get("must", [])), list(expect.get("expect", [])))
    if not isinstance(expect, CaseExpectation):
        raise CaseError(
            "invalid_request", "expect must be a CaseExpectation(must=[...], expect=[...])"
        )
    must = [validate_matcher(m, pointer=f"/must/{i}") for i, m in enumerate(expect.must)]
    exp = [validate_matcher(m, pointer=f"/expect/{i}") for i, m in enumerate(expect.expect)]
    return CaseExpectation(must, exp)


def _dialects(dialects: Any) -> list[str]:
    """The case's dialects: a non-empty list of distinct dialect names (case.json requires
    minItems 1 and uniqueItems; a case without them could never be loaded)."""
    if isinstance(dialects, str) or not isinstance(dialects, Sequence):
        raise CaseError("invalid_request", "dialects must be a list of dialect names")
    names = list(dialects)
    if not names:
        raise CaseError("invalid_request", "dialects must name at least one dialect")
    if len(set(names)) != len(names):
        raise CaseError("invalid_request", f"dialects {quote(names)} repeat a name")
    for name in names:
        if not isinstance(name, str):
            raise CaseError("invalid_request", f"dialect {quote(name)} is not a name")
        get_dialect(name)
    return names


def _refuse_secrets(files: dict[str, bytes], *, redacted: bool = False) -> None:
    from .secrets import scan_files

    found = scan_files(files)
    # request records repeat what the log and recordings hold: name the originals first
    found = sorted(found, key=lambda f: "/request/" in f.where())
    if found:
        where = "; ".join(f"{f.kind} at {f.where()}" for f in found[:5])
        more = f" (and {len(found) - 5} more)" if len(found) > 5 else ""
        what = "redaction would leave" if redacted else "the case would hold"
        raise CaseError(
            "secret_detected",
            f"{what} values that look like credentials: {where}{more}",
            hint="pass --redact to replace them with stable placeholders, or --allow-secrets "
            "to save them knowingly"
            if not redacted
            else "a redaction is all or nothing: remove these values by hand (they may sit "
            "in --expect), or pass --allow-secrets",
        )


def check_case_files(files: dict[str, bytes], secrets: str) -> None:
    """The last save checks, in order (spec/case-format.md 7): ``case_too_large`` when the
    files hold more than 512 MiB or a recording more than 32 MiB (8.4), then
    ``secret_detected`` unless ``secrets`` is ``"allow"`` (after a redaction, any value
    left is refused: all or nothing)."""
    total = sum(len(b) for b in files.values())
    if total > MAX_CASE_BYTES:
        raise CaseError(
            "case_too_large",
            f"the case would hold {total} bytes; at most {MAX_CASE_BYTES} (512 MiB)",
            hint="save a turn with smaller inputs, or fork later in the thread",
        )
    for name in RECORDING_LISTS:
        check_recording_bytes(name, files.get(name, b""))
    if secrets != "allow":
        _refuse_secrets(files, redacted=secrets == "redact")


def check_secrets_mode(secrets: Any) -> str:
    if secrets not in SECRETS_MODES:
        raise CaseError(
            "invalid_request",
            f"secrets must be one of {', '.join(SECRETS_MODES)}, not {quote(secrets)}",
        )
    return str(secrets)


def save_case(
    events: Sequence[dict[str, Any]],
    *,
    sandbox: SandboxProvider,
    store: ArtifactStore,
    name: str,
    expect: CaseExpectation | dict[str, Any] | None,
    at: str,
    dir: str | os.PathLike[str],
    external_effects: str = "stub",
    overwrite: bool = False,
    dialects: Sequence[str] = DEFAULT_DIALECTS,
    secrets: str = "refuse",
    verify: bool = True,
    sandbox_dir: str | os.PathLike[str] | None = None,
    agent: Any = None,
    draft: bool | None = None,
) -> SaveResult:
    """Save the turn after ``at`` as ``dir/name`` (spec/case-format.md, section 3).

    ``expect`` holds the matchers; ``draft`` decides as ``save`` does without ``--must`` /
    ``--expect`` (case-format.md 5.12): ``None`` (the default) drafts them from the recorded
    turn (as ``threads-cases draft``) when ``expect`` holds none, ``True`` adds the drafted ones
    before the given ones, ``False`` saves ``expect`` as given, an empty one too (the explicit
    way to save none). The result's ``warnings`` say which: :data:`DRAFTED_NOTE`, or
    :data:`EMPTY_EXPECTATION_WARNING` for a case that checks nothing about its turn.

    ``verify`` (the default) replays the built case on the Python reference implementation
    before it is moved into place, as ``run`` would, and refuses a case whose first run
    would not pass with ``replay_failed`` (case-format.md 5.10). ``agent`` is the agent that
    replay runs (an ``AgentSpec``, or a ``"module:attribute"`` reference): the one the
    thread was recorded with, whose handlers a custom sandbox tool needs (spec/replay.md 8).
    ``sandbox_dir`` is a folder holding sandbox files the log knows by sha256 only
    (``"artifact": null``): their bytes are taken from ``sandbox_dir/<path>``, and a file
    whose bytes do not match the recorded sha256 is refused with ``invalid_request`` (5.9).
    Files neither the log nor ``sandbox_dir`` holds are saved hash-only; a replay that reads
    one stops with ``sandbox_content_missing``.

    ``secrets`` decides what happens to values that look like credentials
    (threads_cases.case.secrets): ``"refuse"`` (the default) refuses with ``secret_detected``
    naming the file and JSON pointer, never the value; ``"redact"`` replaces each with
    ``[REDACTED:<16 hex>]`` everywhere so the case still replays (and refuses with
    ``secret_detected`` if any value would be left: all or nothing); ``"allow"`` saves
    them knowingly. A case over 512 MiB is refused with ``case_too_large``.

    Returns ``SaveResult(ok=True, value=SavedCase(path, portable, fingerprint, outcome))`` or
    ``SaveResult(ok=False, error=SaveError(code, message))``; it never raises for a refusal.
    """
    try:
        _check_types(dir, sandbox_dir, overwrite=overwrite, verify=verify, draft=draft)
        exp, dialects = _check_options(name, dir, expect, at, external_effects, dialects, sandbox)
        check_secrets_mode(secrets)
        _check_log(events)
        events, store = _complete_events(events, at, store, sandbox_dir, secrets)
        exp, notes = drafted(split_turn(events, at)[1], exp, draft)
        files, meta = build_case_files(
            events=events,
            name=name,
            expect=exp,
            at=at,
            external_effects=external_effects,
            portable=bool(sandbox.portable),
            store=store,
            dialects=dialects,
        )
        check_case_files(files, secrets)
        from .verify import request_mismatches, verify_case_dir

        check = (lambda p: verify_case_dir(p, dialects, agent)) if verify else None
        outcome = write_case_dir(  # the save checks ran above, with its secrets mode
            Path(dir), name, files, overwrite=overwrite, verify=check, secrets="allow"
        )
        turn_ids = {e["event_id"] for e in split_turn(events, at)[1]}
        mismatches = tuple(m for m in request_mismatches(events) if m["event_id"] in turn_ids)
    except CaseError as err:
        return _refused(err, secrets)
    except OSError as exc:
        return SaveResult(
            False,
            error=SaveError(
                "io_error",
                f"cannot write the case: {exc.strerror or exc}",
                "check that --dir is a folder you can write to",
                file=str(exc.filename) if exc.filename else str(Path(dir) / name),
            ),
        )
    saved = SavedCase(
        Path(dir) / name, meta["portable"], meta["fingerprint"], outcome, verify, mismatches
    )
    return SaveResult(True, value=saved, warnings=(*notes, *_warnings(verify, mismatches)))


#: The note of a save that drafted its matchers (the command line's, with the API's way out)
DRAFTED_NOTE = (
    "drafted {must} must and {expect} expect matcher(s) from the recorded turn "
    "(see them in case.json; draft=False to skip)"
)
#: The warning of a save whose case checks nothing about its turn (``draft=False``, or a turn
#: that gave nothing to draft)
EMPTY_EXPECTATION_WARNING = (
    "warning: the case checks nothing about the turn's outcome (no must or expect "
    "matchers); every run of it will warn no_expectations"
)


def drafted(
    turn: Sequence[dict[str, Any]], given: CaseExpectation, draft: bool | None
) -> tuple[CaseExpectation, list[str]]:
    """The expectation to save from the recorded ``turn`` (user_message .. terminal event)
    and the lines saying how it came about (``draft`` as :func:`save_case` says;
    case-format.md 5.12). The drafted matchers come first."""
    empty = not given.must and not given.expect
    if draft is True or (draft is None and empty):
        from .turns import draft_turn

        proposed = draft_turn(turn)
        must, expect = proposed["must"] + list(given.must), proposed["expect"] + list(given.expect)
        if proposed["must"] or proposed["expect"]:
            note = DRAFTED_NOTE.format(must=len(must), expect=len(expect))
            return CaseExpectation(must, expect), [note]
    return (given, [EMPTY_EXPECTATION_WARNING]) if empty else (given, [])


def _describe(value: Any) -> str:
    """A wrong argument in a message: its type, and its value when short (as TypeScript's)."""
    if value is None or isinstance(value, bool | int | float):
        return f"{type(value).__name__} {value!r}"
    if isinstance(value, str):
        return f"the string {quote(value if len(value) <= 40 else value[:40] + '...')}"
    return f"a {type(value).__name__}"


def _check_types(
    dir: Any, sandbox_dir: Any, *, overwrite: Any, verify: Any, draft: Any = None
) -> None:
    """The arguments save_case passes to the file system and as flags: ``dir`` a folder path,
    ``sandbox_dir`` one or None, ``overwrite`` and ``verify`` booleans, ``draft`` one or
    None; anything else is
    ``invalid_request`` with a hint for the API (ts/src/case/save-arguments.ts), never a
    TypeError from deep inside a save."""
    if not isinstance(dir, str | os.PathLike) or dir == "":
        raise CaseError(
            "invalid_request",
            f"dir must be the folder to save the case in, not {_describe(dir)}",
            hint="pass dir= the path of a folder you can write to, as a str or Path",
        )
    if sandbox_dir is not None and (
        not isinstance(sandbox_dir, str | os.PathLike) or sandbox_dir == ""
    ):
        raise CaseError(
            "invalid_request",
            f"sandbox_dir must be a folder path, not {_describe(sandbox_dir)}",
            hint="pass sandbox_dir= the path of the folder holding the sandbox files "
            "(a str or Path), or leave it out",
        )
    for key, value in (("overwrite", overwrite), ("verify", verify)):
        if not isinstance(value, bool):
            raise CaseError(
                "invalid_request",
                f"{key} must be True or False, not {_describe(value)}",
                hint=f"pass {key}=True or {key}=False, or leave it out",
            )
    if draft is not None and not isinstance(draft, bool):
        raise CaseError(
            "invalid_request",
            f"draft must be True, False or None, not {_describe(draft)}",
            hint="pass draft=False to save no matchers, draft=True to add drafted ones, "
            "or leave it out",
        )


def _check_options(
    name: str,
    dir: str | os.PathLike[str],
    expect: CaseExpectation | dict[str, Any] | None,
    at: str,
    external_effects: str,
    dialects: Sequence[str],
    sandbox: SandboxProvider,
) -> tuple[CaseExpectation, list[str]]:
    """The checked expectation and dialects; ``invalid_request`` for a bad name, ``dir``,
    option or ``at``, ``egress_policy_unsupported`` for a sandbox that cannot block the network."""
    check_case_name(name)
    _check_dir(dir)
    if external_effects not in ("stub", "forbid"):
        raise CaseError(
            "invalid_request",
            f"external_effects must be 'stub' or 'forbid', not {quote(external_effects)}",
        )
    if not isinstance(at, str) or not at:
        raise CaseError("invalid_request", "at must be an event_id")
    exp = _expectation(expect)
    checked = _dialects(dialects)
    if not sandbox.blocks_egress:
        raise CaseError(
            "egress_policy_unsupported",
            f"the thread's sandbox ({type(sandbox).__name__}) cannot block network access, "
            "and a replay must never reach the outside world",
        )
    return exp, checked


def _check_dir(dir: str | os.PathLike[str]) -> None:
    """``dir`` is a folder to create the case in (case-format.md 5.2 step 1): not a file nor
    below one, and neither a case directory nor inside one (a case holds only its files)."""
    from ..core.statedir import out_folder_problem

    problem = out_folder_problem(dir, "the folder to create the case in")
    if problem is not None:
        raise CaseError("invalid_request", problem[0], hint=problem[1])


LOG_HINT = (
    "pass the log as a list of canonical events, such as thread.events or list(read_log(path))"
)


def _check_log(events: Any) -> None:
    """The log's shape, as the TypeScript saveCase checks it: a sequence (``invalid_request``)
    of objects with string ``event_id``, ``type`` and ``ts`` and an object ``data``
    (``log_invalid`` at ``/<index>/...``), so a bad argument is refused, never a TypeError or
    KeyError. The schema is not checked (a log read with read_log was checked then)."""
    if not isinstance(events, Sequence) or isinstance(events, (str, bytes)):
        what = "None" if events is None else type(events).__name__
        raise CaseError(
            "invalid_request", f"the log must be a list of events, not {what}", hint=LOG_HINT
        )
    for index, event in enumerate(events):
        problem = _envelope_problem(event)
        if problem is not None:
            pointer = f"/{index}{problem[0]}"
            raise CaseError(
                "log_invalid", f"event {pointer}: {problem[1]}", pointer=pointer, hint=LOG_HINT
            )


def _envelope_problem(event: Any) -> tuple[str, str] | None:
    """The first envelope field a save reads that ``event`` lacks, as (pointer, message)."""
    if not isinstance(event, dict):
        return "", f"an event must be an object, not {type(event).__name__}"
    for key in ("event_id", "type", "ts"):
        if not isinstance(event.get(key), str):
            return f"/{key}", f"{key} must be a string, not {quote(event.get(key))}"
    if not isinstance(event.get("data"), dict):
        return "/data", f"data must be an object, not {quote(event.get('data'))}"
    return None


def _complete_events(
    events: Sequence[dict[str, Any]],
    at: str,
    store: ArtifactStore,
    sandbox_dir: str | os.PathLike[str] | None,
    secrets: str,
) -> tuple[Sequence[dict[str, Any]], ArtifactStore]:
    """The events and artifacts to save: hash-only sandbox files' bytes from ``sandbox_dir``,
    then every secret redacted with ``secrets="redact"``."""
    if sandbox_dir is not None:
        from .sandbox_files import supply_sandbox_bytes

        store = supply_sandbox_bytes(events, at, store, Path(sandbox_dir))
    if secrets == "redact":  # after every artifact is in the store, so all are redacted
        from .redact import redact_events

        events, store = redact_events(events, store)
    return events, store


def _refused(err: CaseError, secrets: str) -> SaveResult:
    """A refusal as a result; its message never shows a secret (spec/reason-codes.md 1.1)."""
    code = "invalid_request" if err.code == "dialect_unknown" else err.code
    if secrets != "allow":
        from .secrets import redact_text

        loc = err.location
        err = CaseError(
            err.code,
            redact_text(err.message),
            file=loc.file,
            line=loc.line,
            pointer=loc.pointer,
            hint=err.hint,
        )
    return SaveResult(False, error=SaveError.of(err, code))


def _warnings(verify: bool, mismatches: tuple[dict[str, Any], ...]) -> tuple[str, ...]:
    """The save's warnings: not verified, and each turn request whose hash is not its own."""
    warnings = [] if verify else [NOT_VERIFIED_WARNING]
    warnings += [
        f"warning: line {m['line']} ({m['event_id']}): the recorded request_sha256 is not the "
        "hash of the request the reducer builds; the case will drift on request_diverged"
        for m in mismatches
    ]
    return tuple(warnings)
