"""The one walk of a JSONL root: ``<root>/<project>/<session>/session.jsonl[.zstd]`` (jsonl-backend §4).

Why one walker: the engine's listing and lookup, ``verify`` and the window each walked the layout
themselves, and one bad entry broke each differently (an unreadable folder made ``list`` fail for the
whole root and ``verify`` call healthy sessions corrupt; a symlinked folder was hidden from ``list``
but followed by ``repair``).  Here the walk is lenient: an entry it cannot use becomes a ``Problem``
of its own, in list order, and each caller decides what it means.  The engine's ``list()`` skips it
(upstream lists what it can parse; the spec's own errors, flat files and mixed encodings, still fail
the root), while ``verify`` and the window show it as one bad row and judge every other session
normally.  A root that cannot be listed at all still raises: that is a bad root, not a bad session.

Problems (``Problem.kind``):
- ``unreadable``: a project folder, session folder or transcript the OS refuses (``PermissionError``
  or another I/O error); shown as "unreadable: permission denied".
- ``symlink``: a link below the root (see the policy below).
- ``flat-file``: ``<project>/<id>.jsonl[.zstd]``, the legacy layout upstream refuses (§4.7).
- mixed encodings are judged by the caller (it knows its compression): ``SessionFolder.other``.

Symlink policy (issue 10 item 6).  Upstream's discovery never lists a symlinked folder (§4), but
its lookup followed one, so ``repair ROOT ID --force`` wrote a backup and closers into a link's
target outside the root.  We make reads consistent with listing by refusing them too:
- A session folder or transcript that is a symlink is neither listed nor read: ``find_log`` raises
  ``SessionLayoutError`` naming the link, so ``load``/``inspect``/``repair``/``fork`` cannot act on
  a session ``list`` does not show.  ``verify`` and the window show it as a ``symlink`` row with its
  resolved target.
- A symlinked project folder that resolves inside the root is an alias (§4.6, case 73): it is not
  walked (its sessions are listed and read through the real folder) and is not a problem.  One that
  resolves outside the root is a ``symlink`` problem row; it is never walked.
- Writing through any link below the root (project folder, session folder, transcript) is refused:
  ``assert_writable_path``.  The root itself may be a link: the user chose it.

Absence is never assumed from a permission fault (§4.1): a probe that fails with anything but
"does not exist" reports the entry as unreadable rather than absent, and a read of a session whose
own folder is unreadable raises ``SessionUnreadableError``.  One deliberate exception: the targeted
lookup (``probe_id``) skips a project folder it cannot search at all, so the healthy sessions of
the other folders stay readable; an id hidden in that folder reads as "not found" (and the folder is
named by ``list``'s callers: ``verify`` and the window).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from persistence.errors import SessionLayoutError, SessionPersistenceError, SessionUnreadableError
from persistence.jsonl.lines import parse_header_meta
from persistence.jsonl.paths import RAW_SUFFIX, ZSTD_SUFFIX
from persistence.model.header import unrepresentable_field

UNREADABLE = "unreadable"
SYMLINK = "symlink"
FLAT_FILE = "flat-file"

ZSTD_NAME = "session" + ZSTD_SUFFIX
RAW_NAME = "session" + RAW_SUFFIX
_NAMES = {"zstd": ZSTD_NAME, "none": RAW_NAME}

PROJECT = "project"
SESSION = "session"
TRANSCRIPT = "transcript"


@dataclass(frozen=True, slots=True)
class Problem:
    """One entry of the root the walk could not use: a bad row, never a failed root."""

    kind: str  # UNREADABLE | SYMLINK | FLAT_FILE
    level: str  # PROJECT | SESSION | TRANSCRIPT: what ``path`` is
    path: str  # the entry at fault (the folder, the link, the flat file, the transcript)
    project: str  # the project folder it is in (``path`` itself for a project-level problem)
    reason: str  # one line for a row, e.g. "unreadable: permission denied"
    target: str | None = None  # where a symlink resolves

    @property
    def folder_name(self) -> str:
        """The session folder name (the encoded id) a session-level problem belongs to."""
        if self.level == TRANSCRIPT:
            return os.path.basename(os.path.dirname(self.path))
        return os.path.basename(self.path)


@dataclass(frozen=True, slots=True)
class SessionFolder:
    """A real session folder and the transcripts present in it (regular files, or whatever else is
    there under a transcript name that is not a link; the readers report what is wrong with it)."""

    project: str
    path: str
    zstd: str | None
    raw: str | None

    @property
    def name(self) -> str:
        """The folder's name: the encoded session id."""
        return os.path.basename(self.path)

    def transcript(self, compression: str) -> str | None:
        """The transcript of ``compression`` in this folder, or None."""
        return self.zstd if compression == "zstd" else self.raw

    def other(self, compression: str) -> str | None:
        """The transcript of the other encoding (a mixed root, §4.3)."""
        return self.raw if compression == "zstd" else self.zstd


