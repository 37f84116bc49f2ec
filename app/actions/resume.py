"""Resume in the user's harness: commit pending repair (after confirmation), then run the command in a terminal.

One orchestration for both front ends (they used to drift: the window ran the liveness guard on a
balanced session, ``sessionscope resume`` did not):

* ``plan_resume`` reads only: the repair preview, the liveness verdict (always, not only when a
  repair is pending: two harnesses on one session would interleave their appends) and the command;
* ``execute_resume`` checks the command (and, when it will open a terminal, that the harness and a
  terminal exist) before anything is written, refuses while the guard objects unless ``force``,
  commits a pending repair only when it was confirmed, proves the log is resumable, then launches.

The window shows the plan in its dialog and passes the boxes the user ticked; the command line
passes ``--force`` for both.  While the dialog is open the window re-judges the guard every second
(``recheck_liveness``): an agent that stops writing stops blocking, one that starts starts.  Copying
the command writes nothing unless it commits a confirmed repair the guard allows
(``ResumePlan.repair_on_copy``), so the guard never blocks a plain copy (issue 16 bug 5).
May import the standard library, ``app.actions`` and the engine.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

from app.actions.liveness import DEFAULT_IN_FLIGHT_SECONDS, DEFAULT_QUIET_SECONDS, LivenessVerdict
from app.actions.repair import (
    RepairPlan,
    RepairPreview,
    RepairRefused,
    assess_session,
    execute_repair,
    preview_repair,
    read_session_tail,
)
from persistence import CoordinatedPersistence

DEFAULT_TEMPLATE = "dsh --profile tui --resume {id}"
_LINUX_TERMINALS = ("x-terminal-emulator", "gnome-terminal", "konsole", "xterm")
# Statuses a harness can resume: a crash is closed (after confirmation) by the repair it needs first.
RESUMABLE = ("ok", "open-turn", "torn-tail")


class ResumeLaunchError(RuntimeError):
    """The command could not be started (no terminal, no harness)."""


@dataclass(frozen=True, slots=True)
class ResumeCommand:
    argv: list[str]
    cwd: str | None

    @property
    def text(self) -> str:
        return shlex.join(self.argv)


def build_command(template: str, *, session_id: str, cwd: str | None, root: str) -> ResumeCommand:
    """Fill ``{id}``, ``{cwd}``, ``{root}`` (shell-quoted, then split like a shell: write them unquoted)."""
    try:
        text = template.format(id=shlex.quote(session_id), cwd=shlex.quote(cwd or ""), root=shlex.quote(root))
        argv = shlex.split(text)
    except (KeyError, IndexError, ValueError) as err:
        raise ResumeLaunchError(
            f"the resume command template {template!r} is malformed ({type(err).__name__}: {err}); "
            "it may use the placeholders {id}, {cwd} and {root}, and literal braces must be doubled"
        ) from err
    if not argv:
        raise ResumeLaunchError("the resume command template is empty")
    workdir = cwd if cwd and os.path.isdir(cwd) else None
    return ResumeCommand(argv, workdir)


def applescript_string(text: str) -> str:
    """An AppleScript string literal: double quotes, with backslash and double quote escaped."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def terminal_argv(command: ResumeCommand, platform: str = sys.platform) -> list[str]:
    """How to run ``command`` in a new terminal window on this platform."""
    if shutil.which(command.argv[0]) is None:
        raise ResumeLaunchError(
            f"the harness command {command.argv[0]!r} was not found on PATH; install it or change the resume "
            "command template (the command can also be copied to the clipboard)"
        )
    if platform == "darwin":
        script = f"cd {shlex.quote(command.cwd or os.getcwd())} && {command.text}"
        return ["osascript", "-e", f'tell application "Terminal" to do script {applescript_string(script)}']
    if platform.startswith("win"):
        return ["cmd", "/c", "start", "", *command.argv]
    for term in _LINUX_TERMINALS:
        if shutil.which(term):
            if term == "gnome-terminal":
                return [term, "--", *command.argv]
            return [term, "-e", command.text] if term in ("x-terminal-emulator", "xterm") else [term, "-e", *command.argv]
    raise ResumeLaunchError("no terminal emulator found (tried " + ", ".join(_LINUX_TERMINALS) + "); copy the command instead")


def launch(command: ResumeCommand) -> subprocess.Popen[bytes]:
    argv = terminal_argv(command)
    try:
        return subprocess.Popen(argv, cwd=command.cwd, start_new_session=True)
    except OSError as err:
        raise ResumeLaunchError(f"could not start {argv[0]}: {err}") from err


# ---------------------------------------------------------------- plan and execute


