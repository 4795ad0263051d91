"""`dynamo-operator render -f FILE`: the objects the operator would create for the manifests
in FILE (YAML, several documents allowed; "-" reads stdin), printed without a cluster. Other
documents of the file (Namespaces, HPAs, ScaledObjects...) are printed unchanged; our kinds
that render to nothing are skipped with one line each on stderr.

A graph is rendered as the operator would create it: stamped with this operator's origin
version unless the manifest states one (`reconcilers.operator.defaulting`), so what is gated
on it (`backends.origin_gates`, a frontendSidecar say) shows."""

from __future__ import annotations

import argparse
import sys

import yaml

from backends.errors import GenerationError
from backends.render import render_documents
from backends.settings import OperatorSettings
from reconcilers.operator.defaulting import created
from reconcilers.operator.manifest_files import ManifestError, read_documents
from reconcilers.operator.version import VERSION


def main(argv: list[str]) -> int:
    """Print the rendered objects; 1 with a message on stderr for unreadable input."""
    parser = argparse.ArgumentParser(
        prog="dynamo-operator render",
        description="Print the objects the operator would create for the given manifests.",
    )
    parser.add_argument("-f", "--filename", required=True, help='manifest file, or "-" for stdin')
    parser.add_argument("--grove", action="store_true", help="render graphs as Grove PodCliqueSets")
    options = parser.parse_args(argv)
    try:
        # As on a cluster serving DRA (resource.k8s.io/v1), which GPU memory service needs.
        settings = OperatorSettings(grove_enabled=options.grove, dra_enabled=True)
        documents = [created(doc, VERSION) for doc in read_documents(options.filename)]
        objects, notes = render_documents(documents, settings)
    except (OSError, yaml.YAMLError, ManifestError, GenerationError) as exc:
        print(f"dynamo-operator render: {exc}", file=sys.stderr)
        return 1
    for note in notes:
        print(f"dynamo-operator render: {note}", file=sys.stderr)
    sys.stdout.write(yaml.dump_all(objects, Dumper=_Dumper, sort_keys=True, explicit_start=True,
                                   width=1 << 16, allow_unicode=True))
    return 0


class _Dumper(yaml.SafeDumper):
    """Writes repeated values out in full: manifests for kubectl, not YAML anchors."""

    def ignore_aliases(self, data: object) -> bool:
        return True
