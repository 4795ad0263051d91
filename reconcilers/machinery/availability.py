"""The reasons of a DynamoComponentDeployment's Available condition.

They are the vocabulary between the component controller, which reports why a component is
not available, and the graph controller, which sums its services up: the graph reads the
reason and never parses the message (the message is for people).
"""

from __future__ import annotations

# The workload's own state, in the original operator's words.
DEPLOYMENT_READY = "DeploymentReady"
DEPLOYMENT_NOT_READY = "DeploymentNotReady"
LWS_READY = "LeaderWorkerSetReady"
LWS_NOT_READY = "LeaderWorkerSetNotReady"
#: What this operator wrote before a multinode DCD had one LeaderWorkerSet: still found in
#: statuses written then.
LEGACY_LWS_NOT_READY = "SomeLeaderWorkerSetsNotReady"

# What blocks a component, found on its pods: the kubelet's container waiting reasons, and
# the scheduler's verdict.
UNSCHEDULABLE = "Unschedulable"
IMAGE_PULL_REASONS = frozenset({"ErrImagePull", "ImagePullBackOff", "InvalidImageName",
                                "ErrImageNeverPull", "RegistryUnavailable"})
CONTAINER_FAILURE_REASONS = frozenset({"CrashLoopBackOff", "CreateContainerConfigError",
                                       "CreateContainerError", "RunContainerError"})
CAPACITY_REASONS = frozenset({UNSCHEDULABLE})

# The component controller's own failures.
VALIDATION_FAILED = "ValidationFailed"
GENERATION_FAILED = "GenerationFailed"
RECONCILE_FAILED = "ReconcileFailed"
NAME_CONFLICT = "NameConflict"
#: The component controller's failures that only a new spec (or someone else's action) ends:
#: a graph with such a component has failed, it is not pending.
FAILURE_REASONS = frozenset({VALIDATION_FAILED, GENERATION_FAILED, RECONCILE_FAILED,
                             NAME_CONFLICT})

#: Reasons that only say "not ready yet": nothing worth repeating to users.
NOT_READY_YET = frozenset({"", DEPLOYMENT_NOT_READY, LWS_NOT_READY, LEGACY_LWS_NOT_READY,
                           "Reconciling", "NotReady"})
