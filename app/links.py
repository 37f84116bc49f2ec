"""Links to one event: the ``sessionscope://`` URL and the command line that open the window there.

Why a module of its own: the window copies links ("Copy link to this event"), the command line
accepts them (a desktop entry registers SessionScope as the ``sessionscope`` scheme handler and
passes the URL as the first argument), and both must agree on one format without importing Qt.

The URL form::

    sessionscope://open?root=%2Fhome%2Fana%2F.dsh%2Fsessions&session=5f31cbc4-...&seq=412

``root`` is an absolute root path (a JSONL root folder or a SQLite store file) and ``session`` a
session id, both percent-encoded (UTF-8; an id or path with lone surrogates, which a log may hold,
round-trips through ``surrogatepass``).  ``seq`` is optional: without it the link opens the session.
A source (issue 23: a lone transcript, a support bundle, a case folder, or a root) has the form::

    sessionscope://open?source=%2Fhome%2Fana%2Fcase.zip[&session=5f31cbc4-...[&seq=412]]

where the session is optional (the window then shows the source's sessions); a link names a
``root`` or a ``source``, never both.
Unknown query keys are ignored, so a later version may add some; a missing root or session, a
repeated key, another scheme or action, a malformed URL, or a seq that is not a non-negative
integer is a ``LinkError`` saying which.  ``parse_link`` reads any link ``make_link`` wrote back to
the same place; ``check_openable`` then says whether that place can be opened on this system (a
NUL, which ``%00`` smuggles in, ends a path in the OS and cannot be in an argv id; a root must be
absolute and nameable by the file system), so a hostile link is a message, never a traceback.

The command-line form is ``sessionscope --root ROOT --session ID --seq N``, shell-quoted (a source's:
``sessionscope PATH [--session ID [--seq N]]``).

May import: the standard library only.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from urllib.parse import quote, unquote_to_bytes, urlsplit

SCHEME = "sessionscope"
ACTION = "open"  # the URL's "host": what the link asks for
PROGRAM = "sessionscope"  # the command the command-line form runs
MAX_LINK_CHARS = 64 * 1024  # a link longer than this is refused (a root path plus an id fits in far less)


class LinkError(ValueError):
    """A link that cannot be opened; the message says what is wrong with it."""


@dataclass(frozen=True, slots=True)
class EventLink:
    """Where a link points: a root, a session in it, and optionally one event of that session.

    ``source``: ``root`` is a source path (``source=``), and ``session`` may be empty (the whole source).
    """

    root: str
    session: str
    seq: int | None = None
    source: bool = False

    def url(self) -> str:
        """The ``sessionscope://open?...`` form."""
        parts = [f"{'source' if self.source else 'root'}={_encode(self.root)}"]
        if self.session or not self.source:
            parts.append(f"session={_encode(self.session)}")
        if self.seq is not None:
            parts.append(f"seq={self.seq}")
        return f"{SCHEME}://{ACTION}?" + "&".join(parts)

    def argv(self) -> list[str]:
        """The command-line arguments (after the program name) that open the window there."""
        args = [self.root] if self.source else ["--root", self.root]
        if self.session or not self.source:
            args += ["--session", self.session]
        if self.seq is not None:
            args += ["--seq", str(self.seq)]
        return args

    def command(self) -> str:
        """``sessionscope --root ROOT --session ID --seq N``, quoted for a POSIX shell."""
        return " ".join(shlex.quote(a) for a in [PROGRAM, *self.argv()])

    def clipboard_text(self) -> str:
        """What "Copy link to this event" puts on the clipboard: the URL, then the command line."""
        return f"{self.url()}\n{self.command()}"


def _encode(text: str) -> str:
    # Every reserved character is escaped (``safe=""``): a root path's "/" and "&" never split the query.
    return quote(text.encode("utf-8", "surrogatepass"), safe="")


def _decode(text: str) -> str:
    return unquote_to_bytes(text).decode("utf-8", "surrogatepass")


def make_link(root: str, session: str, seq: int | None = None) -> str:
    """The ``sessionscope://`` URL of ``seq`` in ``session`` of ``root`` (the whole session when None)."""
    _check(root, session, seq)
    return EventLink(root, session, seq).url()


