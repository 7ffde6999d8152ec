"""Thread-log events as typed dicts (spec/thread-log.md), generated from
schemas/event.schema.json by tools/gen_event_types.py: do not edit, run it.

:data:`Event` is what :func:`threads_cases.read_log` yields and :attr:`threads_cases.Thread.events`
holds: a canonical (``threads-py``) envelope. :data:`KnownEvent` is the union of the
specified types, discriminated by ``type`` (``if ev["type"] == "tool_called":`` narrows it
to :class:`ToolCalledEvent`); :class:`ExtensionEvent` is an ``x_`` type's event, and
:func:`is_known` tells the two apart (``if is_known(ev) and ev["type"] == ...``). The types
add no runtime check: the log reader checks every event against the schema.
"""

from typing import Any, Literal, TypeAlias, TypedDict, TypeGuard

#: Who acted (``actor_kind``).
ActorKind: TypeAlias = Literal["user", "model", "tool", "sandbox", "system"]


class Envelope(TypedDict):
    """The envelope every event shares (``$defs/envelope.threads-py``)."""

    actor_kind: ActorKind
    branch_id: str
    critical: bool
    epoch: int
    event_id: str
    seq: int
    thread_id: str
    ts: str


class Tool(TypedDict):
    """``$defs/tool``."""

    description: str
    effect: Literal["read", "write", "pure"]
    input_schema: dict[str, Any]
    kind: Literal["sandbox", "external"]
    name: str


class Agent(TypedDict):
    """``$defs/agent``."""

    model: str
    name: str
    system: str
    tools: list[Tool]


class ThreadStartedData(TypedDict):
    """``$defs/data.thread_started``."""

    agent: Agent
    metadata: dict[str, Any]


class ThreadStartedEvent(Envelope):
    """A ``thread_started`` event (``$defs/event.threads-py``)."""

    type: Literal["thread_started"]
    data: ThreadStartedData


class UserMessageData(TypedDict):
    """``$defs/data.user_message``."""

    content: str | list[dict[str, Any]]


class UserMessageEvent(Envelope):
    """A ``user_message`` event (``$defs/event.threads-py``)."""

    type: Literal["user_message"]
    data: UserMessageData


class TurnStartedData(TypedDict):
    """``$defs/data.turn_started``."""

    turn_id: str


class TurnStartedEvent(Envelope):
    """A ``turn_started`` event (``$defs/event.threads-py``)."""

    type: Literal["turn_started"]
    data: TurnStartedData


class ModelRequestedData(TypedDict):
    """``$defs/data.model_requested``."""

    model: str
    request_sha256: str
    turn_id: str


class ModelRequestedEvent(Envelope):
    """A ``model_requested`` event (``$defs/event.threads-py``)."""

    type: Literal["model_requested"]
    data: ModelRequestedData


class ModelRespondedMessage(TypedDict):
    """``message`` of :class:`ModelRespondedData`."""

    content: list[dict[str, Any]]
    role: Literal["assistant"]


class Usage(TypedDict):
    """``$defs/usage`` (other keys allowed)."""

    input_tokens: int
    output_tokens: int


class ModelRespondedData(TypedDict):
    """``$defs/data.model_responded``."""

    message: ModelRespondedMessage
    stop_reason: str
    turn_id: str
    usage: Usage


class ModelRespondedEvent(Envelope):
    """A ``model_responded`` event (``$defs/event.threads-py``)."""

    type: Literal["model_responded"]
    data: ModelRespondedData


class ToolCalledData(TypedDict):
    """``$defs/data.tool_called``."""

    effect: Literal["read", "write", "pure"]
    input: dict[str, Any]
    kind: Literal["sandbox", "external"]
    name: str
    tool_use_id: str
    turn_id: str


class ToolCalledEvent(Envelope):
    """A ``tool_called`` event (``$defs/event.threads-py``)."""

    type: Literal["tool_called"]
    data: ToolCalledData


class ToolResultData(TypedDict):
    """``$defs/data.tool_result``."""

    content: str | list[dict[str, Any]]
    is_error: bool
    name: str
    tool_use_id: str
    turn_id: str


class ToolResultEvent(Envelope):
    """A ``tool_result`` event (``$defs/event.threads-py``)."""

    type: Literal["tool_result"]
    data: ToolResultData


class SandboxReadData(TypedDict):
    """``$defs/data.sandbox_read``."""

    artifact: str | None
    path: str
    sha256: str
    size: int


class SandboxReadEvent(Envelope):
    """A ``sandbox_read`` event (``$defs/event.threads-py``)."""

    type: Literal["sandbox_read"]
    data: SandboxReadData


class SandboxWroteData(TypedDict):
    """``$defs/data.sandbox_wrote``."""

    artifact: str | None
    path: str
    sha256: str | None
    size: int