@dataclass(frozen=True, slots=True)
class ResumePlan:
    """Everything a resume decides on, computed without writing."""

    session_id: str
    root: str  # the store as the user named it (the ``{root}`` placeholder)
    cwd: str | None  # the working directory the session recorded
    preview: RepairPreview  # the repair a resume commits first (``repairable``), or nothing to do
    liveness: LivenessVerdict | None  # None when the session has no artifact to judge (an in-memory store)
    template: str
    command: ResumeCommand | None  # None when ``template`` is malformed (``template_error`` says why)
    template_error: str | None = None

    @property
    def needs_repair(self) -> bool:
        return self.preview.repairable

    @property
    def objection(self) -> str | None:
        """The guard's objection as a dialog shows it; None when quiet."""
        return None if self.liveness is None else self.liveness.objection

    def with_template(self, template: str) -> ResumePlan:
        """The same plan with another command template (the window's editable field)."""
        command, error = _command_of(template, self.session_id, self.cwd, self.root)
        return dataclasses.replace(self, template=template, command=command, template_error=error)

    def with_liveness(self, liveness: LivenessVerdict | None) -> ResumePlan:
        """The same plan with a fresh guard verdict (the dialog re-checks while it is open)."""
        return dataclasses.replace(self, liveness=liveness)

    def repair_on_copy(self, *, repair_confirmed: bool, force: bool) -> bool:
        """Whether "Copy command" commits the pending repair first: only a confirmed one the guard allows
        (quiet, or overridden).  Otherwise copying writes nothing, so nothing may block it."""
        return self.needs_repair and repair_confirmed and (self.objection is None or force)

    def require_command(self) -> ResumeCommand:
        """The command, or the template's ``ResumeLaunchError``."""
        if self.command is None:
            raise ResumeLaunchError(self.template_error or "the resume command template is empty")
        return self.command


@dataclass(frozen=True, slots=True)
class ResumeOutcome:
    session_id: str
    command: ResumeCommand
    backup: str | None  # the backup a repair made first, or None
    launched: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.session_id,
            "command": self.command.argv,
            "cwd": self.command.cwd,
            "backup": self.backup,
            "launched": self.launched,
        }


def _command_of(template: str, session_id: str, cwd: str | None, root: str) -> tuple[ResumeCommand | None, str | None]:
    try:
        return build_command(template, session_id=session_id, cwd=cwd, root=root), None
    except ResumeLaunchError as err:
        return None, str(err)


def store_root(store: CoordinatedPersistence) -> str:
    """The root folder or database file the store was opened on (the ``{root}`` placeholder)."""
    return store.root_path


async def plan_resume(
    store: CoordinatedPersistence,
    session_id: str,
    template: str = DEFAULT_TEMPLATE,
    *,
    root: str | None = None,
    quiet_seconds: float = DEFAULT_QUIET_SECONDS,
    in_flight_seconds: float = DEFAULT_IN_FLIGHT_SECONDS,
) -> ResumePlan:
    """Preview, liveness verdict and command of a resume.  Reads only.

    Refuses (``RepairRefused``) a session a harness cannot resume: corrupt, unsupported, missing or busy.
    """
    preview = await preview_repair(store, session_id)
    if preview.status not in RESUMABLE:
        raise RepairRefused(f'cannot resume "{session_id}": {preview.reason}')
    tail = await read_session_tail(store, session_id)  # one read serves the command's cwd and the guard
    liveness = None
    if preview.artifact is not None:
        liveness = await assess_session(
            store, preview, quiet_seconds=quiet_seconds, in_flight_seconds=in_flight_seconds, tail=tail
        )
    where = root if root is not None else store_root(store)
    command, error = _command_of(template, session_id, tail.cwd, where)
    return ResumePlan(session_id, where, tail.cwd, preview, liveness, template, command, error)


async def recheck_liveness(
    store: CoordinatedPersistence,
    plan: ResumePlan,
    *,
    quiet_seconds: float = DEFAULT_QUIET_SECONDS,
    in_flight_seconds: float = DEFAULT_IN_FLIGHT_SECONDS,
) -> ResumePlan:
    """``plan`` with the guard judged again now (the preview and the command stay).  Reads only."""
    if plan.preview.artifact is None:
        return plan
    verdict = await assess_session(store, plan.preview, quiet_seconds=quiet_seconds, in_flight_seconds=in_flight_seconds)
    return plan.with_liveness(verdict)


async def execute_resume(
    store: CoordinatedPersistence,
    plan: ResumePlan,
    *,
    repair_confirmed: bool,
    force: bool,
    open_terminal: bool,
    quiet_seconds: float = DEFAULT_QUIET_SECONDS,
) -> ResumeOutcome:
    """Resume as planned: see the module docstring for the order of the checks.

    ``force`` overrides the liveness guard (here and in the repair); ``repair_confirmed`` allows the
    pending repair; ``open_terminal`` runs the command in a new terminal (otherwise the caller shows
    or copies it).  A failure to launch after a repair names the repair's backup.
    """
    session_id = plan.session_id
    command = plan.require_command()
    if open_terminal:
        # Before anything is written: a missing harness or terminal must not leave a half-done resume.
        await asyncio.to_thread(terminal_argv, command)
    if not force and plan.liveness is not None:
        refusal = plan.liveness.refusal(session_id, "resume")
        if refusal is not None:
            raise RepairRefused(refusal)
    if plan.needs_repair and not repair_confirmed:
        raise RepairRefused(
            f'session "{session_id}" needs repair first ({plan.preview.reason}); run `sessionscope repair` to preview '
            "it, or pass --force to repair (with a backup) and resume"
        )
    backup = None
    if plan.needs_repair:
        result = await execute_repair(store, RepairPlan(plan.preview, plan.liveness), force=force, quiet_seconds=quiet_seconds)
        backup = result.backup
    # prepare() commits nothing further here (the repair already ran) and proves the log is resumable.
    with await store.prepare(session_id):
        pass
    if not open_terminal:
        return ResumeOutcome(session_id, command, backup, False)
    try:
        await asyncio.to_thread(launch, command)
    except ResumeLaunchError as err:
        if backup is None:
            raise
        raise ResumeLaunchError(f"{err} (repaired first; backup at {backup})") from err
    return ResumeOutcome(session_id, command, backup, True)
