"""The DynamoGraphDeployment controller: a graph becomes its children and one state."""

from reconcilers.graph.gpu_supply import CACHE_TRANSFORMS
from reconcilers.graph.reconciler import NAME, GraphDeploymentReconciler, register

__all__ = ["CACHE_TRANSFORMS", "NAME", "GraphDeploymentReconciler", "register"]
