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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import CaseError
from ..core.files import MAX_CASE_BYTES, RECORDING_LISTS, check_recording_bytes
from ..core.shapes import JsonObject
from ..core.texts import quote
from .artifacts import ArtifactStore
from .build import build_case_files, split_turn
from .directory import (
    DEFAULT_DIALECTS,
    CaseExpectation,
)
from .sandbox import SandboxProvider
from .save_arguments import check_log, check_options, check_types
from .verifier import Verifier, default_verifier
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

    def to_json(self) -> JsonObject:
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

    def to_json(self) -> JsonObject:
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
    verifier: Verifier | None = None,
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
    ``verifier`` runs that replay (:data:`threads_cases.case.verifier.Verifier`); by default
    the one the API layer registered, the harness's in-process replay.
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
        check_types(dir, sandbox_dir, overwrite=overwrite, verify=verify, draft=draft)
        exp, dialects = check_options(name, dir, expect, at, external_effects, dialects, sandbox)
        check_secrets_mode(secrets)
        check_log(events)
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
        from .verify import request_mismatches

        check = _verification(verify, verifier, dialects, agent)
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


def _verification(
    verify: bool, verifier: Verifier | None, dialects: Sequence[str], agent: Any
) -> Callable[[Path], None] | None:
    """What the writer calls on the built case before moving it into place: ``None`` without
    ``verify``, else ``verifier`` (by default the registered one) on it."""
    if not verify:
        return None
    run = verifier or default_verifier()
    return lambda path: run(path, dialects, agent)


def _warnings(verify: bool, mismatches: tuple[dict[str, Any], ...]) -> tuple[str, ...]:
    """The save's warnings: not verified, and each turn request whose hash is not its own."""
    warnings = [] if verify else [NOT_VERIFIED_WARNING]
    warnings += [
        f"warning: line {m['line']} ({m['event_id']}): the recorded request_sha256 is not the "
        "hash of the request the reducer builds; the case will drift on request_diverged"
        for m in mismatches
    ]
    return tuple(warnings)