Entry = SessionFolder | Problem


def _describe(err: OSError) -> str:
    if isinstance(err, PermissionError) or err.errno in (errno.EACCES, errno.EPERM):
        return "unreadable: permission denied"
    return f"unreadable: {err.strerror or err}"


def unreadable(err: OSError, level: str, path: str, project: str) -> Problem:
    """The problem row of an entry the OS refuses to read (``err`` says why)."""
    return Problem(UNREADABLE, level, path, project, _describe(err))


def link_problem(level: str, path: str, project: str) -> Problem:
    """The problem row of a symlink at ``path`` (``level`` says what it stands for)."""
    target = os.path.realpath(path)
    what = {PROJECT: "project folder", SESSION: "session folder", TRANSCRIPT: "transcript"}[level]
    return Problem(
        SYMLINK,
        level,
        path,
        project,
        f"symlink: the {what} is a symbolic link to {target}; SessionScope neither lists, reads nor writes "
        "through links below the root (move the session into the root to use it)",
        target,
    )


def link_error(path: str) -> SessionLayoutError:
    """The ``SessionLayoutError`` a read or write through the symlink ``path`` raises."""
    return SessionLayoutError(
        f'session artifact path "{path}" is a symbolic link (to "{os.path.realpath(path)}"); SessionScope neither '
        "reads nor writes through links below the root"
    )


def _sorted_entries(path: str) -> list[os.DirEntry[str]]:
    with os.scandir(path) as it:
        entries = list(it)
    # Node's readdir returns names in byte order; upstream's list order depends on it (spec §4.2).
    entries.sort(key=lambda e: os.fsencode(e.name))
    return entries


def _inside(path: str, root: str) -> bool:
    real_root = os.path.realpath(root)
    return os.path.realpath(path).startswith(real_root.rstrip(os.sep) + os.sep)


def project_dirs(root: str) -> list[str]:
    """Real project folders of ``root`` in list order; ``[]`` for a missing root, other errors raise."""
    try:
        entries = _sorted_entries(root)
    except FileNotFoundError:
        return []
    return [e.path for e in entries if e.is_dir(follow_symlinks=False)]


def walk_root(root: str) -> Iterator[Entry]:
    """Every project's entries (``walk_project``) in list order, plus a problem for each project folder
    that cannot be walked.  A missing root yields nothing; a root that cannot be listed raises."""
    try:
        entries = _sorted_entries(root)
    except FileNotFoundError:
        return
    for e in entries:
        if e.is_dir(follow_symlinks=False):
            yield from walk_project(e.path)
        else:
            link = _project_link(e, root)
            if link is not None:
                yield link


def walk_root_links(root: str) -> list[Problem]:
    """Only the project-level problems of ``walk_root`` (symlinked project folders leading out of the root)."""
    try:
        entries = _sorted_entries(root)
    except FileNotFoundError:
        return []
    return [p for p in (_project_link(e, root) for e in entries) if p is not None]


def _project_link(e: os.DirEntry[str], root: str) -> Problem | None:
    """A symlinked project folder that leads out of the root (an in-root alias is fine, §4.6 case 73)."""
    if not e.is_symlink():
        return None
    try:
        to_dir = e.is_dir()
    except OSError:
        return None
    if not to_dir or _inside(e.path, root):
        return None
    return link_problem(PROJECT, e.path, e.path)


def walk_project(project: str) -> Iterator[Entry]:
    """One project folder: its flat files first (upstream refuses the folder before looking inside),
    then its session folders and links, in list order."""
    try:
        entries = _sorted_entries(project)
    except FileNotFoundError:
        return
    except OSError as err:
        yield unreadable(err, PROJECT, project, project)
        return
    later: list[os.DirEntry[str]] = []
    for e in entries:
        if e.is_file(follow_symlinks=False):
            if e.name.endswith(RAW_SUFFIX) or e.name.endswith(ZSTD_SUFFIX):
                yield Problem(
                    FLAT_FILE,
                    TRANSCRIPT,
                    e.path,
                    project,
                    "flat-file layout: the engine only reads <project>/<session>/session.jsonl[.zstd]; "
                    "it refuses the whole root while this file is here",
                )
        else:
            later.append(e)
    for e in later:
        if e.is_dir(follow_symlinks=False):
            yield probe_folder(project, e.path)
        elif e.is_symlink():
            try:
                to_dir = e.is_dir()
            except OSError:
                to_dir = False
            if to_dir or e.name.endswith(RAW_SUFFIX) or e.name.endswith(ZSTD_SUFFIX):
                yield link_problem(SESSION, e.path, project)


