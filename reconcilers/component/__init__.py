"""The DynamoComponentDeployment controller: one component's workload, Services and
exposure, and whether it is available."""

from reconcilers.component.reconciler import (
    CACHE_TRANSFORMS,
    NAME,
    ComponentDeploymentReconciler,
    register,
)

__all__ = ["CACHE_TRANSFORMS", "NAME", "ComponentDeploymentReconciler", "register"]
