"""Is an agent still running this session?  The repair guard's evidence, by more than mtime.

A harness that sits inside a long tool call (a build, a test run, a human approval) writes nothing
for minutes, so "the artifact did not change for 10 s" alone takes a live session for dead: repair
then appends its closers, the harness appends its own seqs after them, and the log is corrupt
(JSONL: ``seq gap``; SQLite: the harness's write fails with a conflict).  ``assess_liveness``
therefore collects every signal it can get, each a small frozen value with a sentence for the user:

* ``RecentlyWritten``: the artifact (or a non-empty SQLite ``-wal``, or a ``-journal``) changed less
  than ``quiet_seconds`` ago (the original rule, with its original sentence);
* ``DatabaseBusy``: SQLite only, another connection holds a write transaction;
* ``HeldOpen``: another process has the transcript, the database or its ``-wal``/``-journal`` open;
* ``HarnessRunning``: a harness process runs with the session's ``cwd`` as its working directory;
* ``InFlight``: the last stored event is a call or request that has not come back yet (the turn is
  necessarily still open: every such type is only valid inside an open turn), younger than
  ``in_flight_seconds``.
* ``WriterHolds``: JSONL only, a SessionScope writer (a live ``SessionStore`` in any process) holds
  its lock on the transcript, however long it has been quiet (the engine's ``jsonl_writer_holds``).

When nothing fires, the verdict still says what was seen (issue 21 item 2): how long the artifact has
been idle and whether a harness process was looked for and not found.  Those are two facts, not a
crash: a long model call is silent for minutes.  ``LivenessVerdict.idle`` words them ("idle for
40 s — no harness process found; possibly crashed"), and nothing here ever calls a session crashed:
the user confirms that by repairing it anyway.

Nothing here writes.  The SQLite probe runs ``BEGIN IMMEDIATE``/``ROLLBACK`` while a read-only
connection pins the file, so closing the probe cannot checkpoint a leftover ``-wal`` into the
database before the backup is taken.  Our own process is never evidence (the window and the CLI
have the log open themselves while they judge it).

Processes, per platform (all through ``psutil`` except the Linux fast path):

* Linux: open files come from ``/proc/<pid>/fd`` symlinks (one ``readlink`` per descriptor, about
  20 ms for a desktop's few hundred processes; ``psutil.Process.open_files`` would also read every
  ``fdinfo`` file).  Processes of other users are visible only to root: their descriptors and cwd
  raise permission errors and are skipped.
* macOS: ``psutil.Process.open_files`` (the ``proc_pidinfo`` API ``lsof`` uses) and ``cwd``; they work
  for our own user's processes but usually not for other users' (``AccessDenied``, skipped), so a
  harness run by another user (or as root) can be missed.
* Windows: ``psutil.Process.open_files`` is partial (it lists only some handles of some processes and
  may skip handles it cannot query in time), so a miss proves nothing there; the harness-cwd rule
  and the in-flight rule carry more weight.
* Processes that vanish, are zombies or deny access are skipped (``NoSuchProcess``, ``ZombieProcess``,
  ``AccessDenied``); a failed process listing is reported in ``LivenessVerdict.notes``, never raised.

Our own writes are not evidence either: a fork, repair or restore this process just made leaves a
fresh mtime that would otherwise read as "an agent may still be writing it" (issue 16: the resume
dialog objected to the fork the window had written a second earlier).  ``OWN_WRITES`` remembers the
newest change each of our writes left (file and mtime, taken after the writing store closed); while
the artifact still shows exactly that change, ``RecentlyWritten`` does not fire.  Any later write by
anyone moves the mtime or the file and the rule applies again.

The window's timeline uses the same rule (``writer_active``) to tell an open turn that is being
written ("live") from one that crashed, so the two can never disagree about the quiet period.

No signal never proves an agent is gone.  ``--force`` (the override box in the window) is the only way
past the guard; ``FORCE_RISK`` is the sentence that says what it risks.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import psutil

from app.actions.artifacts import ArtifactRef
from persistence import EventType, jsonl_writer_holds, newest_change, writer_files, writer_lock_held

DEFAULT_QUIET_SECONDS = 10.0
# A tool call or a model request older than this is taken as abandoned (a crashed harness), not as
# a slow one: 30 min covers long builds and test runs and a human answering an approval question.
DEFAULT_IN_FLIGHT_SECONDS = 30 * 60.0
# Process names (or argv[0] basenames; ".exe" and case ignored) of a harness.
DEFAULT_HARNESS_NAMES: tuple[str, ...] = ("dsh",)
# A Node.js process is a harness when one of its arguments names a harness (see ``is_harness``).
NODE_NAMES: tuple[str, ...] = ("node", "nodejs")

FORCE_RISK = (
    "--force (the override box in the window) is the only way past this guard: if an agent is still running "
    "this session, its next events collide with the closers the repair appends and the log becomes corrupt "
    "(JSONL: a seq gap; SQLite: the agent's next write fails with a conflict)"
)

# Last stored event types that mean "the harness is waiting for something to come back".  Each is
# written only inside an open turn (session-model §3.2 and the event catalog), so a log whose last
# event has one of these types has an open turn.
IN_FLIGHT_TYPES: Mapping[str, str] = {
    EventType.TOOL_CALL: "a tool call started and has no result yet",
    EventType.TOOL_CODE_DISPATCH_START: "a nested tool dispatch started and has not settled",
    EventType.STEP_START: "a step started and its model request has no response yet",
    EventType.REQUEST_CONTEXT: "a model request is being prepared",
    EventType.REQUEST_HEADER: "a model request was dispatched and has no response yet",
    EventType.ASSISTANT_CHUNK: "a model response is still streaming",
    EventType.LLM_RETRY: "a failed model request is waiting to be retried",
    EventType.LLM_RETRY_STARTED: "a model request is being retried",
    EventType.APPROVAL_ASKED: "an approval question is waiting for its answer",
    EventType.HOOK_INVOKED: "a hook is running",
    EventType.COMMAND_RUN: "a slash command is running",
    EventType.COMPACTION_START: "a compaction is running",
    EventType.TOOL_WORKFLOW_RUN_START: "a workflow run is in progress",
    EventType.TOOL_WORKFLOW_AGENT_START: "a workflow member is running",
}


# ---------------------------------------------------------------- signals


@dataclass(frozen=True, slots=True)
class RecentlyWritten:
    path: str  # the file that changed last (the artifact, its -wal or its -journal)
    age_s: float
    quiet_seconds: float
    kind: ClassVar[str] = "recently-written"

    @property
    def sentence(self) -> str:
        # The original guard's wording: tests, scripts and users rely on it.
        return (
            f"the artifact changed {self.age_s:.1f} s ago (less than {self.quiet_seconds:g} s): an agent may still "
            "be writing it; wait, or override the guard (confirm in the window, --force on the command line)"
        )


@dataclass(frozen=True, slots=True)
class DatabaseBusy:
    path: str
    error: str
    kind: ClassVar[str] = "busy"

    @property
    def sentence(self) -> str:
        return f"the database is busy ({self.error}): another process holds a write transaction"


@dataclass(frozen=True, slots=True)
class HeldOpen:
    pid: int
    process: str
    path: str
    kind: ClassVar[str] = "held-open"

    @property
    def sentence(self) -> str:
        return f"looks live: process {self.pid} ({self.process}) has {self.path} open"


@dataclass(frozen=True, slots=True)
class HarnessRunning:
    pid: int
    process: str
    cwd: str
    kind: ClassVar[str] = "harness-running"

    @property
    def sentence(self) -> str:
        return f"looks live: harness process {self.pid} ({self.process}) is running in the session's folder {self.cwd}"


@dataclass(frozen=True, slots=True)
class InFlight:
    event_type: str
    seq: int | None
    age_s: float
    what: str
    kind: ClassVar[str] = "in-flight"

    @property
    def sentence(self) -> str:
        return f"looks live: last event is {self.event_type} {_ago(self.age_s)} ago ({self.what})"


@dataclass(frozen=True, slots=True)
class WriterHolds:
    path: str
    kind: ClassVar[str] = "writer-lock"

    @property
    def sentence(self) -> str:
        return f"looks live: a SessionScope writer holds {self.path} (a live session keeps its lock however quiet it is)"


LivenessSignal = RecentlyWritten | DatabaseBusy | HeldOpen | HarnessRunning | InFlight | WriterHolds


def signal_json(signal: LivenessSignal) -> dict[str, Any]:
    """``{"kind", "sentence", ...facts}`` for ``--json`` output and the window."""
    out: dict[str, Any] = {"kind": signal.kind, "sentence": signal.sentence}
    for name in signal.__dataclass_fields__:
        out[name] = getattr(signal, name)
    return out


def verdict_json(verdict: LivenessVerdict) -> dict[str, Any]:
    """The whole verdict for ``--json`` output: its state, every signal that fired, the idle facts."""
    return {
        "state": verdict.state,
        "live": verdict.live,
        "signals": [signal_json(s) for s in verdict.signals],
        "reason": verdict.reason,
        "idleSeconds": verdict.idle_s,
        "harnessChecked": verdict.harness_checked,
        "idle": verdict.idle,
        "notes": list(verdict.notes),
    }


@dataclass(frozen=True, slots=True)
class LivenessVerdict:
    signals: tuple[LivenessSignal, ...]
    notes: tuple[str, ...] = ()  # checks that could not run (they never count as "not live")
    # The two facts a quiet verdict still has, kept apart (issue 21 item 2): seconds since the artifact
    # last changed (None: not measured), and whether a harness process was looked for (the process list
    # was read and the session's folder was known) and none was found.
    idle_s: float | None = None
    harness_checked: bool = False

    @property
    def live(self) -> bool:
        return bool(self.signals)

    @property
    def state(self) -> str:
        """``live`` (a signal fired) or ``idle`` (none did: possibly crashed, never "crashed" by itself)."""
        return "live" if self.signals else "idle"

    @property
    def idle(self) -> str | None:
        """What a quiet verdict saw, for the user to confirm: "idle for 40 s — no harness process found;
        possibly crashed"; None when a signal fired or nothing was measured."""
        if self.signals or self.idle_s is None:
            return None
        harness = (
            "no harness process found"
            if self.harness_checked
            else "no harness process could be looked for (the session's folder or the process list is unknown)"
        )
        return f"idle for {_ago(max(0.0, self.idle_s))} — {harness}; possibly crashed"

    @property
    def reason(self) -> str | None:
        """Every signal's sentence, strongest first; None when nothing suggests a running agent."""
        return "; ".join(s.sentence for s in self.signals) if self.signals else None

    def refusal(self, session_id: str, action: str = "repair") -> str | None:
        """The guard's refusal of ``action`` (what fired, then what ``--force`` risks); None when quiet."""
        why = self.reason
        if why is None:
            return None
        return f'refusing to {action} "{session_id}": {why}. Nothing was changed. {FORCE_RISK}.'

    @property
    def objection(self) -> str | None:
        """What a dialog shows above its override box: every signal that fired, then what overriding
        risks; None when quiet."""
        why = self.reason
        return None if why is None else f"{why}. {FORCE_RISK}"


