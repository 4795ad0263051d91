"""The manifest files the offline subcommands (`render`, `convert`) read: `-f FILE` or stdin."""

from __future__ import annotations

import sys
from typing import Any

import yaml

Json = dict[str, Any]


class ManifestError(ValueError):
    """A manifest file that is not a sequence of Kubernetes objects."""


def read_documents(filename: str) -> list[Json]:
    """The YAML documents of `filename` ("-": stdin), empty ones left out. Raises OSError,
    yaml.YAMLError, or ManifestError when a document is not an object."""
    if filename == "-":
        text = sys.stdin.read()
    else:
        with open(filename, encoding="utf-8") as stream:
            text = stream.read()
    documents = [doc for doc in yaml.safe_load_all(text) if doc is not None]
    if not all(isinstance(doc, dict) for doc in documents):
        raise ManifestError("every YAML document must be a Kubernetes object")
    return documents
