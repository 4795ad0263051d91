"""Entry point of the `dynamo-operator` console script.

`dynamo-operator [FLAGS]` runs the operator (`dynamo-operator --help` lists the flags).
`dynamo-operator render -f FILE` prints the objects the operator would create for the
manifests in FILE (YAML, several documents allowed; "-" reads stdin), without a cluster.
"""

import argparse
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Run the operator, or a subcommand; returns the process exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "render":
        return _render(args[1:])
    # The composition root: the one place where the runtime (controller/) reaches into the
    # reconcilers, which wire Dynamo's controllers onto it. Imported lazily so that the
    # runtime's modules never depend on reconcilers/ and `render` stays light.
    from reconcilers.operator import main as run_operator

    return run_operator(args)


def _render(argv: list[str]) -> int:
    # Imported here: the operator process itself has no use for the YAML renderer.
    import yaml

    from backends.errors import GenerationError
    from backends.render import render_all
    from backends.settings import OperatorSettings

    parser = argparse.ArgumentParser(
        prog="dynamo-operator render",
        description="Print the objects the operator would create for the given manifests.",
    )
    parser.add_argument("-f", "--filename", required=True, help='manifest file, or "-" for stdin')
    parser.add_argument("--grove", action="store_true", help="render graphs as Grove PodCliqueSets")
    options = parser.parse_args(argv)
    try:
        if options.filename == "-":
            text = sys.stdin.read()
        else:
            with open(options.filename, encoding="utf-8") as stream:
                text = stream.read()
        manifests = [doc for doc in yaml.safe_load_all(text) if doc is not None]
        if not all(isinstance(doc, dict) for doc in manifests):
            raise GenerationError("every YAML document must be a Kubernetes object")
        objects = render_all(manifests, OperatorSettings(grove_enabled=options.grove))
    except (OSError, yaml.YAMLError, GenerationError) as exc:
        print(f"dynamo-operator render: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(
        yaml.dump_all(
            objects,
            Dumper=_dumper(),
            sort_keys=True,
            explicit_start=True,
            width=1 << 16,
            allow_unicode=True,
        )
    )
    return 0


def _dumper() -> type:
    import yaml

    class Dumper(yaml.SafeDumper):
        """Writes repeated values out in full: manifests for kubectl, not YAML anchors."""

        def ignore_aliases(self, data: object) -> bool:
            return True

    return Dumper


if __name__ == "__main__":
    sys.exit(main())
