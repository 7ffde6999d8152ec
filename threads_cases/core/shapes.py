"""The JSON shapes of the public API as typed dicts, one per schema in schemas/.

These are the types :func:`threads_cases.reduce` and :attr:`threads_cases.Thread.state`
return (:class:`State`, ``schemas/state.schema.json`` ``$defs/state.threads-py``), that a
case's ``case.json`` holds (:class:`CaseMeta`, ``schemas/case.schema.json``) and that the
lines of a JSON report hold (:class:`ReportHeader`, :class:`ReportResult`,
:class:`ReportFooter`, ``schemas/report.schema.json``). They add no runtime check: the schemas
stay the normative text, and tests/test_shapes.py fails when a key here and a property there
drift apart (names and required keys, nested objects included).
"""

from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

#: A case's verdict on one implementation (spec/replay.md section 6; reports.md).
Verdict = Literal["pass", "drifted", "fail", "error", "skip", "xfail", "xpass"]
#: The result of one check of a case run (spec/replay.md sections 4-5).
CheckResult = Literal["pass", "fail", "warn", "skip"]

#: A JSON value whose shape no schema of ours fixes: a tool's input, a model's reply or a
#: content block as the provider sent it, a parsed document before it is checked, an ``x_``
#: event's data (what :func:`threads_cases.parse_json` returns). Named, not spelled ``Any``,
#: so a public signature says where arbitrary JSON goes (tests/test_public_types.py).
JsonValue: TypeAlias = Any
#: A JSON object of such values: an envelope, request or document checked against its schema
#: at run time rather than typed key by key here.
JsonObject: TypeAlias = dict[str, JsonValue]

# --------------------------------------------------------------------------- state


class TurnRecord(TypedDict):
    """One finished turn of the state (``$defs/turn``)."""

    turn_id: str
    status: Literal["completed", "failed"]
    stop_reason: str | None
    error: dict[str, Any] | None


class Message(TypedDict):
    """One message of the conversation (``$defs/message``)."""

    role: Literal["user", "assistant"]
    content: str | list[dict[str, Any]]


class SandboxState(TypedDict):
    """The sandbox as the log knows it: path -> sha256 hex of the bytes."""

    files: dict[str, str]


class ArtifactInfo(TypedDict):
    media_type: str
    size: int


class Usage(TypedDict):
    input_tokens: int
    output_tokens: int


class State(TypedDict):
    """The canonical state a thread log reduces to (spec/reducer.md)."""

    thread_id: str | None
    branch_id: str
    epoch: int
    last_seq: int | None
    last_event_id: str | None
    status: Literal["idle", "in_turn", "failed"]
    current_turn: str | None
    turns: list[TurnRecord]
    agent: dict[str, Any] | None
    messages: list[Message]
    pending_tool_calls: list[str]
    sandbox: SandboxState
    artifacts: dict[str, ArtifactInfo]
    usage: Usage
    snapshots: list[str]


# --------------------------------------------------------------------------- case.json


class CaseAgent(TypedDict):
    """The agent a case was recorded with (the system prompt by its sha256)."""

    name: str
    model: str
    system_sha256: str
    tools: list[dict[str, Any]]


class CaseMatchers(TypedDict):
    """``expect`` of case.json: ``must`` (any order) and ``expect`` (in order)."""

    must: list[dict[str, Any]]
    expect: list[dict[str, Any]]


class CreatedWith(TypedDict):
    tool: str
    version: str


#: ``case.json`` (spec/case-format.md section 3).
class CaseMeta(TypedDict):
    format: int
    name: str
    input: Any
    expect: CaseMatchers
    at: str
    external_effects: Literal["stub", "forbid"]
    dialects: list[str]
    portable: bool
    agent: CaseAgent
    #: absent in a case written by hand: a stale fingerprint (case-format.md 4.3)
    fingerprint: NotRequired[str]
    created_with: CreatedWith


# --------------------------------------------------------------------------- reports


class DifferenceRecord(TypedDict):
    pointer: str
    expected: Any
    actual: Any
    missing: bool
    extra: bool


