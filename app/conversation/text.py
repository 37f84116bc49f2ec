"""Text pieces of the conversation: folding a long result, and Markdown code blocks with a copy link.

A tool result of 5,000 lines is shown as its first lines and a "show all N lines" link; a code block
of an answer gets a "Copy" link under it whose target names the block (``copy:N``), so the view
copies exactly that block's text (not the rendered document's).  Stdlib only.
"""

from __future__ import annotations

import re

RESULT_FOLD_LINES = 12  # lines of a tool result shown before "show all N lines"
COPY_SCHEME = "copy"  # a code block's copy link: "copy:N", N its position in the answer

# A fenced code block (CommonMark: three or more backticks or tildes, closed by the same fence or the end).
_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})([^\n]*)\n(.*?)(?:^ {0,3}\2[`~]*[ \t]*$|\Z)", re.MULTILINE | re.DOTALL)


def fold_lines(text: str, limit: int = RESULT_FOLD_LINES) -> tuple[str, int]:
    """``text`` cut to its first ``limit`` lines, and how many lines it has in all (trailing blank lines not counted)."""
    lines = text.rstrip("\n").split("\n") if text.strip() else []
    if len(lines) <= limit:
        return "\n".join(lines), len(lines)
    return "\n".join(lines[:limit]), len(lines)


def code_blocks(markdown: str) -> list[str]:
    """The text of each fenced code block of ``markdown``, in order (without the fences)."""
    return [m.group(4).rstrip("\n") for m in _FENCE.finditer(markdown)]


def markdown_with_copy_links(markdown: str) -> tuple[str, list[str]]:
    """``markdown`` with a "Copy" link after each fenced code block (target ``copy:N``), and the blocks' text."""
    blocks: list[str] = []
    out: list[str] = []
    pos = 0
    for m in _FENCE.finditer(markdown):
        blocks.append(m.group(4).rstrip("\n"))
        end = m.end()
        out.append(markdown[pos:end])
        if not out[-1].endswith("\n"):
            out.append("\n")
        out.append(f"\n[Copy]({COPY_SCHEME}:{len(blocks) - 1})\n")
        pos = end
    out.append(markdown[pos:])
    return "".join(out), blocks


__all__ = ["COPY_SCHEME", "RESULT_FOLD_LINES", "code_blocks", "fold_lines", "markdown_with_copy_links"]