def make_source_link(source: str, session: str | None = None, seq: int | None = None) -> str:
    """The ``sessionscope://open?source=...`` URL of a source (a session of it, an event of that session)."""
    _check(source, session or "", seq, source=True)
    return EventLink(source, session or "", seq, source=True).url()


def _check(root: str, session: str, seq: int | None, *, source: bool = False) -> None:
    if not root:
        raise LinkError("a link needs a source" if source else "a link needs a root")
    if not session and not source:
        raise LinkError("a link needs a session id")
    if seq is not None and not session:
        raise LinkError("a link with a seq needs a session id")
    if seq is not None and (isinstance(seq, bool) or not isinstance(seq, int) or seq < 0):
        raise LinkError(f"seq must be a non-negative integer, got {seq!r}")


def is_link(text: str) -> bool:
    """Whether ``text`` looks like a ``sessionscope:`` URL (the command line's first argument may be one)."""
    return text[: len(SCHEME) + 1].lower() == SCHEME + ":"


def parse_link(url: str) -> EventLink:
    """The place a ``sessionscope://open?root=...&session=...[&seq=N]`` URL points at (``LinkError`` if none)."""
    if len(url) > MAX_LINK_CHARS:
        raise LinkError(f"the link is {len(url):,} characters long (at most {MAX_LINK_CHARS:,})")
    try:
        parts = urlsplit(url.strip())
    except ValueError as err:  # e.g. an unclosed "[" read as an IPv6 host
        raise LinkError(f"the link is malformed ({err})") from None
    if parts.scheme.lower() != SCHEME:
        raise LinkError(f"not a {SCHEME}:// link: {url[:120]!r}")
    # ``sessionscope://open?...`` (host) and ``sessionscope:open?...`` (path) both name the action.
    action = (parts.netloc or parts.path).strip("/").lower()
    if action != ACTION:
        raise LinkError(f"unknown link action {action!r} (expected {SCHEME}://{ACTION}?root=...&session=...)")
    fields: dict[str, str] = {}
    # Split by hand rather than ``parse_qs``: a "+" stays a "+" (``quote`` writes a space as %20 and a
    # path may hold a real "+"), and a value that is not UTF-8 is an error, not U+FFFD.
    for pair in parts.query.split("&"):
        if not pair:
            continue
        name, _sep, value = pair.partition("=")
        if name in fields:
            raise LinkError(f"the link names {name!r} more than once")
        try:
            fields[name] = _decode(value)
        except UnicodeDecodeError as err:
            raise LinkError(f"the link's {name} is not UTF-8 ({err.reason})") from None
    seq: int | None = None
    text = fields.get("seq", "")
    if text:
        if not text.isascii() or not text.isdigit():
            raise LinkError(f"seq must be a non-negative integer, got {text!r}")
        seq = int(text)
    if "root" in fields and "source" in fields:
        raise LinkError("the link names both a root and a source")
    source = "source" in fields
    root, session = fields.get("source" if source else "root", ""), fields.get("session", "")
    _check(root, session, seq, source=source)
    return EventLink(root, session, seq, source=source)


def check_openable(link: EventLink) -> EventLink:
    """``link`` when the window can open its place on this system, else ``LinkError`` saying why."""
    where = "source" if link.source else "root"
    for what, text in ((where, link.root), ("session id", link.session)):
        if "\x00" in text:
            raise LinkError(f"the link's {what} holds a NUL character (%00): no path or session id can")
    if not os.path.isabs(link.root):
        raise LinkError(f"the link's {where} must be an absolute path, got {link.root[:200]!r}")
    try:
        os.fsencode(link.root)
    except UnicodeError:
        raise LinkError(f"the link's {where} is not a path this system can name: {link.root[:200]!r}") from None
    return link


__all__ = [
    "ACTION",
    "SCHEME",
    "EventLink",
    "LinkError",
    "check_openable",
    "is_link",
    "make_link",
    "make_source_link",
    "parse_link",
]
