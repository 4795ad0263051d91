"""The DynamoComponentDeployment controller: one component's workload, Services and
exposure, and whether it is available."""

from reconcilers.component.reconciler import NAME, ComponentDeploymentReconciler, register

__all__ = ["NAME", "ComponentDeploymentReconciler", "register"]
