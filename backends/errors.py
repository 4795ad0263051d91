"""The one error the builders raise: a spec that cannot be turned into Kubernetes objects."""

from __future__ import annotations


class GenerationError(ValueError):
    """A component spec that cannot become valid Kubernetes objects (an unknown backend, a
    quantity that does not parse, a volume mount without a path...). The message is meant for
    the user: the reconciler records it in a condition and stops retrying until the spec
    changes."""
