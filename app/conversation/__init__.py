"""The Conversation tab's content, Qt-free: a session's turns told as a reader would tell them.

Why a package of its own: the timeline (``app.timeline``) is a tree of one-line rows, good for
digging, bad for reading a turn's story.  The conversation is a flat list of blocks — the turn, the
prompt, each step with its duration and tokens, the answer (Markdown), reasoning, each tool call
with its arguments and its result, errors with their text, closers and damage — built from the
timeline's own fold (the nodes the Timeline tab shows), so both views stand for the same events and
a selection maps between them by seq.  The window's list model (``app.gui.models.conversation``)
only adapts these blocks; tests and benchmarks use them directly.

- ``blocks``    ``Block`` and ``conversation_blocks`` (timeline nodes + records -> blocks)
- ``text``      folding long text ("show all N lines"), Markdown code blocks and their copy links

Import rule: the stdlib, ``app.records``, ``app.timeline`` and the public ``persistence`` only — never Qt.
"""

from __future__ import annotations

from app.conversation.blocks import ERROR_KINDS, Block, block_for_seq, conversation_blocks, is_error_block
from app.conversation.text import COPY_SCHEME, RESULT_FOLD_LINES, code_blocks, fold_lines, markdown_with_copy_links

__all__ = [
    "COPY_SCHEME",
    "ERROR_KINDS",
    "RESULT_FOLD_LINES",
    "Block",
    "block_for_seq",
    "code_blocks",
    "conversation_blocks",
    "fold_lines",
    "is_error_block",
    "markdown_with_copy_links",
]
