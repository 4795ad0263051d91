"""Every controller the operator runs, as the functions that add them to a manager.

The operator process (`reconcilers.operator.process`) calls each in turn with the manager and the
shared context. A controller module exposes `register(manager, ctx)`, which adds its
controller with `manager.add_controller(...)`, taking its worker count from
`ctx.max_concurrent_reconciles(name)`; add it here to have it run.
"""

from __future__ import annotations

from collections.abc import Callable

from controller.manager import Manager
from reconcilers.component import reconciler as component_deployment
from reconcilers.graph import reconciler as graph_deployment
from reconcilers.machinery.context import OperatorContext
from reconcilers.scaling_adapter import reconciler as scaling_adapter

Register = Callable[[Manager, OperatorContext], None]

REGISTRATIONS: tuple[Register, ...] = (
    component_deployment.register,
    graph_deployment.register,
    scaling_adapter.register,
)