# ---------------------------------------------------------------- our own writes


class OwnWrites:
    """The newest change each of this process's own writes left on an artifact (thread-safe)."""

    def __init__(self) -> None:
        self._marks: dict[str, tuple[str, float]] = {}
        self._lock = threading.Lock()

    def remember(self, ref: ArtifactRef) -> None:
        """Call after the write is complete and the writing store closed (SQLite checkpoints on close)."""
        try:
            mark = newest_change(ref.kind, ref.path)
        except OSError:
            return
        with self._lock:
            self._marks[_real(ref.path)] = mark

    def is_own(self, ref: ArtifactRef, newest: tuple[str, float]) -> bool:
        """Whether ``newest`` (``newest_change`` of ``ref`` now) is still the change we made ourselves."""
        with self._lock:
            return self._marks.get(_real(ref.path)) == newest

    def forget(self, ref: ArtifactRef) -> None:
        with self._lock:
            self._marks.pop(_real(ref.path), None)


OWN_WRITES = OwnWrites()


# ---------------------------------------------------------------- processes


@dataclass(frozen=True, slots=True)
class ProcessFacts:
    """What the rules need to know about one process (a test builds these by hand)."""

    pid: int
    name: str
    cmdline: tuple[str, ...] = ()
    cwd: str | None = None
    open_files: tuple[str, ...] = ()  # real paths; a source may list only those among its ``targets``


