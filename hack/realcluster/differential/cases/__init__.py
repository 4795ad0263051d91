"""Every case of the suite, by topic, and the cluster-wide setup they need."""

from __future__ import annotations

from ..model import Case
from . import (
    apply,
    conversion,
    deletion,
    errors,
    lists,
    managed_versions,
    rbac,
    subresources,
    webhooks,
)
from .setup import setup

ALL: list[Case] = [*errors.CASES, *lists.CASES, *deletion.CASES, *apply.CASES,
                   *subresources.CASES, *rbac.CASES, *webhooks.CASES,
                   *conversion.CASES, *managed_versions.CASES]

__all__ = ["ALL", "setup"]
