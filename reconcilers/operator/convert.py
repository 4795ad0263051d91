"""`dynamo-operator convert -f FILE [--to v1beta1|v1alpha1]`: manifests moved to another API
version, offline.

Every document of our kinds in `nvidia.com/v1alpha1` or `v1beta1` is printed in the version
asked for (v1beta1 by default, the version the original operator stores and documents today),
converted exactly as the operator's conversion webhook converts it: what the target version
cannot represent is kept in the private payload annotation, so converting back gives the input
again and `render` gives the same children for both. Other documents, and ours already in the
target version, are printed unchanged. Comments and key order of the input are not kept.
"""

from __future__ import annotations

import argparse
import sys

import yaml

from api.conversion import HUB, SPOKE, VERSIONS, ConversionFailure, convert
from reconcilers.operator.manifest_files import ManifestError, read_documents


def main(argv: list[str]) -> int:
    """Print the converted manifests; 1 with a message on stderr for unreadable input."""
    parser = argparse.ArgumentParser(
        prog="dynamo-operator convert",
        description="Print the manifests of FILE in another nvidia.com API version.",
    )
    parser.add_argument("-f", "--filename", required=True, help='manifest file, or "-" for stdin')
    parser.add_argument("--to", choices=[v.split("/")[1] for v in (HUB, SPOKE)],
                        default=HUB.split("/")[1], help="the API version to write [%(default)s]")
    options = parser.parse_args(argv)
    try:
        converted = [convert(doc, options.to) if doc.get("apiVersion") in VERSIONS else doc
                     for doc in read_documents(options.filename)]
    except (OSError, yaml.YAMLError, ManifestError, ConversionFailure) as exc:
        print(f"dynamo-operator convert: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(yaml.safe_dump_all(converted, sort_keys=False, explicit_start=True,
                                        width=1 << 16, allow_unicode=True))
    return 0