class CheckRecord(TypedDict):
    """One check of a result line (``$defs/check``)."""

    id: str
    result: CheckResult
    detail: str
    code: NotRequired[str]
    differences: NotRequired[list[DifferenceRecord]]
    matcher: NotRequired[dict[str, Any]]
    nearest_event: NotRequired[dict[str, Any]]


class StopRecord(TypedDict):
    """Why a replay stopped before the turn's end (a replay answer's ``stop``,
    spec/replay.md section 5): the reason ``code`` (``missing_stub``, ``model_exhausted``,
    ``egress_blocked``, ``step_limit``...), the ``stop_key`` it stopped at (``model``,
    ``tool:<name>``, ``egress``...) and a ``message``."""

    code: str
    stop_key: str
    message: NotRequired[str]


class DivergenceRecord(TypedDict):
    """Where a replay first departed from the recording (``$defs/divergence``,
    spec/reports.md section 7); ``recorded`` and ``replayed`` are absent when that side has
    no value."""

    kind: Literal["request", "state", "stop", "matcher", "recording", "reply"]
    call: int | None
    event_index: int | None
    event_type: str | None
    seq: NotRequired[int | None]
    event_id: NotRequired[str | None]
    pointer: str
    line: int | None
    summary: str
    recorded: NotRequired[Any]
    replayed: NotRequired[Any]


class ShardInfo(TypedDict):
    index: int
    count: int


class ReportHeader(TypedDict):
    kind: Literal["header"]
    tool: str
    version: str
    command: str
    implementations: list[str]
    isolation: dict[str, str]
    started_at: str
    shard: NotRequired[ShardInfo]
    #: the absolute folder the run started from: results' relative paths are read from it
    cwd: NotRequired[str]


class BaselineRecord(TypedDict):
    """The baseline entry behind an ``xfail`` or ``xpass`` (``$defs/baseline``)."""

    reason: str
    issue: NotRequired[str]
    check: NotRequired[str]


class ReportResult(TypedDict):
    """One case on one implementation (``$defs/result``)."""

    kind: Literal["result"]
    case: str
    path: str
    implementation: str
    verdict: Verdict
    reasons: list[str]
    warnings: list[str]
    checks: list[CheckRecord]
    #: a :class:`StopRecord` (the report's schema keeps the object open)
    stop: dict[str, Any] | None
    message: str
    duration_ms: float
    divergence: NotRequired[DivergenceRecord | None]
    #: with the user's own agent: what differs from the recorded one (spec/replay.md 8.5)
    agent_changes: NotRequired[list[str]]
    #: a live run (spec/replay.md 11.6): ``live`` true, the provenance counts and the spend
    live: NotRequired[bool]
    provenance: NotRequired["LiveProvenance"]
    spend: NotRequired[dict[str, Any]]
    live_replies: NotRequired[list[dict[str, Any]]]
    #: the N runs of ``run --repeat N`` (spec/replay.md 11.9)
    repeat: NotRequired["RepeatSummary"]
    #: where each answer came from in a --supply or --live run (spec/replay.md 11.11)
    answers: NotRequired[dict[str, list[str]]]
    baseline: NotRequired[BaselineRecord]


#: The count of each verdict ("pass" is a keyword: the functional form spells the keys).
VerdictCounts = TypedDict(
    "VerdictCounts",
    {
        "pass": int,
        "drifted": int,
        "fail": int,
        "error": int,
        "skip": int,
        "xfail": int,
        "xpass": int,
    },
)


class ReportFooter(TypedDict):
    kind: Literal["footer"]
    counts: VerdictCounts
    total: int
    duration_ms: float
    exit_status: int
    not_started: int
    #: a live run's totals (spec/replay.md 11.6)
    live: NotRequired["LiveTotals"]
    #: the totals of ``run --repeat N`` (spec/replay.md 11.9)
    repeat: NotRequired[dict[str, Any]]
    #: each answer kind counted (spec/replay.md 11.11)
    answers: NotRequired[dict[str, dict[str, int]]]
    #: a conformance run's level per implementation (spec/conformance.md section 9)
    levels: NotRequired[dict[str, "ConformanceLevel"]]


