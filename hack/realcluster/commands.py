"""Running the build's external commands: always with a timeout, failing with their output."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path


class CommandError(RuntimeError):
    """A command exited non-zero or ran past its timeout."""


def run(command: Sequence[str | Path], *, timeout: float, cwd: Path | None = None,
        env: Mapping[str, str] | None = None, log: Path | None = None) -> str:
    """Run `command`, return its stdout; raise CommandError with the output's tail on failure.

    With `log`, stdout and stderr go to that file instead (for long builds) and "" is returned.
    """
    args = [str(part) for part in command]
    try:
        if log is not None:
            with log.open("ab") as sink:
                done = subprocess.run(args, cwd=cwd, env=env, stdout=sink,
                                      stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                      timeout=timeout, check=False)
            output = ""
        else:
            done = subprocess.run(args, cwd=cwd, env=env, capture_output=True,
                                  stdin=subprocess.DEVNULL, timeout=timeout, check=False)
            output = done.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired as error:
        raise CommandError(f"{args[0]} ran past {timeout:.0f}s: {' '.join(args)}") from error
    if done.returncode != 0:
        if log is not None:
            tail = log.read_text(errors="replace")[-4000:]
        else:
            tail = (done.stdout + done.stderr).decode(errors="replace")[-4000:]
        raise CommandError(f"{' '.join(args)} exited {done.returncode}:\n{tail}")
    return output