# ``source(targets)`` lists the processes we may inspect; ``targets`` are the real paths the caller
# cares about, so a source may leave every other open file out.
ProcessSource = Callable[[frozenset[str]], Iterable[ProcessFacts]]


def system_processes(targets: frozenset[str]) -> Iterable[ProcessFacts]:
    """The running processes (see the module docstring for what each platform can see)."""
    held = _proc_fd_scan(targets) if targets else {}
    me = os.getpid()
    # ad_value: a field we may not read (another user's cwd) comes back as None instead of raising.
    for proc in psutil.process_iter(["pid", "name", "cmdline", "cwd"], ad_value=None):
        try:
            info = proc.info
            pid = int(info["pid"])
        except (psutil.Error, OSError, KeyError, TypeError, ValueError):
            continue
        files: tuple[str, ...] = ()
        if held is not None:
            files = held.get(pid, ())
        elif targets and pid != me:
            try:
                files = tuple(real for real in (_real(f.path) for f in proc.open_files()) if real in targets)
            except (psutil.AccessDenied, psutil.NoSuchProcess, psutil.ZombieProcess, OSError):
                files = ()  # we may not look, or it is gone: the other rules still see its name and cwd
        yield ProcessFacts(pid, info.get("name") or "", tuple(info.get("cmdline") or ()), info.get("cwd"), files)


