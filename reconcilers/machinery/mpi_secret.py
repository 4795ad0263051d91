"""The MPI SSH Secret that TRT-LLM multinode pods mount, read for copying.

The source Secret is read through the client (the cache holds Secrets without their data) and
handed to the builders, which copy it into the namespace of the pods; its data is never
logged. A missing source is the user's to fix: a TerminalError whose message names the Secret
and the services that mount it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from backends.mpi_secret import source_namespace
from controller.errors import NotFound, TerminalError
from reconcilers.machinery.context import NOT_OWNED_RETRY, OperatorContext
from reconcilers.machinery.resources import SECRETS

Json = dict[str, Any]

MISSING = ('MPI SSH Secret "{namespace}/{name}" not found: the TRT-LLM multinode service(s) '
           "{services} mount it; create it (keys private.key and private.key.pub) or point "
           "--mpi-run-ssh-secret-name and --mpi-run-ssh-secret-namespace at one")


async def mpi_source(ctx: OperatorContext, namespace: str, services: Sequence[str],
                     reason: str) -> Json | None:
    """The Secret to copy into `namespace` for `services` (none: None); None too when the
    namespace holds its own. TerminalError (with `reason`) when neither exists."""
    if not services:
        return None
    source = source_namespace(ctx.settings, namespace)
    name = ctx.settings.mpi_run_secret_name
    if source != namespace:
        try:
            return await ctx.client.get(SECRETS, source, name)
        except NotFound:
            pass  # a Secret the namespace holds itself serves as well
    if await ctx.cache.get_or_none(SECRETS, namespace, name) is None:
        raise TerminalError(
            MISSING.format(namespace=source, name=name, services=", ".join(services)),
            reason=reason,
            # In namespace-restricted mode the source may be outside what we watch.
            retry_after=NOT_OWNED_RETRY)
    return None
