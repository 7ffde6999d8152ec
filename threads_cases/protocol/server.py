"""The server half of the driver protocol (spec/driver-protocol.md): the Python
implementation answering requests.

:func:`serve` reads one JSON request per line from stdin and writes one answer per line to
stdout, in order, until ``shutdown`` or end of input (``python -m
threads_cases.protocol.driver`` runs it). :func:`handle_request` answers one request as a
dict::

    hello()                        -> {"implementation": {name, language, version, dialect,
                                        homepage}, "capabilities": [...]}
    request({"cmd": "reduce", "path"|"log"|"log_text"|"log_base64": ..., "dialect"?})
                                   -> {"state": {... in the implementation's dialect}}
    request({"cmd": "replay", "case": {"path": str, "supply": {...}}})
                                   -> {"events": [... in its dialect], "stop": ...,
                                       "requests": [...],
                                       "consumed": {"replies": int, "stubs": [bool]}}

A failed request raises ``CaseError`` with the code the implementation answers. The
in-process :class:`PythonImplementation` handles the same message dicts a subprocess driver
receives, so one test suite covers both paths.
"""

from __future__ import annotations

import base64
import io
import os
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

from .._version import __version__
from ..core.canonical import canonical_line
from ..core.dialects import get_dialect
from ..core.errors import CaseError
from ..core.log import check_events, reduce_log
from ..core.reducer import Reducer
from ..core.shapes import HelloAnswer
from ..core.texts import quote
from ..reference.agent import AgentSpec
from ..reference.live import AskModel, LiveTurn
from .library_requests import HANDLERS, LIBRARY_COMMANDS
from .request_values import decode_base64, one_reduce_source
from .value_requests import canonicalize_request, match_request

if TYPE_CHECKING:
    from ..case.loader import Case

CAPABILITIES = [
    "reduce",
    "match",
    "canonicalize",
    "replay",
    "write_case",
    "live",
    "agent",
    "library",
]


def handle_request(
    message: dict[str, Any],
    *,
    dialect: str = "threads-py",
    agent: AgentSpec | None = None,
    ask_model: AskModel | None = None,
    cases: Mapping[str, Case] | None = None,
) -> dict[str, Any]:
    """Answer one protocol request with the Python runtime (the body of an ``ok`` answer).

    ``cases`` maps a case directory (as a string) to that case already read and checked by
    the case loader: a ``replay`` of it, or a ``reduce`` of one of its logs, uses what the
    loader found instead of reading and schema-checking the files again.

    ``ask_model(index, request, request_sha256) -> {"reply"} | {"stop"}`` answers the model
    calls of a ``replay`` request with ``live`` (spec/driver-protocol.md 2.5.1); such a
    request without it is ``invalid_request``.

    Raises ``CaseError`` for a failed request (its code goes into the ``error`` answer); a
    request missing a field, or with a field of the wrong type, is ``invalid_request``.
    """
    check_request(message)
    try:
        return _handle(message, dialect, agent, ask_model, cases or {})
    except (KeyError, TypeError, AttributeError) as exc:
        raise CaseError(
            "invalid_request",
            f"{message.get('cmd')!r} request is malformed: {type(exc).__name__}: {exc}",
        ) from None


REQUEST_COMMANDS = (
    "hello",
    "reduce",
    "match",
    "canonicalize",
    "replay",
    "write_case",
    *LIBRARY_COMMANDS,
    "shutdown",
)


def check_request(message: dict[str, Any]) -> None:
    """Check a request against ``schemas/driver/<cmd>.request.schema.json`` (a request
    made in process may leave out ``id``). Raises ``CaseError("invalid_request")`` with the
    JSON pointer of the first problem (spec/driver-protocol.md, "Checked messages")."""
    from ..core.schemas import schema_problems

    cmd = message.get("cmd")
    if cmd not in REQUEST_COMMANDS:
        raise CaseError(
            "invalid_request", f"unknown command {quote(cmd)}", pointer="/cmd" if cmd else ""
        )
    body = message if "id" in message else {"id": 0, **message}
    problems = schema_problems(body, f"driver/{cmd}.request.schema.json")
    if problems:
        pointer, text = problems[0]
        raise CaseError(
            "invalid_request",
            f"{cmd} request breaks driver/{cmd}.request.schema.json: {text}",
            pointer=pointer,
        )


def _lent_state(cases: Mapping[str, Case], path: str, dialect: str) -> Mapping[str, Any] | None:
    """The state of ``path`` when it is the ``dialect`` log of a lent case, as the loader
    reduced it (shared, never changed: the answer is only read)."""
    p = Path(path)
    case = cases.get(str(p.parent))
    if case is None or p.name != f"log.{dialect}.jsonl":
        return None
    return case.state(dialect)


