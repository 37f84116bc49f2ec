"""What the Markdown and HTML documents say about the session before its transcript, and the text
rules both follow (times, durations, truncation of long tool payloads).

May import: the standard library and ``app.insight.stats``.
"""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from app.glossary import plural
from app.insight.stats import SessionStats

# Tool arguments and results longer than this many characters are cut, with a note saying how much
# is left out (a 5 MB file read would otherwise drown the transcript; the JSONL export has it all).
TOOL_TEXT_CHARS = 4000
# Injected context (agent instructions, skill text) is cut at the same length.
CONTEXT_TEXT_CHARS = 4000


def app_version() -> str:
    """SessionScope's version as installed (``unknown`` when run from a tree that was never installed)."""
    try:
        return importlib.metadata.version("sessionscope")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def utc_time(ms: Any) -> str:
    """Epoch milliseconds as ``YYYY-MM-DD HH:MM:SS UTC`` ("" when not a usable time)."""
    if not isinstance(ms, (int, float)) or isinstance(ms, bool):
        return ""
    try:
        return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return ""


def duration(ms: int | None) -> str:
    """A wall time for a reader: 850 ms, 12.3 s, 4 min 05 s, 1 h 02 min."""
    if ms is None or ms < 0:
        return ""
    if ms < 1000:
        return f"{ms} ms"
    s = ms / 1000
    if s < 60:
        return f"{s:.1f} s"
    m, sec = divmod(int(s), 60)
    if m < 60:
        return f"{m} min {sec:02d} s"
    h, m = divmod(m, 60)
    return f"{h} h {m:02d} min"


def truncated(text: str, limit: int) -> tuple[str, str]:
    """(the text cut at ``limit`` characters, a note saying what was left out or "")."""
    if len(text) <= limit:
        return text, ""
    return text[
        :limit
    ], f"[truncated: {len(text) - limit:,} of {len(text):,} characters not shown; the JSONL export has them all]"


def one_line_text(text: str) -> str:
    """Whitespace (newlines included) collapsed: for a title or a table cell."""
    return " ".join(text.split())


@dataclass(frozen=True, slots=True)
class DocumentInfo:
    """The session facts a document opens with."""

    session_id: str
    header: dict[str, Any]
    status: str
    reason: str
    stats: SessionStats
    version: str

    @property
    def title(self) -> str:
        return one_line_text(self.stats.title) if self.stats.title else f"Session {self.session_id}"

    def facts(self) -> list[tuple[str, str]]:
        """(label, value) rows of the document's fact table."""
        h, st = self.header, self.stats
        rows = [("Session", self.session_id)]
        if h.get("createdAt") is not None:
            rows.append(("Created", utc_time(h.get("createdAt"))))
        if isinstance(h.get("cwd"), str):
            rows.append(("Project", h["cwd"]))
        rows.append(("Status", self.status if self.status == "ok" else f"{self.status}: {self.reason}"))
        parent = h.get("parentSession")
        if isinstance(parent, str):
            what = "subagent of" if h.get("origin") == "subagent" else "fork of"
            point = f", after turn {st.fork_turn}" if st.fork_turn is not None else ""
            seed = f" (inherits {h.get('seedLength')} events{point})" if h.get("seedLength") is not None else ""
            depth = f", delegation depth {h.get('delegationDepth')}" if h.get("origin") == "subagent" else ""
            rows.append(("Lineage", f"{what} {parent}{seed}{depth}"))
        rows.append(("Events", f"{st.events:,}"))
        rows.append(("Turns", f"{st.turns:,}" + (f" ({st.open_turns} not closed)" if st.open_turns else "")))
        rows.append(("Steps", f"{st.steps:,}"))
        rows.append(("Model calls", f"{st.model_calls:,}" + (f" ({plural(st.retries, 'retry')})" if st.retries else "")))
        rows.append(("Tool calls", f"{st.tool_calls:,}" + (f" ({plural(st.tool_errors, 'error')})" if st.tool_errors else "")))
        t = st.tokens
        rows.append(
            ("Tokens", f"input {t.input:,} · output {t.output:,} · cache read {t.cache_read:,} · cache write {t.cache_write:,}")
        )
        if st.models:
            rows.append(("Models", ", ".join(m.key for m in st.models)))
        if st.compactions or st.prunes:
            rows.append(("Compactions", f"{plural(st.compactions, 'compaction')}, {plural(st.prunes, 'prune')}"))
        rows.append(("Wall time", f"{duration(st.active_ms)} in turns, {duration(st.span_ms)} first to last event"))
        return rows


__all__ = [
    "CONTEXT_TEXT_CHARS",
    "TOOL_TEXT_CHARS",
    "DocumentInfo",
    "app_version",
    "duration",
    "one_line_text",
    "plural",
    "truncated",
    "utc_time",
]
