"""The operator's name and version, read once from the installed package's metadata."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

#: The distribution, the field manager, and the first word of the user agent.
OPERATOR_NAME = "dynamo-operator"

try:
    VERSION = version(OPERATOR_NAME)
except PackageNotFoundError:  # run from a checkout that was never installed
    VERSION = "0+unknown"
