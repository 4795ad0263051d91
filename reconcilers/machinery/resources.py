"""The Kubernetes resources the reconcilers read and write, by name."""

from __future__ import annotations

from controller.resource import Resource

# nvidia.com: the hub (v1beta1) for the kinds stored as v1beta1, whose informers and writes
# use it (the cache holds their v1alpha1 views, reconcilers/machinery/hub.py); v1alpha1 for
# the scaling adapter and the DynamoModel, stored as v1alpha1.
GRAPH_DEPLOYMENTS = Resource("nvidia.com", "v1beta1", "dynamographdeployments",
                             "DynamoGraphDeployment")
COMPONENT_DEPLOYMENTS = Resource("nvidia.com", "v1beta1", "dynamocomponentdeployments",
                                 "DynamoComponentDeployment")
SCALING_ADAPTERS = Resource("nvidia.com", "v1alpha1", "dynamographdeploymentscalingadapters",
                            "DynamoGraphDeploymentScalingAdapter")
MODELS = Resource("nvidia.com", "v1alpha1", "dynamomodels", "DynamoModel")
DEPLOYMENT_REQUESTS = Resource("nvidia.com", "v1beta1", "dynamographdeploymentrequests",
                               "DynamoGraphDeploymentRequest")

# built-in
# The cache holds Pods and Secrets trimmed (reconcilers.component.CACHE_TRANSFORMS): Pods keep
# metadata (no annotations), status, their node and GPU fields; Secrets metadata (no
# annotations), type and registry hosts, never their data. Read those through the client.
PODS = Resource("", "v1", "pods", "Pod")
SERVICES = Resource("", "v1", "services", "Service")
SECRETS = Resource("", "v1", "secrets", "Secret")
PERSISTENT_VOLUME_CLAIMS = Resource("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim")
SERVICE_ACCOUNTS = Resource("", "v1", "serviceaccounts", "ServiceAccount")
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment")
CONTROLLER_REVISIONS = Resource("apps", "v1", "controllerrevisions", "ControllerRevision")
INGRESSES = Resource("networking.k8s.io", "v1", "ingresses", "Ingress")
ROLES = Resource("rbac.authorization.k8s.io", "v1", "roles", "Role")
ROLE_BINDINGS = Resource("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding")
ENDPOINT_SLICES = Resource("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice")
CONFIG_MAPS = Resource("", "v1", "configmaps", "ConfigMap")
JOBS = Resource("batch", "v1", "jobs", "Job")
NODES = Resource("", "v1", "nodes", "Node", namespaced=False)

# Dynamic Resource Allocation, read when the cluster serves resource.k8s.io/v1
# (OperatorSettings.dra_enabled).
DEVICE_CLASSES = Resource("resource.k8s.io", "v1", "deviceclasses", "DeviceClass",
                          namespaced=False)
RESOURCE_SLICES = Resource("resource.k8s.io", "v1", "resourceslices", "ResourceSlice",
                           namespaced=False)
RESOURCE_CLAIMS = Resource("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim")
RESOURCE_CLAIM_TEMPLATES = Resource("resource.k8s.io", "v1", "resourceclaimtemplates",
                                    "ResourceClaimTemplate")

# optional APIs, used when discovery finds them
LEADER_WORKER_SETS = Resource("leaderworkerset.x-k8s.io", "v1", "leaderworkersets",
                              "LeaderWorkerSet")
POD_CLIQUE_SETS = Resource("grove.io", "v1alpha1", "podcliquesets", "PodCliqueSet")
POD_CLIQUES = Resource("grove.io", "v1alpha1", "podcliques", "PodClique")
POD_CLIQUE_SCALING_GROUPS = Resource("grove.io", "v1alpha1", "podcliquescalinggroups",
                                     "PodCliqueScalingGroup")
CLUSTER_TOPOLOGIES = Resource("grove.io", "v1alpha1", "clustertopologies", "ClusterTopology",
                              namespaced=False)
VOLCANO_POD_GROUPS = Resource("scheduling.volcano.sh", "v1beta1", "podgroups", "PodGroup")
VIRTUAL_SERVICES = Resource("networking.istio.io", "v1beta1", "virtualservices",
                            "VirtualService")
INFERENCE_POOLS = Resource("inference.networking.k8s.io", "v1", "inferencepools",
                           "InferencePool")

_BY_KIND = {(r.api_version, r.kind): r for r in (
    GRAPH_DEPLOYMENTS, COMPONENT_DEPLOYMENTS, SCALING_ADAPTERS,
    PODS, SERVICES, SECRETS, PERSISTENT_VOLUME_CLAIMS, SERVICE_ACCOUNTS,
    DEPLOYMENTS, CONTROLLER_REVISIONS, INGRESSES, ROLES, ROLE_BINDINGS, CONFIG_MAPS, JOBS,
    LEADER_WORKER_SETS, RESOURCE_CLAIM_TEMPLATES,
    POD_CLIQUE_SETS, POD_CLIQUES, POD_CLIQUE_SCALING_GROUPS, VOLCANO_POD_GROUPS,
    VIRTUAL_SERVICES, INFERENCE_POOLS)}


def resource_for(kind: tuple[str, str]) -> Resource:
    """The resource of an (apiVersion, kind) the operator writes; KeyError for any other."""
    return _BY_KIND[kind]
