"""The `dynamo-operator` console script.

`dynamo-operator [FLAGS]` runs the operator (`dynamo-operator --help` lists the flags).
`dynamo-operator render -f FILE` prints the objects the operator would create for the
manifests in FILE, without a cluster. `dynamo-operator convert -f FILE [--to VERSION]` prints
the manifests of FILE in another nvidia.com API version. `dynamo-operator diff -f FILE` shows
what applying FILE would change in the live cluster (`cli_diff`); `dynamo-operator rollout
status|history|undo dgd/NAME` follows and reverts a graph's worker rollouts (`cli_rollout`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Run the operator, or a subcommand; returns the process exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "render":
        # Imported here: the operator process has no use for the YAML renderer, and
        # `render` none for the runtime.
        from reconcilers.operator.render import main as render

        return render(args[1:])
    if args and args[0] in ("diff", "rollout"):
        # Against a live cluster: the client's transport and kubeconfig loaders only.
        from controller import lean_imports

        lean_imports.install()
        if args[0] == "diff":
            from reconcilers.operator.cli_diff import main as diff

            return diff(args[1:])
        from reconcilers.operator.cli_rollout import main as rollout

        return rollout(args[1:])
    if args and args[0] == "convert":
        from reconcilers.operator.convert import main as convert

        return convert(args[1:])
    # Before anything imports kubernetes_asyncio: the process needs its transport and
    # kubeconfig loaders, not the generated client (about 30 MiB).
    from controller import lean_imports

    lean_imports.install()
    from reconcilers.operator.process import main as run

    return run(args)
