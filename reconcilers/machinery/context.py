"""What every reconciler is built with: the client, the shared cache, settings and recorders."""

from __future__ import annotations

from dataclasses import dataclass, field

from backends.settings import OperatorSettings
from controller.cache import Cache
from controller.client import KubeClient
from controller.events import EventRecorder
from controller.http import HttpClient
from reconcilers.machinery.children import ChildWriter

#: Seconds before looking again at a child's name taken by an object we do not own: its
#: deletion wakes nobody, since it is not ours.
NOT_OWNED_RETRY = 30.0


@dataclass
class OperatorContext:
    """Shared by the reconcilers of one operator process (one per manager)."""

    client: KubeClient
    cache: Cache
    settings: OperatorSettings
    #: Only this namespace is reconciled when set (namespace-restricted mode).
    namespace: str | None = None
    #: Workers per controller name (`--max-concurrent-reconciles Kind=N`, any case); others get
    #: `default_workers`.
    workers: dict[str, int] = field(default_factory=dict)
    default_workers: int = 1
    #: ClusterRole the planner's RoleBinding refers to ("" : the operator creates none).
    planner_cluster_role_name: str = ""
    #: ClusterRole the DGDR profiling jobs' RoleBinding refers to (cluster-wide mode; ""
    #: gives them a Role of their namespace instead).
    dgdr_profiling_cluster_role_name: str = ""
    #: ClusterRole the EPP's RoleBinding refers to (cluster-wide mode; "" gives it a Role of
    #: its namespace instead).
    epp_cluster_role_name: str = ""
    #: The process's one session for calls to workers (LoRA loads); its owner closes it.
    http: HttpClient = field(default_factory=HttpClient)
    _recorders: dict[str, EventRecorder] = field(default_factory=dict)

    def recorder(self, component: str) -> EventRecorder:
        """The event recorder of a controller (one per component name)."""
        if component not in self._recorders:
            self._recorders[component] = EventRecorder(self.client, component)
        return self._recorders[component]

    def children(self, component: str) -> ChildWriter:
        return ChildWriter(self.client, self.cache, self.recorder(component))

    def max_concurrent_reconciles(self, controller: str) -> int:
        """How many keys the named controller may reconcile at once. Names compare without
        case: `DynamoGraphDeployment=4` (the controller's name, its kind) and the older
        `dynamographdeployment=4` are the same."""
        wanted = controller.lower()
        for name, count in self.workers.items():
            if name.lower() == wanted:
                return count
        return self.default_workers
