"""Resume in the user's harness: commit pending repair (after confirmation), then run the command in a terminal."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass

DEFAULT_TEMPLATE = "dsh --profile tui --resume {id}"
_LINUX_TERMINALS = ("x-terminal-emulator", "gnome-terminal", "konsole", "xterm")


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
        return ["osascript", "-e", f"tell application \"Terminal\" to do script {applescript_string(script)}"]
    if platform.startswith("win"):
        return ["cmd", "/c", "start", "", *command.argv]
    for term in _LINUX_TERMINALS:
        if shutil.which(term):
            if term == "gnome-terminal":
                return [term, "--", *command.argv]
            return [term, "-e", command.text] if term in ("x-terminal-emulator", "xterm") else [term, "-e", *command.argv]
    raise ResumeLaunchError(
        "no terminal emulator found (tried " + ", ".join(_LINUX_TERMINALS) + "); copy the command instead"
    )


def launch(command: ResumeCommand) -> subprocess.Popen[bytes]:
    argv = terminal_argv(command)
    try:
        return subprocess.Popen(argv, cwd=command.cwd, start_new_session=True)
    except OSError as err:
        raise ResumeLaunchError(f"could not start {argv[0]}: {err}") from err
