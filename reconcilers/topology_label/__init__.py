"""The topology label controller: a worker pod of a graph with a KV transfer policy gets its
node's topology labels once it is scheduled."""

from reconcilers.topology_label.reconciler import NAME, TopologyLabelReconciler, register

__all__ = ["NAME", "TopologyLabelReconciler", "register"]
