"""Reading and rewriting a container's command line: is it a Python interpreter, is it a shell
script, and how to add flags to the Dynamo module it starts.

Exec-form arguments are shell-quoted whenever they are joined into a shell string, so JSON
arguments and arguments with spaces reach the program unchanged.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

Json = dict[str, Any]

__all__ = [
    "SHELL",
    "inject_flags",
    "is_python",
    "is_shell",
    "module_pattern",
    "quote_join",
    "shell_line",
]

SHELL = ["/bin/sh", "-c"]
_PYTHON = re.compile(r"(.*/)?python\d*(\.\d+)*")
_SHELLS = re.compile(r"(.*/)?(sh|bash|dash|zsh)")


def is_python(command: list[str]) -> bool:
    """The first word is a Python interpreter: python, python3, /usr/bin/python3.11..."""
    return bool(command) and _PYTHON.fullmatch(command[0]) is not None


def is_shell(command: list[str]) -> bool:
    """The command is `<shell> -c`, so the first argument is a shell script."""
    return len(command) == 2 and _SHELLS.fullmatch(command[0]) is not None and command[1] == "-c"


def quote_join(words: list[str]) -> str:
    """Words joined into one shell command line, each quoted only if it has to be."""
    return " ".join(shlex.quote(w) for w in words)


def shell_line(command: list[str], args: list[str]) -> str:
    """The container's command line as one shell string."""
    if is_shell(command):
        return " ".join(args)
    return quote_join([*command, *args])


def module_pattern(framework: str) -> re.Pattern[str]:
    """Matches a shell segment running `python ... dynamo.<framework>[.submodule]`, up to the
    end of the module name (group 1)."""
    return re.compile(rf"(python[0-9.]*\s+[^|&;]*?\bdynamo\.{re.escape(framework)}\b[^\s|&;]*)")


def inject_flags(container: Json, framework: str, flags: list[str], *, needs_shell: bool) -> None:
    """Add `flags` to the Dynamo module the container runs, in place.

    A Python exec form gets the flags appended, or, when they hold shell expressions
    (`needs_shell`), becomes `sh -c "exec python ..."`. A shell script gets them inserted right
    after the module name in the first argument that runs it. Anything else is left alone.
    """
    command: list[str] = list(container.get("command") or [])
    args: list[str] = list(container.get("args") or [])
    if is_python(command):
        if needs_shell:
            # Shell expressions in the flags must stay unquoted.
            container["command"] = ["sh", "-c"]
            container["args"] = [f"exec {quote_join([*command, *args])} {' '.join(flags)}"]
        else:
            container["args"] = [*args, *flags]
        return
    pattern = module_pattern(framework)
    for i, arg in enumerate(args):
        changed, count = pattern.subn(lambda m: f"{m.group(1)} {' '.join(flags)}", arg, count=1)
        if count:
            args[i] = changed
            container["args"] = args
            return