def _handle(
    message: dict[str, Any],
    dialect: str,
    agent: AgentSpec | None,
    ask: AskModel | None,
    cases: Mapping[str, Case],
) -> dict[str, Any]:
    cmd = message.get("cmd")
    if cmd == "hello":
        return _hello(dialect)
    if cmd == "reduce":
        return _reduce(message, dialect, cases)
    if cmd == "match":
        return match_request(message)
    if cmd == "canonicalize":
        return canonicalize_request(message)
    if cmd == "replay":
        return _replay(message, dialect, agent, ask, cases)
    if cmd == "write_case":
        return {"files": write_case_files(message)}
    if cmd in HANDLERS:
        return HANDLERS[cmd](message)
    raise CaseError("invalid_request", f"unknown command {quote(cmd)}")


def _hello(dialect: str) -> dict[str, Any]:
    """``hello``: who this driver is and what it can do (spec/driver-protocol.md)."""
    return {
        "protocol": 1,
        "implementation": {
            "name": "threads-py",
            "language": "python",
            "version": __version__,
            "dialect": dialect,
            "homepage": "https://threads-cases.dev",
        },
        "capabilities": CAPABILITIES,
    }


def _reduce(message: dict[str, Any], dialect: str, cases: Mapping[str, Case]) -> dict[str, Any]:
    """``reduce``: the state of a log given by path (a lent case's log when the client lent
    it), as values, as text or as base64."""
    source = one_reduce_source(message)  # exactly one (spec/driver-protocol.md 2.2)
    d = get_dialect(message.get("dialect", dialect))
    state: Mapping[str, Any]
    lent = _lent_state(cases, str(message["path"]), d.name) if source == "path" else None
    if lent is not None:
        state = lent  # the loader checked and reduced this log: not reduced again (issue 33)
    elif source == "path":
        state = reduce_log(str(message["path"]), dialect=d)
    elif source == "log":
        r = Reducer()
        _checked_log(message["log"], d, r)
        state = r.state
    else:
        raw = (
            message["log_text"].encode("utf-8")
            if source == "log_text"
            else decode_base64(message["log_base64"], "/log_base64")
        )
        state = reduce_log(io.BytesIO(raw), dialect=d)
    return {"state": d.encode_state(state)}


def _replay(
    message: dict[str, Any],
    dialect: str,
    agent: AgentSpec | None,
    ask: AskModel | None,
    cases: Mapping[str, Case],
) -> dict[str, Any]:
    """``replay``: a case's turn replayed (live when asked), its events in ``dialect``."""
    from ..reference.replay import replay_case

    case = message.get("case") or {}
    live = None
    if "live" in message:
        if ask is None:
            raise CaseError(
                "invalid_request", "a live replay needs a client that answers model calls"
            )
        live = LiveTurn.from_request(message["live"], ask)
    if "agent" in message:  # the user's own agent, by reference (driver-protocol.md 2.5.2)
        from ..reference.agent_ref import AgentRef, load_python_agent

        if agent is not None:
            raise CaseError(
                "invalid_request", "the replay names an agent and was given one in process"
            )
        agent = load_python_agent(AgentRef.from_request(message["agent"]))
    out = replay_case(
        cases.get(str(case["path"]), case["path"]),
        implementation=dialect,
        agent=agent,
        supply=(case.get("supply") or {}).get("calls", case.get("supply")),
        live=live,
    )
    d = get_dialect(dialect)
    out["events"] = [d.encode_event(e) for e in out["events"]]
    return out


def _checked_log(
    log: list[Any], dialect: Any, reducer: Reducer | None = None
) -> list[dict[str, Any]]:
    """A log given as values, checked as a log: the reader's rules and the reducer's, event by
    event (``log_invalid`` at ``event N``), as ``reduce`` and the CLI check a log file."""
    r = reducer or Reducer()
    events = []
    for i, ev in enumerate(check_events(log, dialect=dialect)):
        try:
            r.apply(ev)
        except CaseError as exc:
            raise exc.at(file=f"event {i}") from None
        events.append(ev)
    return events