class ImplementationInfo(TypedDict):
    """Who an implementation is (a ``hello`` answer's ``implementation``,
    spec/driver-protocol.md 2.1): its name, language, version, dialect and homepage."""

    name: str
    language: str
    version: str
    dialect: str
    homepage: str


class HelloAnswer(TypedDict):
    """The body of a ``hello`` answer (``schemas/driver/hello.answer.schema.json``, which a
    driver's answer is checked against): the protocol version, who the implementation is and
    the capabilities it announces (``reduce``, ``replay``, ``live``, ``agent``, ...)."""

    protocol: int
    implementation: ImplementationInfo
    capabilities: list[str]


class ProblemRecord(TypedDict):
    """A :class:`~threads_cases.Problem` as JSON (``validate --format json``)."""

    code: str
    message: str
    file: str | None
    line: int | None
    pointer: str | None


class ToolResultRecord(TypedDict):
    """A tool's result as a ``tool_result`` event and a stub hold it."""

    content: str | list[JsonObject]
    is_error: bool


class LiveProvenance(TypedDict):
    """Where a live run's model replies came from, counted (spec/replay.md 11.6)."""

    reused: int
    supplied: int
    live: int


class LiveSpend(TypedDict):
    """A live run of one case: its replies' provenance, the live calls it made and their
    cost in US dollars (None when a call could not be priced; spec/replay.md 11.6)."""

    provenance: LiveProvenance
    calls: int
    cost_usd: float | None


class LiveTotals(LiveSpend):
    """A live run's totals (the footer's ``live``): :class:`LiveSpend` summed, the limits
    (``budget`` calls, ``max_cost_usd``) and why the spend is unknown (None when it is not)."""

    budget: int
    max_cost_usd: float | None
    spend_unknown: NotRequired[str | None]


class RepeatSummary(TypedDict):
    """What the N runs of ``run --repeat N`` showed for one case (spec/reports.md 1.3)."""

    runs: int
    judged: int
    passes: int
    rate: float | None
    interval: list[float] | None
    pass_k: list[float]
    verdicts: list[Verdict]
    flips: int
    flip_rate: float | None
    fail_under_rate: float | None


class ConformanceLevel(TypedDict):
    """An implementation's conformance level (``$defs/footer/properties/levels``)."""

    level: str | None
    next: str | None
    blocked_by: list[str]


#: Every shape and where its schema is: (schema file, JSON pointer of the object schema).
SCHEMA_OF: dict[str, tuple[type, str, str]] = {
    "State": (State, "state.schema.json", "/$defs/state.threads-py"),
    "TurnRecord": (TurnRecord, "state.schema.json", "/$defs/turn"),
    "Message": (Message, "state.schema.json", "/$defs/message"),
    "CaseMeta": (CaseMeta, "case.schema.json", ""),
    "ReportHeader": (ReportHeader, "report.schema.json", "/$defs/header"),
    "ReportResult": (ReportResult, "report.schema.json", "/$defs/result"),
    "ReportFooter": (ReportFooter, "report.schema.json", "/$defs/footer"),
    "ConformanceLevel": (
        ConformanceLevel,
        "report.schema.json",
        "/$defs/footer/properties/levels/additionalProperties",
    ),
    "BaselineRecord": (BaselineRecord, "report.schema.json", "/$defs/baseline"),
    "RepeatSummary": (RepeatSummary, "report.schema.json", "/$defs/result/properties/repeat"),
    "LiveProvenance": (LiveProvenance, "report.schema.json", "/$defs/provenance"),
    "LiveTotals": (LiveTotals, "report.schema.json", "/$defs/footer/properties/live"),
    "CheckRecord": (CheckRecord, "report.schema.json", "/$defs/check"),
    "DifferenceRecord": (DifferenceRecord, "report.schema.json", "/$defs/difference"),
    "DivergenceRecord": (DivergenceRecord, "report.schema.json", "/$defs/divergence"),
    "StopRecord": (
        StopRecord,
        "driver/replay.answer.schema.json",
        "/oneOf/0/properties/stop/oneOf/1",
    ),
}
