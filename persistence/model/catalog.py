"""The event vocabulary: every event type name as a constant, and the shape of the records a reader reads.

Why here: a type name spelled again in a reader is a second copy that can drift (a typo is a silent
no-match), so the catalog (upstream ``KNOWN_SESSION_EVENT_TYPES``, 48 names; spec ``event-catalog.json``)
is the one place the names are written; the engine's own sets and every reader in ``app/`` use
``EventType``.  The ``TypedDict``s describe the spec's shapes (jsonl-backend §6.1, session-model §6.4)
for annotation only: a stored record is a plain dict and a reader still checks each field it reads.
"""

from __future__ import annotations

from typing import Any, Final, NotRequired, TypedDict


class EventType:
    """The catalog's event type names (the ``type`` of a record), one constant each: ``EventType.TOOL_CALL``.

    Plain ``str`` constants rather than an enum: a record's ``type`` is compared and looked up as the
    string it is on disk, and a log may hold types this catalog does not know.
    """

    AGENT_PRESET_SELECTED: Final = "agent-preset/selected"
    AGENT_INBOX_SPLICED: Final = "agent/inbox/spliced"
    APPROVAL_ASKED: Final = "approval/asked"
    APPROVAL_DECIDED: Final = "approval/decided"
    APPROVAL_POLICY: Final = "approval/policy"
    ASSISTANT_CHUNK: Final = "assistant/chunk"
    ASSISTANT_MESSAGE: Final = "assistant/message"
    COMMAND_DONE: Final = "command/done"
    COMMAND_RUN: Final = "command/run"
    COMPACTION_END: Final = "compaction/end"
    COMPACTION_PRUNE: Final = "compaction/prune"
    COMPACTION_START: Final = "compaction/start"
    COMPACTION_SUMMARY: Final = "compaction/summary"
    FEEDBACK_RECORD: Final = "feedback/record"
    GOAL_CHANGE: Final = "goal/change"
    HOOK_INVOKED: Final = "hook/invoked"
    HOOK_RESULT: Final = "hook/result"
    LLM_RETRY: Final = "llm/retry"
    LLM_RETRY_STARTED: Final = "llm/retry-started"
    PERMISSION_PRESET: Final = "permission/preset"
    PLAN_MODE: Final = "plan/mode"
    REQUEST_CONTEXT: Final = "request/context"
    REQUEST_HEADER: Final = "request/header"
    SANDBOX_MODE: Final = "sandbox/mode"
    SCHEDULE_CHANGE: Final = "schedule/change"
    SESSION_END_SEED: Final = "session/end-seed"
    SESSION_TITLE: Final = "session/title"
    SESSION_TITLE_LLM_REQUEST: Final = "session/title-llm-request"
    STEP_END: Final = "step/end"
    STEP_START: Final = "step/start"
    SUBAGENT_DESCRIPTOR: Final = "subagent/descriptor"
    TEAM_MEMBER: Final = "team/member"
    TEAM_MESSAGE_DELIVERED: Final = "team/message/delivered"
    TEAM_MESSAGE_QUEUED: Final = "team/message/queued"
    TEAM_TASK: Final = "team/task"
    TODO_WRITE: Final = "todo/write"
    TOOL_WORKFLOW_AGENT_END: Final = "tool-workflow/agent-end"
    TOOL_WORKFLOW_AGENT_START: Final = "tool-workflow/agent-start"
    TOOL_WORKFLOW_RUN_END: Final = "tool-workflow/run-end"
    TOOL_WORKFLOW_RUN_START: Final = "tool-workflow/run-start"
    TOOL_CALL: Final = "tool/call"
    TOOL_CODE_DISPATCH: Final = "tool/code-dispatch"
    TOOL_CODE_DISPATCH_START: Final = "tool/code-dispatch-start"
    TOOL_RESULT: Final = "tool/result"
    TURN_END: Final = "turn/end"
    TURN_START: Final = "turn/start"
    USER_MESSAGE: Final = "user/message"
    WEB_DEEPSEEK_SEARCH_LLM_REQUEST: Final = "web/deepseek-search-llm-request"


def _names() -> frozenset[str]:
    return frozenset(v for k, v in vars(EventType).items() if not k.startswith("_") and isinstance(v, str))


KNOWN_SESSION_EVENT_TYPES: frozenset[str] = _names()

SURFACE_EVENT_TYPES: frozenset[str] = frozenset({EventType.USER_MESSAGE, EventType.ASSISTANT_MESSAGE, EventType.TOOL_RESULT})

# Retired types refused on append and on read (session-model §3.4).
LEGACY_REFUSED_TYPES: tuple[str, ...] = ("request/header-delta", "mode/set")


class EventRecord(TypedDict):
    """A stored event (jsonl-backend §6.1): ``data`` is any JSON value; the optional keys only on surface events."""

    type: str
    seq: int
    time: int
    data: Any
    sourceEventSeqs: NotRequired[list[int]]
    surfaceOp: NotRequired[str | dict[str, Any]]
    ignorable: NotRequired[bool]


class TokenUsage(TypedDict):
    """A usage sample (session-model §6.4): disjoint buckets; ``inputTokens`` is uncached input."""

    inputTokens: int
    outputTokens: int
    cacheReadTokens: NotRequired[int]
    cacheWriteTokens: NotRequired[int]
    reasoningTokens: NotRequired[int]


def is_known(event_type: object) -> bool:
    """Whether ``event_type`` is in this harness's event catalog."""
    return event_type in KNOWN_SESSION_EVENT_TYPES
