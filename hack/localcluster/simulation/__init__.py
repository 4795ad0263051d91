"""The simulated cluster behind the local API server: nodes, scheduler, kubelets, controllers.

Everything here reacts to committed changes and writes through `Operations`, like the real
components talk to kube-apiserver, so clients see the objects and statuses a real cluster
would show. `SimulationConfig` switches each part on or off and sets every delay.
"""

from .behaviors import (
    JOB_DURATION,
    JOB_OUTCOME,
    MODE,
    READY,
    READY_AFTER,
    STOP,
    STOP_AFTER,
    Behaviors,
)
from .config import (
    PARTS,
    Delays,
    HpaSettings,
    NodeSpec,
    SimulationConfig,
    default_nodes,
    load_nodes,
)
from .metrics import USAGE_ANNOTATION, Metrics
from .simulated_cluster import Simulation

__all__ = [
    "JOB_DURATION",
    "JOB_OUTCOME",
    "MODE",
    "PARTS",
    "READY",
    "READY_AFTER",
    "STOP",
    "STOP_AFTER",
    "USAGE_ANNOTATION",
    "Behaviors",
    "Delays",
    "HpaSettings",
    "Metrics",
    "NodeSpec",
    "Simulation",
    "SimulationConfig",
    "default_nodes",
    "load_nodes",
]
