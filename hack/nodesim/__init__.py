"""nodesim: simulated GPU nodes and kubelets as an API client of any Kubernetes API server.

It registers Nodes (with `nvidia.com/gpu` capacity) and keeps them Ready through their
Leases, and runs the pods the cluster's scheduler binds to them: status, readiness, Jobs'
completion, graceful termination and the simulated Dynamo workers' HTTP endpoints. It
reuses the in-process simulation's pod model (`hack.localcluster.simulation`) without
touching that simulation; `WorkloadSim` runs that simulation's LeaderWorkerSet and Grove
controllers against the API server the same way.
`python -m hack.nodesim --kubeconfig F [--nodes N --gpus G]`.
"""

from .config import NodeSimConfig, PodDelays, nodes
from .simulator import NodeSim
from .workloads import WorkloadSim

__all__ = ["NodeSim", "NodeSimConfig", "PodDelays", "WorkloadSim", "nodes"]
