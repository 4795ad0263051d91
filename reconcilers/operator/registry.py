"""Every controller the operator runs, and the cache shape they need.

The operator process (`reconcilers.operator.process`) builds its manager's cache with
`cache_transforms()` and then calls each registration with the manager and the shared context.
A controller package exposes `register(manager, ctx)`, which adds its controller with
`manager.add_controller(...)` taking its worker count from `ctx.max_concurrent_reconciles(name)`,
and, when it needs some resource held trimmed in the cache, `CACHE_TRANSFORMS`, or only some of
its objects cached, `CACHE_SELECTORS`; add them here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar

from controller.informer import Transform
from controller.manager import Manager
from controller.resource import Resource
from reconcilers import (
    component,
    failover_cascade,
    graph,
    model,
    request,
    scaling_adapter,
    topology_label,
)
from reconcilers.machinery.context import OperatorContext

Register = Callable[[Manager, OperatorContext], None]

REGISTRATIONS: tuple[Register, ...] = (
    component.register,
    graph.register,
    model.register,
    request.register,
    scaling_adapter.register,
    topology_label.register,
    failover_cascade.register,
)

# Our own kinds are cached as stored (the hub for the DGD, DCD and DGDR): no transform of theirs.
_TRANSFORMS: tuple[Mapping[Resource, Transform], ...] = (component.CACHE_TRANSFORMS,
                                                       graph.CACHE_TRANSFORMS,
                                                       model.CACHE_TRANSFORMS)
_SELECTORS: tuple[Mapping[Resource, str], ...] = (model.CACHE_SELECTORS,)

V = TypeVar("V")


def cache_transforms(declared: Iterable[Mapping[Resource, Transform]] = _TRANSFORMS
                     ) -> dict[Resource, Transform]:
    """The cache's transform per resource, from what each controller declares; ValueError
    when two controllers want the same resource held differently."""
    return _merged(declared)


def cache_label_selectors(declared: Iterable[Mapping[Resource, str]] = _SELECTORS
                          ) -> dict[Resource, str]:
    """The label selector the cache lists and watches each resource with, from what each
    controller declares; ValueError when two controllers want different selections."""
    return _merged(declared)


def _merged(declared: Iterable[Mapping[Resource, V]]) -> dict[Resource, V]:
    merged: dict[Resource, V] = {}
    for shapes in declared:
        for resource, shape in shapes.items():
            if merged.get(resource, shape) != shape:
                raise ValueError(f"two controllers ask for {resource} held differently")
            merged[resource] = shape
    return merged
