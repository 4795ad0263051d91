"""The DynamoGraphDeployment controller: a graph becomes its children and one state."""

from reconcilers.graph.reconciler import NAME, GraphDeploymentReconciler, register

__all__ = ["NAME", "GraphDeploymentReconciler", "register"]
