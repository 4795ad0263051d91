"""Backend framework strategies (vLLM, SGLang, TRT-LLM, and a no-op), one module each.

Importing the package imports every module in it; each registers its backend, so adding a
framework is adding a module. Look backends up with `get` or `resolve`.
"""

from __future__ import annotations

import importlib
import pkgutil

from backends.frameworks.base import Backend, BackendContext
from backends.frameworks.registry import NOOP, detect, get, names, register, resolve

__all__ = ["NOOP", "Backend", "BackendContext", "detect", "get", "names", "register", "resolve"]

for _module in pkgutil.iter_modules(__path__):
    if _module.name not in ("base", "registry"):
        importlib.import_module(f"{__name__}.{_module.name}")
