"""Load kubernetes_asyncio's transport and kubeconfig loaders without its generated client.

`import kubernetes_asyncio` runs the package's `__init__`, which imports the whole generated
client: hundreds of API and model modules, about 30 MiB of resident memory and a third of a
second at start-up. The runtime uses four pieces of it (`Configuration`, `ApiClient` with its
REST client, the exceptions, and the kubeconfig and in-cluster loaders) and reads every body
as plain JSON, so it never needs a model class.

`install()` registers the two parent packages as plain namespace modules (their real
`__init__` is not run) and an empty `kubernetes_asyncio.client.models`, then imports only the
modules the runtime uses. It must run before anything else imports kubernetes_asyncio, so the
operator's entry point calls it first; in a process that has already imported the package
(a test run, a tool), it does nothing and the full package is used.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from pathlib import Path

ROOT = "kubernetes_asyncio"
MODELS = f"{ROOT}.client.models"


def install() -> bool:
    """Make `kubernetes_asyncio.client` and `.config` importable without the generated models.

    Returns False, changing nothing, when kubernetes_asyncio is already imported or absent.
    """
    if ROOT in sys.modules:
        return False
    spec = importlib.util.find_spec(ROOT)
    if spec is None or not spec.submodule_search_locations:
        return False
    package_dir = Path(next(iter(spec.submodule_search_locations)))
    root = _namespace(ROOT, package_dir)
    client = _namespace(f"{ROOT}.client", package_dir / "client")
    models = _ModelsRemoved(MODELS)
    sys.modules[MODELS] = models
    client.models = models  # type: ignore[attr-defined]
    root.client = client  # type: ignore[attr-defined]
    # The loaders import `Configuration` and `ApiClient` from the client package, so those two
    # must be on it before the config package is imported.
    client.Configuration = importlib.import_module(  # type: ignore[attr-defined]
        f"{ROOT}.client.configuration").Configuration
    client.ApiClient = importlib.import_module(  # type: ignore[attr-defined]
        f"{ROOT}.client.api_client").ApiClient
    root.config = importlib.import_module(f"{ROOT}.config")  # type: ignore[attr-defined]
    return True


def _namespace(name: str, path: Path) -> types.ModuleType:
    module = types.ModuleType(name, f"{name}, loaded without its __init__ (lean_imports)")
    module.__path__ = [str(path)]
    sys.modules[name] = module
    return module


class _ModelsRemoved(types.ModuleType):
    """Stands in for the generated models: any use of one is a bug, named as such."""

    def __getattr__(self, name: str) -> object:
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(
            f"{MODELS}.{name} is not loaded: the operator process imports kubernetes_asyncio "
            "without its generated models (controller/lean_imports.py) and reads bodies as JSON")
