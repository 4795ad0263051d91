"""The error conversion raises for input it cannot convert."""

from __future__ import annotations

__all__ = ["ConversionFailure"]


class ConversionFailure(ValueError):
    """An object that cannot be converted: an unknown kind or version, or a shape no version
    allows (a component without a name, two components of one name)."""