def _proc_fd_scan(targets: frozenset[str]) -> dict[int, tuple[str, ...]] | None:
    """Linux: pid -> the targets it holds, from ``/proc/*/fd``; None where there is no such ``/proc``."""
    if not sys.platform.startswith("linux") or not os.path.isdir("/proc/self/fd"):
        return None
    out: dict[int, tuple[str, ...]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        fd_dir = f"/proc/{entry}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:  # gone, a kernel thread, or another user's process (not root)
            continue
        found = []
        for fd in fds:
            try:
                link = os.readlink(f"{fd_dir}/{fd}")
            except OSError:
                continue
            if link in targets:
                found.append(link)
        if found:
            out[int(entry)] = tuple(dict.fromkeys(found))
    return out


def is_harness(proc: ProcessFacts, harness_names: Iterable[str] = DEFAULT_HARNESS_NAMES) -> bool:
    """A harness: its process name or argv[0] basename is one of ``harness_names`` (".exe" and case
    ignored), or it is Node.js (``NODE_NAMES``) and an argument has a path component that is a harness
    name or starts with one and a dot or dash (``.../@scope/dsh/bin/cli.js``, ``dsh.js``, ``dsh-cli``)."""
    names = {n.lower() for n in harness_names}
    own = {_program(proc.name)}
    if proc.cmdline:
        own.add(_program(proc.cmdline[0]))
    if own & names:
        return True
    if not own & set(NODE_NAMES):
        return False
    for arg in proc.cmdline[1:]:
        for part in arg.replace("\\", "/").split("/"):
            low = part.lower()
            if any(low == n or low.startswith((n + ".", n + "-")) for n in names):
                return True
    return False


def _program(text: str) -> str:
    base = text.replace("\\", "/").rsplit("/", 1)[-1].lower()
    return base[:-4] if base.endswith(".exe") else base


def _real(path: str) -> str:
    return os.path.normcase(os.path.realpath(path))


# ---------------------------------------------------------------- the assessment


def assess_liveness(
    ref: ArtifactRef,
    *,
    quiet_seconds: float = DEFAULT_QUIET_SECONDS,
    now: float | None = None,
    session_cwd: str | None = None,
    last_event: Mapping[str, Any] | Any | None = None,
    in_flight_seconds: float = DEFAULT_IN_FLIGHT_SECONDS,
    harness_names: tuple[str, ...] = DEFAULT_HARNESS_NAMES,
    process_source: ProcessSource | None = None,
    own_writes: OwnWrites | None = OWN_WRITES,
) -> LivenessVerdict:
    """Every sign that an agent may still be running the session stored in ``ref``; writes nothing.

    ``now`` is wall-clock seconds (``time.time()`` when None), for file and event ages.
    ``session_cwd`` (the session header's ``cwd``) enables the harness rule; ``last_event`` (the last
    stored event, a dict or an engine event) enables the in-flight rule.  ``process_source`` replaces
    the process listing (tests; ``lambda _t: ()`` turns the process rules off).  ``own_writes``: changes
    this process made itself, which are no evidence (None: every recent change counts).
    """
    clock = time.time() if now is None else now
    signals: list[LivenessSignal] = []
    notes: list[str] = []
    newest_path, newest = newest_change(ref.kind, ref.path)
    recent = _recent(ref, clock, quiet_seconds, own_writes, newest_path, newest)
    if recent is not None:
        signals.append(recent)
    if ref.kind == "sqlite":
        busy = _sqlite_busy(ref)
        if busy is not None:
            signals.append(busy)
    if ref.kind == "jsonl" and jsonl_writer_holds(ref.path):
        signals.append(WriterHolds(ref.path))
    listed = False
    targets = frozenset(_real(p) for p in _artifact_files(ref))
    shown = {_real(p): p for p in _artifact_files(ref)}
    source = system_processes if process_source is None else process_source
    mine = _own_processes() if process_source is None else {os.getpid()}
    cwd = _real(session_cwd) if session_cwd else None
    try:
        for proc in source(targets):
            if proc.pid in mine:
                continue
            for path in proc.open_files:
                real = _real(path)
                if real in targets:
                    signals.append(
                        HeldOpen(proc.pid, proc.name or _program(proc.cmdline[0] if proc.cmdline else "?"), shown.get(real, path))
                    )
                    break
            if cwd is not None and proc.cwd and _real(proc.cwd) == cwd and is_harness(proc, harness_names):
                signals.append(HarnessRunning(proc.pid, proc.name, session_cwd or proc.cwd))
        listed = True
    except (OSError, psutil.Error) as err:
        notes.append(f"the process list could not be read ({err}); only file ages and the last event were judged")
    flight = _in_flight(last_event, clock, in_flight_seconds, ref)
    if flight is not None:
        signals.append(flight)
    return LivenessVerdict(tuple(signals), tuple(notes), clock - newest, listed and cwd is not None)


def _own_processes() -> set[int]:
    """This process and its ``multiprocessing`` workers (the window's listing/diagnosis pool reads logs too).

    Other children (a harness the user resumed from the window, a test's helper process) stay evidence.
    """
    pids = {os.getpid()}
    try:
        for child in psutil.Process().children(recursive=True):
            try:
                if any("multiprocessing" in part for part in child.cmdline()):
                    pids.add(child.pid)
            except psutil.Error:
                continue
    except psutil.Error:
        pass
    return pids


def _artifact_files(ref: ArtifactRef) -> list[str]:
    """The files a writer of this artifact keeps open (that exist)."""
    return [p for p in writer_files(ref.kind, ref.path) if os.path.exists(p)]


def _recently_written(
    ref: ArtifactRef, now: float, quiet_seconds: float, own_writes: OwnWrites | None = None
) -> RecentlyWritten | None:
    """The newest change among the artifact and its SQLite sidecars (the engine's ``newest_change``),
    when within ``quiet_seconds`` and not our own.  A clock step backwards (an mtime in the future)
    counts as "just written"."""
    newest_path, newest = newest_change(ref.kind, ref.path)
    return _recent(ref, now, quiet_seconds, own_writes, newest_path, newest)


def _recent(
    ref: ArtifactRef, now: float, quiet_seconds: float, own_writes: OwnWrites | None, newest_path: str, newest: float
) -> RecentlyWritten | None:
    if own_writes is not None and own_writes.is_own(ref, (newest_path, newest)):
        return None
    age = now - newest
    return RecentlyWritten(newest_path, age, quiet_seconds) if age < quiet_seconds else None


def writer_active(
    ref: ArtifactRef, *, quiet_seconds: float = DEFAULT_QUIET_SECONDS, now: float | None = None
) -> RecentlyWritten | None:
    """The guard's recent-write rule alone (no process scan: cheap enough for every refresh of a view).

    The window calls an open turn "live" while this fires, so the timeline and the guard agree on
    what "recent" means; None also when the artifact is gone.
    """
    try:
        return _recently_written(ref, time.time() if now is None else now, quiet_seconds, OWN_WRITES)
    except OSError:
        return None


def _sqlite_busy(ref: ArtifactRef) -> DatabaseBusy | None:
    why = writer_lock_held(ref.path)
    return None if why is None else DatabaseBusy(ref.path, why)


def _in_flight(last_event: Any, now: float, window: float, ref: ArtifactRef) -> InFlight | None:
    if last_event is None:
        return None
    event = last_event.to_json() if hasattr(last_event, "to_json") else last_event
    if not isinstance(event, Mapping):
        return None
    kind = event.get("type")
    what = IN_FLIGHT_TYPES.get(kind) if isinstance(kind, str) else None
    if what is None or not isinstance(kind, str):
        return None
    stamp = event.get("time")
    if isinstance(stamp, (int, float)) and not isinstance(stamp, bool) and math.isfinite(stamp):
        age = now - stamp / 1000.0  # event times are epoch milliseconds (Date.now() at append)
    else:
        try:
            age = now - os.stat(ref.path).st_mtime  # no usable time: the file's last change stands in
        except OSError:
            age = 0.0
    age = max(0.0, age)  # a time in the future (clock skew) is "just now"
    if age >= window:
        return None
    seq = event.get("seq")
    return InFlight(kind, seq if isinstance(seq, int) and not isinstance(seq, bool) else None, age, what)


def _ago(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
