"""Backends by name, and which one a component uses.

Each backend module registers one instance at import; the package imports every module in
it, so a new backend is one new module.
"""

from __future__ import annotations

import re

from backends import constants
from backends.errors import GenerationError
from backends.frameworks.base import Backend

__all__ = ["NOOP", "detect", "get", "names", "register", "resolve"]

NOOP = "noop"
_BACKENDS: dict[str, Backend] = {}


def register(backend: Backend) -> Backend:
    """Add a backend under its name (a second registration of a name replaces the first)."""
    _BACKENDS[backend.name] = backend
    return backend


def names() -> list[str]:
    """Registered backend names, sorted."""
    return sorted(_BACKENDS)


def get(name: str) -> Backend:
    """The backend called `name`."""
    try:
        return _BACKENDS[name]
    except KeyError:
        raise GenerationError(f"unsupported backend framework: {name}") from None


def detect(command: list[str], args: list[str]) -> str | None:
    """The framework a command line runs (`python -m dynamo.<name>`), or None.

    Raises when it runs more than one."""
    line = " ".join([*command, *args])
    found = [
        name
        for name in names()
        if name != NOOP
        and re.search(rf"python[0-9.]*\s+[^|&;]*-m\s+[^|&;]*dynamo\.{re.escape(name)}", line)
    ]
    if len(found) > 1:
        raise GenerationError(
            f"multiple backend frameworks detected from command: {', '.join(found)}"
        )
    return found[0] if found else None


def resolve(
    component_type: str | None, command: list[str], args: list[str], explicit: str | None
) -> Backend:
    """The backend of a component: none for non-workers; for workers, the one its command
    runs, which must agree with the configured `backendFramework`, else the configured one."""
    if component_type not in constants.WORKER_TYPES:
        return get(NOOP)
    try:
        detected = detect(command, args)
    except GenerationError as exc:
        if explicit:
            return get(explicit)
        raise GenerationError(f"could not determine backend framework: {exc}") from None
    if detected and explicit and detected != explicit:
        raise GenerationError(
            f'backend framework mismatch: detected "{detected}" from command but explicitly '
            f'configured as "{explicit}"'
        )
    return get(detected or explicit or NOOP)
