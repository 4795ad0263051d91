"""The failover cascade controller: when an engine pod of inter-pod GMS failover ends, its
whole engine group is deleted at once, for Grove to make it anew."""

from reconcilers.failover_cascade.reconciler import NAME, FailoverCascadeReconciler, register

__all__ = ["NAME", "FailoverCascadeReconciler", "register"]