def write_case_files(message: dict[str, Any]) -> dict[str, str]:
    """The ``write_case`` request: every file of the case, base64 (spec/driver-protocol.md).

    ``thread`` is ``{log: [envelopes], dialect?, artifacts?: {sha256 hex: base64},
    portable?}``, its log checked as a whole log (reader and reducer rules, ``log_invalid``);
    ``expect`` is ``{must, expect}``; ``secrets`` is ``"refuse"`` (default), ``"redact"`` or
    ``"allow"`` (spec/case-format.md, "Secrets"); ``sandbox_dir``, a folder holding bytes of
    hash-only sandbox files (case-format.md 5.9). The files then pass the
    last save checks: ``case_too_large``, ``secret_detected``.
    """
    from ..case.artifacts import ArtifactStore
    from ..case.build import build_case_files
    from ..case.directory import CaseExpectation, check_case_name
    from ..case.layout import check_case_paths, decode_artifacts
    from ..case.redact import redact_events
    from ..case.save import check_case_files, check_secrets_mode
    from ..core.matchers import validate_matcher

    thread = message["thread"]
    blobs = decode_artifacts(thread.get("artifacts"))  # before the log: bytes match names
    events = _checked_log(thread["log"], thread.get("dialect", "threads-py"))
    store = ArtifactStore(blobs)
    exp = message.get("expect") or {}
    expectation = CaseExpectation(
        [validate_matcher(m, pointer=f"/must/{i}") for i, m in enumerate(exp.get("must", []))],
        [validate_matcher(m, pointer=f"/expect/{i}") for i, m in enumerate(exp.get("expect", []))],
    )
    if message.get("external_effects") not in ("stub", "forbid"):
        raise CaseError("invalid_request", "external_effects must be 'stub' or 'forbid'")
    secrets = check_secrets_mode(message.get("secrets", "refuse"))
    if "sandbox_dir" in message:  # a string (the request schema); before the redaction
        from ..case.sandbox_files import supply_sandbox_bytes

        store = supply_sandbox_bytes(events, message["at"], store, Path(message["sandbox_dir"]))
    if secrets == "redact":
        events, store = redact_events(events, store)
    files, _meta = build_case_files(
        events=events,
        name=check_case_name(message["name"]),
        expect=expectation,
        at=message["at"],
        external_effects=message["external_effects"],
        portable=bool(thread.get("portable", True)),
        store=store,
    )
    check_case_paths(files)  # the writer's checks (case-format.md 6.6): one safe writer
    check_case_files(files, secrets)
    return {k: base64.b64encode(v).decode() for k, v in sorted(files.items())}


class PythonImplementation:
    """``threads-py`` in process. Requests may run concurrently on several threads: each
    replay's egress guard refuses only calls made on its own behalf
    (:mod:`threads_cases.reference.egress`)."""

    name = "threads-py"
    dialect = "threads-py"
    #: what it runs under (spec/replay.md 9.1): its runtime's in-process guard
    isolation = "guard"
    restarts = 0
    #: named by the user (``Implementation.required``); set by ``open_implementation``
    required = False

    def __init__(self, agent: AgentSpec | None = None) -> None:
        self.agent = agent
        self._lent: dict[str, tuple[Case, int]] = {}
        self._lent_lock = threading.Lock()

    @contextmanager
    def lend(self, case: Case) -> Iterator[None]:
        """While the block runs, a request naming ``case`` (``replay`` of its directory,
        ``reduce`` of its log) uses this loaded and checked case: a run schema-checks each
        case file once, in the case loader (issue 20). ``case`` must have no blocking
        problem."""
        key = str(case.path)
        with self._lent_lock:
            self._lent[key] = (case, self._lent.get(key, (case, 0))[1] + 1)
        try:
            yield
        finally:
            with self._lent_lock:
                held, n = self._lent[key]
                if n > 1:
                    self._lent[key] = (held, n - 1)
                else:
                    del self._lent[key]

    def _cases(self) -> dict[str, Case]:
        with self._lent_lock:
            return {k: v[0] for k, v in self._lent.items()}

    def hello(self) -> HelloAnswer:
        return cast(HelloAnswer, handle_request({"cmd": "hello", "protocol": 1}))

    def request(
        self, message: dict[str, Any], on_model_call: AskModel | None = None
    ) -> dict[str, Any]:
        """Answer ``message``; ``on_model_call`` answers a live replay's model calls."""
        return handle_request(
            message,
            dialect=self.dialect,
            agent=self.agent,
            ask_model=on_model_call,
            cases=self._cases(),
        )

    def exchange_line(self, line: bytes) -> Any:
        """One request line answered as the driver answers it (:func:`serve`), the answer
        line as a JSON value (see ``DriverImplementation.exchange_line``)."""
        from ..core.strictjson import parse

        out = io.BytesIO()
        serve(io.BytesIO(line + b"\n"), out)
        return parse(out.getvalue().rstrip(b"\n")) if out.getvalue() else None

    def close(self) -> None:
        pass


