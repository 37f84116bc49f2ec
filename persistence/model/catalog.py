"""Known event vocabulary (upstream KNOWN_SESSION_EVENT_TYPES, 48 names; spec event-catalog.json)."""

from __future__ import annotations

KNOWN_SESSION_EVENT_TYPES: frozenset[str] = frozenset(
    {
        "agent-preset/selected",
        "agent/inbox/spliced",
        "approval/asked",
        "approval/decided",
        "approval/policy",
        "assistant/chunk",
        "assistant/message",
        "command/done",
        "command/run",
        "compaction/end",
        "compaction/prune",
        "compaction/start",
        "compaction/summary",
        "feedback/record",
        "goal/change",
        "hook/invoked",
        "hook/result",
        "llm/retry",
        "llm/retry-started",
        "permission/preset",
        "plan/mode",
        "request/context",
        "request/header",
        "sandbox/mode",
        "schedule/change",
        "session/end-seed",
        "session/title",
        "session/title-llm-request",
        "step/end",
        "step/start",
        "subagent/descriptor",
        "team/member",
        "team/message/delivered",
        "team/message/queued",
        "team/task",
        "todo/write",
        "tool-workflow/agent-end",
        "tool-workflow/agent-start",
        "tool-workflow/run-end",
        "tool-workflow/run-start",
        "tool/call",
        "tool/code-dispatch",
        "tool/code-dispatch-start",
        "tool/result",
        "turn/end",
        "turn/start",
        "user/message",
        "web/deepseek-search-llm-request",
    }
)

SURFACE_EVENT_TYPES: frozenset[str] = frozenset({"user/message", "assistant/message", "tool/result"})

# Retired types refused on append and on read (session-model §3.4).
LEGACY_REFUSED_TYPES: tuple[str, ...] = ("request/header-delta", "mode/set")


def is_known(event_type: object) -> bool:
    """Whether ``event_type`` is in this harness's event catalog."""
    return event_type in KNOWN_SESSION_EVENT_TYPES