def probe_folder(project: str, folder: str) -> Entry:
    """What a session folder holds under the two transcript names (two ``lstat`` calls, no reads)."""
    found: dict[str, str | None] = {}
    for compression, name in _NAMES.items():
        path = os.path.join(folder, name)
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            found[compression] = None
            continue
        except NotADirectoryError:
            found[compression] = None  # the folder was replaced by a file meanwhile
            continue
        except OSError as err:
            return unreadable(err, SESSION, folder, project)
        if stat.S_ISLNK(st.st_mode):
            return link_problem(TRANSCRIPT, path, project)
        found[compression] = path
    return SessionFolder(project, folder, found["zstd"], found["none"])


@dataclass(frozen=True, slots=True)
class IdProbe:
    """What one project folder holds for one session id (the targeted lookup, §4.4)."""

    flat: str | None  # a flat artifact for the id (refused by the caller)
    folder: Entry | None  # None: no folder for the id here
    project_unreadable: Problem | None = None  # the project folder itself could not be probed


def probe_id(project: str, segment: str) -> IdProbe:
    """Probe ``project`` for the id whose folder name is ``segment``.

    A permission fault on the project's own entries means the project cannot be searched
    (``project_unreadable``); one inside the id's folder means this session is unreadable.  A regular
    file named like the folder raises ``NotADirectoryError`` as upstream's open-probe does (§4.4).
    """
    for suffix in (ZSTD_SUFFIX, RAW_SUFFIX):
        flat = os.path.join(project, segment + suffix)
        try:
            os.lstat(flat)
        except FileNotFoundError:
            continue
        except OSError as err:
            return IdProbe(None, None, unreadable(err, PROJECT, project, project))
        return IdProbe(flat, None)
    folder = os.path.join(project, segment)
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return IdProbe(None, None)
    except OSError as err:
        return IdProbe(None, None, unreadable(err, PROJECT, project, project))
    if stat.S_ISLNK(st.st_mode):
        return IdProbe(None, link_problem(SESSION, folder, project))
    if not stat.S_ISDIR(st.st_mode):
        os.lstat(os.path.join(folder, ZSTD_NAME))  # raises ENOTDIR, like upstream's probe of seg/session...
    return IdProbe(None, probe_folder(project, folder))


def read_listing_header(first: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """(meta, None) for a header the engine can list; (None, None) for a first line that is not a header
    (upstream skips it silently, §5.4); (None, reason) for a header it cannot represent.

    A header with a number outside JSON's range (``"version": 1e400`` parses to infinity) cannot be
    handed out: ``Infinity`` is not JSON, so no caller could print or store it.  Retired fields still
    raise, as upstream's listing does.
    """
    try:
        meta = parse_header_meta(first)
    except OverflowError:  # the parser's integer normalization met an infinity (1e400)
        return None, "the header holds a number outside JSON's range"
    except RecursionError:
        return None, "the header is nested too deeply to read"
    if meta is None:
        return None, None
    field = unrepresentable_field(meta)
    if field is not None:
        return None, f"the header field {field!r} is a number outside JSON's range"
    return meta, None


def assert_writable_path(root: str, path: str, *, verb: str = "write") -> None:
    """Refuse a write (or, ``verb="read"``, a read) of ``path`` unless every existing component below
    ``root`` is a real folder/file.

    Raises ``SessionLayoutError`` naming the link (or saying the path is outside the root).  Missing
    components are fine (they are about to be created).  The root itself may be a link.
    """
    root = os.path.abspath(root)
    target = os.path.abspath(path)
    rel = os.path.relpath(target, root)
    if rel == os.curdir or rel.startswith(os.pardir + os.sep) or rel == os.pardir or os.path.isabs(rel):
        raise SessionLayoutError(f'refusing to {verb} "{target}": it is outside the root "{root}"')
    current = root
    for part in rel.split(os.sep):
        current = os.path.join(current, part)
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            return
        if stat.S_ISLNK(st.st_mode):
            raise link_error(current)


def folder_problem_error(problem: Problem) -> SessionPersistenceError:
    """The error a read of the session at ``problem`` raises (symlink or unreadable)."""
    if problem.kind == SYMLINK:
        return link_error(problem.path)
    return SessionUnreadableError(f'session folder "{problem.path}" is {problem.reason}')


__all__ = [
    "FLAT_FILE",
    "PROJECT",
    "SESSION",
    "SYMLINK",
    "TRANSCRIPT",
    "UNREADABLE",
    "Entry",
    "IdProbe",
    "Problem",
    "SessionFolder",
    "SessionUnreadableError",
    "assert_writable_path",
    "folder_problem_error",
    "link_error",
    "link_problem",
    "probe_folder",
    "probe_id",
    "project_dirs",
    "read_listing_header",
    "unreadable",
    "walk_project",
    "walk_root",
    "walk_root_links",
]