class UnguardedPythonImplementation(PythonImplementation):
    """``threads-py`` in process with its egress guard off (``--isolation none``)."""

    isolation = "none"

    def request(
        self, message: dict[str, Any], on_model_call: AskModel | None = None
    ) -> dict[str, Any]:
        from ..reference.egress import unguarded

        with unguarded():
            return super().request(message, on_model_call)


def serve(stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> int:
    """Serve the Python implementation on ``stdin``/``stdout`` (default: this process's when
    called, as a forked driver's are its own) until ``shutdown`` or end of input."""
    from ..core.strictjson import parse

    stdin, stdout = stdin or sys.stdin.buffer, stdout or sys.stdout.buffer

    def answer(obj: dict[str, Any]) -> None:
        # Every answer is a canonical line (spec/driver-protocol.md), as the TypeScript
        # driver's; a value canonical JSON cannot hold is an internal_error answer instead.
        try:
            line = canonical_line(obj)
        except CaseError as err:
            line = canonical_line(
                {
                    "id": obj.get("id") if isinstance(obj.get("id"), int) else None,
                    "ok": False,
                    "error": {
                        "code": "internal_error",
                        "message": f"cannot write the answer: {err}",
                    },
                }
            )
        stdout.write(line)  # not line + b"\n": a copy of a 268 MB reduce answer
        stdout.write(b"\n")
        stdout.flush()

    def ask(rid: Any) -> AskModel:
        return lambda index, request, sha: ask_client(stdin, stdout, rid, index, request, sha)

    for raw in iter(stdin.readline, b""):
        rid: Any = None
        try:
            message = parse(raw.rstrip(b"\n"), code="protocol_error")
            if not isinstance(message, dict):
                raise CaseError("protocol_error", "a request must be a JSON object")
            rid = message.get("id")
            if message.get("cmd") == "shutdown":
                return 0
            if "id" not in message:  # a driver answers only requests it can pair (1.2)
                raise CaseError("invalid_request", "a request needs an id", pointer="")
            body = handle_request(
                message,
                dialect=os.environ.get("THREADS_CASES_DIALECT", "threads-py"),
                ask_model=ask(rid),
            )
            answer({"id": rid, "ok": True, **body})
        except CaseError as err:
            error = {"code": err.code, "message": str(err)}
            if err.location.pointer is not None:
                error["pointer"] = err.location.pointer
            if err.hint:  # what the user does about it (driver-protocol.md 1.3)
                error["hint"] = err.hint
            answer({"id": rid, "ok": False, "error": error})
        except Exception as exc:  # a driver answers, it does not die
            answer(
                {
                    "id": rid,
                    "ok": False,
                    "error": {"code": "internal_error", "message": f"{type(exc).__name__}: {exc}"},
                }
            )
    return 0


def ask_client(
    stdin: IO[bytes],
    stdout: IO[bytes],
    rid: Any,
    index: int,
    request: dict[str, Any],
    sha: str,
) -> dict[str, Any]:
    """A driver asking its client for model call ``index`` of a live replay
    (spec/driver-protocol.md 2.5.1): write ``{"id", "model_call": {index, request,
    request_sha256}}`` and read the ``model_answer`` line. Returns ``{"reply"}`` or
    ``{"stop"}``. Raises ``CaseError("protocol_error")`` when the answer is not a
    ``model_answer`` for this call (or the input ended)."""
    from ..core.schemas import schema_problems
    from ..core.strictjson import parse

    call = {"index": index, "request": request, "request_sha256": sha}
    stdout.write(canonical_line({"id": rid, "model_call": call}) + b"\n")
    stdout.flush()
    raw = stdin.readline()
    if not raw:
        raise CaseError("protocol_error", "the input ended while a model call was pending")
    answer = parse(raw.rstrip(b"\n"), code="protocol_error")
    if not isinstance(answer, dict):
        raise CaseError("protocol_error", "a model_answer must be a JSON object")
    problems = schema_problems(answer, "driver/model_answer.request.schema.json")
    if problems:
        pointer, text = problems[0]
        raise CaseError("protocol_error", f"model_answer: {text}", pointer=pointer)
    if answer["id"] != rid or answer["index"] != index:
        raise CaseError(
            "protocol_error", f"model_answer for {answer['index']} while {index} was asked"
        )
    return {k: answer[k] for k in ("reply", "stop") if k in answer}
