"""The DynamoGraphDeploymentScalingAdapter controller: the adapter's replicas drive its
service."""

from reconcilers.scaling_adapter.reconciler import NAME, ScalingAdapterReconciler, register

__all__ = ["NAME", "ScalingAdapterReconciler", "register"]