class SandboxWroteEvent(Envelope):
    """A ``sandbox_wrote`` event (``$defs/event.threads-py``)."""

    type: Literal["sandbox_wrote"]
    data: SandboxWroteData


class ArtifactAddedData(TypedDict):
    """``$defs/data.artifact_added``."""

    artifact_id: str
    media_type: str
    size: int


class ArtifactAddedEvent(Envelope):
    """A ``artifact_added`` event (``$defs/event.threads-py``)."""

    type: Literal["artifact_added"]
    data: ArtifactAddedData


class SnapshotTakenData(TypedDict):
    """``$defs/data.snapshot_taken``."""

    snapshot_id: str


class SnapshotTakenEvent(Envelope):
    """A ``snapshot_taken`` event (``$defs/event.threads-py``)."""

    type: Literal["snapshot_taken"]
    data: SnapshotTakenData


class RestoredData(TypedDict):
    """``$defs/data.restored``."""

    snapshot_id: str


class RestoredEvent(Envelope):
    """A ``restored`` event (``$defs/event.threads-py``)."""

    type: Literal["restored"]
    data: RestoredData


class ForkedData(TypedDict):
    """``$defs/data.forked``."""

    branch_id: str
    from_event_id: str


class ForkedEvent(Envelope):
    """A ``forked`` event (``$defs/event.threads-py``)."""

    type: Literal["forked"]
    data: ForkedData


class TurnCompletedData(TypedDict):
    """``$defs/data.turn_completed``."""

    stop_reason: str
    turn_id: str
    usage: Usage


class TurnCompletedEvent(Envelope):
    """A ``turn_completed`` event (``$defs/event.threads-py``)."""

    type: Literal["turn_completed"]
    data: TurnCompletedData


class TurnFailedError(TypedDict):
    """``error`` of :class:`TurnFailedData`."""

    code: str
    message: str


class TurnFailedData(TypedDict):
    """``$defs/data.turn_failed``."""

    error: TurnFailedError
    turn_id: str


class TurnFailedEvent(Envelope):
    """A ``turn_failed`` event (``$defs/event.threads-py``)."""

    type: Literal["turn_failed"]
    data: TurnFailedData


class ExtensionEvent(Envelope):
    """An event of an ``x_`` type (spec/thread-log.md): its data is free-form."""

    type: str
    data: dict[str, Any]


#: An event of a type the spec defines.
KnownEvent: TypeAlias = (
    ThreadStartedEvent
    | UserMessageEvent
    | TurnStartedEvent
    | ModelRequestedEvent
    | ModelRespondedEvent
    | ToolCalledEvent
    | ToolResultEvent
    | SandboxReadEvent
    | SandboxWroteEvent
    | ArtifactAddedEvent
    | SnapshotTakenEvent
    | RestoredEvent
    | ForkedEvent
    | TurnCompletedEvent
    | TurnFailedEvent
)


#: Any event of a log: a known type's or an ``x_`` one's.
Event: TypeAlias = KnownEvent | ExtensionEvent


#: The types the spec defines.
KNOWN_TYPES = frozenset(
    {
        "thread_started",
        "user_message",
        "turn_started",
        "model_requested",
        "model_responded",
        "tool_called",
        "tool_result",
        "sandbox_read",
        "sandbox_wrote",
        "artifact_added",
        "snapshot_taken",
        "restored",
        "forked",
        "turn_completed",
        "turn_failed",
    }
)


def is_known(ev: Event) -> TypeGuard[KnownEvent]:
    """Whether ``ev`` is of a type the spec defines: then ``ev["type"]`` narrows it (the
    ``x_`` types' ``type`` is any string, so :data:`Event` itself does not narrow)."""
    return ev["type"] in KNOWN_TYPES


__all__ = [
    "KNOWN_TYPES",
    "ActorKind",
    "Agent",
    "ArtifactAddedData",
    "ArtifactAddedEvent",
    "Envelope",
    "Event",
    "ExtensionEvent",
    "ForkedData",
    "ForkedEvent",
    "KnownEvent",
    "ModelRequestedData",
    "ModelRequestedEvent",
    "ModelRespondedData",
    "ModelRespondedEvent",
    "RestoredData",
    "RestoredEvent",
    "SandboxReadData",
    "SandboxReadEvent",
    "SandboxWroteData",
    "SandboxWroteEvent",
    "SnapshotTakenData",
    "SnapshotTakenEvent",
    "ThreadStartedData",
    "ThreadStartedEvent",
    "Tool",
    "ToolCalledData",
    "ToolCalledEvent",
    "ToolResultData",
    "ToolResultEvent",
    "TurnCompletedData",
    "TurnCompletedEvent",
    "TurnFailedData",
    "TurnFailedEvent",
    "TurnStartedData",
    "TurnStartedEvent",
    "Usage",
    "UserMessageData",
    "UserMessageEvent",
    "is_known",
]
