"""The DynamoGraphDeploymentRequest controller: profile, generate, deploy, follow."""

from reconcilers.request.reconciler import NAME, GraphDeploymentRequestReconciler, register

__all__ = ["NAME", "GraphDeploymentRequestReconciler", "register"]
