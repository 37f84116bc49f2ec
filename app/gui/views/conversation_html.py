"""What a Conversation block says, as Markdown or HTML for a ``QTextDocument``: folds, fold links, code bands.

Why its own module: the text of a block (a prompt folded at 40 lines, a tool result at
``RESULT_FOLD_LINES``, reasoning behind "show reasoning", each fenced code block with its Copy link)
is decided apart from how the block is painted (``views.conversation_delegate``) or scrolled
(``views.conversation_pane``); the three had grown into one 631-line file, over the 600-line limit.
It is tested on its own (``block_html``) without painting anything.

May import: PySide6.QtGui, ``app.gui.theme`` and ``app.conversation``.
"""

from __future__ import annotations

import html

from PySide6.QtGui import QFont, QTextCursor, QTextDocument, QTextFormat

from app.conversation import RESULT_FOLD_LINES, Block, fold_lines, markdown_with_copy_links
from app.conversation.blocks import ANSWER, CONTEXT, PROMPT, REASONING, TOOL
from app.gui import theme

TOGGLE = "toggle"  # a block's fold link: "show all N lines" / "show reasoning" / "hide"
MESSAGE_FOLD_LINES = 40  # lines of a prompt or context shown before "show all N lines"


def _esc(text: str) -> str:
    return html.escape(text, quote=False)


def _pre(text: str, color: str | None = None) -> str:
    """Monospace text as it is, its long lines wrapped (the list never scrolls sideways)."""
    colour = f" color:{color};" if color else ""
    return f'<pre style="white-space: pre-wrap;{colour}">{_esc(text)}</pre>'


def _fold_link(text: str, limit: int, expanded: bool, link: str) -> str:
    total = fold_lines(text, limit)[1]
    if total <= limit:
        return ""
    if expanded:
        return f'<p><a href="{TOGGLE}:">▴ show the first {limit} lines</a></p>'
    return f'<p><a href="{TOGGLE}:">▾ show all {total:,} lines</a> <span style="color:{link}">({total - limit:,} more)</span></p>'


def block_html(block: Block, expanded: bool) -> tuple[str, bool]:
    """The body of ``block`` as (text, is_markdown); Markdown for prompts and answers, HTML otherwise."""
    err = theme.hex_of("role.error")
    muted = theme.hex_of("text.muted")
    if block.kind == ANSWER:
        return markdown_with_copy_links(block.body)[0], True
    if block.kind == PROMPT:
        text = block.body if expanded else fold_lines(block.body, MESSAGE_FOLD_LINES)[0]
        more = fold_lines(block.body, MESSAGE_FOLD_LINES)[1] - MESSAGE_FOLD_LINES
        link = f"\n\n[▾ show all {more + MESSAGE_FOLD_LINES:,} lines]({TOGGLE}:)" if more > 0 and not expanded else ""
        return text + link, True
    parts: list[str] = []
    if block.kind == REASONING:
        lines = fold_lines(block.body, 1)[1]
        if expanded:
            parts.append(f'<p style="color:{muted}"><i>{_esc(block.body).replace(chr(10), "<br>")}</i></p>')
            parts.append(f'<p><a href="{TOGGLE}:">▴ hide reasoning</a></p>')
        else:
            count = f"{lines:,} line" + ("" if lines == 1 else "s")
            parts.append(f'<p><a href="{TOGGLE}:">▸ show reasoning</a> <span style="color:{muted}">({count})</span></p>')
        return "".join(parts), False
    if block.kind == CONTEXT:
        shown = block.body if expanded else fold_lines(block.body, RESULT_FOLD_LINES)[0]
        parts.append(_pre(shown, muted))
        parts.append(_fold_link(block.body, RESULT_FOLD_LINES, expanded, muted))
        return "".join(parts), False
    if block.kind == TOOL:
        if block.body:
            parts.append(_pre(block.body))
        if block.error:
            parts.append(f'<p style="color:{err}"><b>✗ {_esc(block.error)}</b></p>')
        if block.result:
            shown = block.result if expanded else fold_lines(block.result, RESULT_FOLD_LINES)[0]
            parts.append(_pre(shown, err if "error" in block.flags else None))
            parts.append(_fold_link(block.result, RESULT_FOLD_LINES, expanded, muted))
        if block.note:
            parts.append(f'<p style="color:{theme.hex_of("flag.synthetic")}"><i>{_esc(block.note)}</i></p>')
        return "".join(parts), False
    if block.body:
        parts.append(f"<p>{_esc(block.body)}</p>")
    if block.error:
        parts.append(f'<p style="color:{err}"><b>✗ {_esc(block.error)}</b></p>')
    if block.note:
        parts.append(f"<p><i>{_esc(block.note)}</i></p>")
    return "".join(parts), False


def monospace_code(doc: QTextDocument, mono: QFont) -> None:
    """Markdown code (fenced and inline) in the monospace font (``setMarkdown`` marks it fixed-pitch only),
    and a fenced block on a band of its own, so it reads as code with its Copy link under it."""
    band = theme.color("header.section.bg")
    block = doc.begin()
    while block.isValid():
        if block.blockFormat().hasProperty(QTextFormat.Property.BlockCodeFence):
            fmt = block.blockFormat()
            fmt.setBackground(band)
            QTextCursor(block).setBlockFormat(fmt)
        it = block.begin()
        while not it.atEnd():
            frag = it.fragment()
            if frag.isValid() and frag.charFormat().fontFixedPitch():
                cursor_fmt = frag.charFormat()
                cursor_fmt.setFontFamilies([mono.family()])
                cursor = QTextCursor(doc)
                cursor.setPosition(frag.position())
                cursor.setPosition(frag.position() + frag.length(), QTextCursor.MoveMode.KeepAnchor)
                cursor.setCharFormat(cursor_fmt)
            it += 1
        block = block.next()


__all__ = ["MESSAGE_FOLD_LINES", "TOGGLE", "block_html", "monospace_code"]
