{{/*
The operator's own permissions, derived from what the code reads and writes (no wildcards).
"informer": the shared cache lists and watches it; "child writer": reconcilers/machinery/
children.py creates, updates (and patches the generation annotation of), and prunes it;
"delegated": not used by the operator itself, but contained in a Role the operator creates
(planner, EPP, discovery, profiling), which RBAC lets it create only while it holds those
permissions (the escalation check) - this avoids granting `escalate`.
*/}}
{{- define "dynamo-operator.managerRules" -}}
{{- $restricted := .Values.namespaceRestriction.enabled }}
# Our kinds: informers, finalizer and spec patches (graph: created by a DGDR with autoApply,
# replicas patched by the scaling adapter controller).
- apiGroups: [nvidia.com]
  resources: [dynamographdeployments]
  verbs: [get, list, watch, create, patch{{ if $restricted }}, update{{ end }}]
# DCDs and scaling adapters are children of a graph (child writer).
- apiGroups: [nvidia.com]
  resources: [dynamocomponentdeployments]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [nvidia.com]
  resources: [dynamographdeploymentscalingadapters]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [nvidia.com]
  resources: [dynamographdeploymentrequests, dynamomodels]
  verbs: [get, list, watch, patch]
# Status is written as a merge patch of the status subresource.
- apiGroups: [nvidia.com]
  resources:
  - dynamographdeployments/status
  - dynamocomponentdeployments/status
  - dynamographdeploymentscalingadapters/status
  - dynamographdeploymentrequests/status
  - dynamomodels/status
  verbs: [patch]
# Children carry ownerReferences with blockOwnerDeletion, which needs update on the owner's
# finalizers subresource (OwnerReferencesPermissionEnforcement).
- apiGroups: [nvidia.com]
  resources:
  - dynamographdeployments/finalizers
  - dynamocomponentdeployments/finalizers
  - dynamographdeploymentrequests/finalizers
  verbs: [update]
# Delegated: every graph's discovery Role lets its pods write their own DynamoWorkerMetadata
# and read the others' (backends/discovery_rbac.py); namespace-restricted, the planner's Role
# writes them and the EPP's reads them too.
- apiGroups: [nvidia.com]
  resources: [dynamoworkermetadatas]
  verbs: [get, list, watch, create, update, patch, delete]
{{- if $restricted }}
# Delegated: the planner's Role scales through the adapters' scale subresource.
- apiGroups: [nvidia.com]
  resources: [dynamographdeploymentscalingadapters/scale]
  verbs: [patch]
{{- end }}
# Workload children (child writer).
- apiGroups: [apps]
  resources: [deployments]
  verbs: [get, list, watch, create, update, patch, delete]
# GPU memory service: the ResourceClaimTemplate of each GMS component (child writer; only
# written where the cluster serves resource.k8s.io/v1).
- apiGroups: [resource.k8s.io]
  resources: [resourceclaimtemplates]
  verbs: [get, list, watch, create, update, patch, delete]
# A graph's worker revision history (child writer; `rollout history|undo` read it).
- apiGroups: [apps]
  resources: [controllerrevisions]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [""]
  resources: [services, configmaps, serviceaccounts]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [networking.k8s.io]
  resources: [ingresses]
  verbs: [get, list, watch, create, update, patch, delete]
# The planner's, EPP's, discovery and profiling identities (child writer; a RoleBinding whose
# roleRef changed is deleted and created again).
- apiGroups: [rbac.authorization.k8s.io]
  resources: [roles, rolebindings]
  verbs: [get, list, watch, create, update, patch, delete]
# Pods: informer (readiness, pod problems, model endpoints) and a DGDR's failed profiling pod;
# delegated to the discovery Role with get, list and watch; the topology label controller
# patches a KV transfer policy's worker pods with their node's topology labels; the failover
# cascade controller deletes the engine group of an inter-pod failover pod that ended.
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch, patch, delete]
# Secrets: informer (image pull secrets, trimmed of data), the MPI SSH Secret read and copied
# into graph namespaces (created, rewritten on drift; never deleted).
- apiGroups: [""]
  resources: [secrets]
  verbs: [get, list, watch, create, update]
# PVCs of a graph are created once and never changed; profiling Jobs likewise.
- apiGroups: [""]
  resources: [persistentvolumeclaims]
  verbs: [get, list, watch, create]
- apiGroups: [batch]
  resources: [jobs]
  verbs: [get, list, watch, create]
# Model endpoints (informer); delegated to the planner, EPP and discovery Roles with get.
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [get, list, watch]
# Delegated: the discovery Role of a graph's workers reads Endpoints.
- apiGroups: [""]
  resources: [endpoints]
  verbs: [get, list, watch]
# Events (controller/events.py creates them and patches the count of repeats).
- apiGroups: [""]
  resources: [events]
  verbs: [create, patch]
{{- if not $restricted }}
# The namespace-scope marker Leases of restricted operators (informer, field selector).
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [list, watch]
# GPU discovery of a DGDR (node labels), the node of a pod whose topology labels the
# topology label controller copies, and the nodes' allocatable GPUs a graph's are counted
# against (informer, reconcilers/graph/gpu_supply.py); cluster-wide only.
- apiGroups: [""]
  resources: [nodes]
  verbs: [get, list, watch]
# DRA (resource.k8s.io/v1, when served): the devices of GPU classes and those allocated,
# counted against what graphs ask (informers, reconcilers/graph/gpu_supply.py; the claim
# templates their pods name are read under the GMS rule above); cluster-wide only.
- apiGroups: [resource.k8s.io]
  resources: [deviceclasses, resourceslices, resourceclaims]
  verbs: [list, watch]
# RoleBindings to the planner's, profiling and EPP ClusterRoles, without holding their permissions.
- apiGroups: [rbac.authorization.k8s.io]
  resources: [clusterroles]
  verbs: [bind]
  resourceNames:
  - {{ include "dynamo-operator.plannerClusterRole" . }}
  - {{ include "dynamo-operator.profilingClusterRole" . }}
  - {{ include "dynamo-operator.eppClusterRole" . }}
{{- else }}
# The namespace-scope marker Lease, claimed at start, renewed, deleted at a clean stop.
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [create]
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [get, update, delete]
  resourceNames: [dynamo-operator-namespace-scope]
{{- end }}
{{- if .Values.inferencePool.enabled }}
# InferencePools of EPP components (child writer).
- apiGroups: [inference.networking.k8s.io]
  resources: [inferencepools]
  verbs: [get, list, watch, create, update, patch, delete]
{{- if $restricted }}
# Delegated: the EPP's Role reads the pools' status (cluster-wide, its ClusterRole does).
- apiGroups: [inference.networking.k8s.io]
  resources: [inferencepools/status]
  verbs: [get, list, watch]
{{- end }}
{{- end }}
{{- if .Values.grove.enabled }}
# Grove: the graph's PodCliqueSet (child writer); cliques and scaling groups are read for
# readiness and scaled through their scale subresource.
- apiGroups: [grove.io]
  resources: [podcliquesets]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [grove.io]
  resources: [podcliques, podcliquescalinggroups]
  verbs: [get, list, watch]
- apiGroups: [grove.io]
  resources: [podcliques/scale, podcliquescalinggroups/scale]
  verbs: [patch]
{{- if not $restricted }}
# The ClusterTopology a KV transfer policy names: its levels, for the graph's pods and the
# topology label controller.
- apiGroups: [grove.io]
  resources: [clustertopologies]
  verbs: [get]
{{- end }}
{{- end }}
{{- if .Values.lws.enabled }}
- apiGroups: [leaderworkerset.x-k8s.io]
  resources: [leaderworkersets]
  verbs: [get, list, watch, create, update, patch, delete]
{{- if .Values.volcano.enabled }}
- apiGroups: [scheduling.volcano.sh]
  resources: [podgroups]
  verbs: [get, list, watch, create, update, patch, delete]
{{- end }}
{{- end }}
{{- if .Values.istio.virtualServiceGateway }}
- apiGroups: [networking.istio.io]
  resources: [virtualservices]
  verbs: [get, list, watch, create, update, patch, delete]
{{- end }}
{{- end }}

{{/* The planner's permissions: the ClusterRole bound to planner-serviceaccount (cluster-wide)
and, namespace-restricted, the Role planner-role the operator creates
(backends/shared_rbac.py). */}}
{{- define "dynamo-operator.plannerRules" -}}
- apiGroups: [nvidia.com]
  resources: [dynamocomponentdeployments, dynamographdeployments]
  verbs: [get, list, create, update, patch]
- apiGroups: [nvidia.com]
  resources: [dynamographdeploymentscalingadapters/scale]
  verbs: [patch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [get, list, watch]
- apiGroups: [nvidia.com]
  resources: [dynamoworkermetadatas]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, patch]
{{- end }}

{{/* A DGDR profiling Job's permissions: its output ConfigMap and its own pod
(backends/profiling_job.py grants the same in a Role when namespace-restricted). */}}
{{- define "dynamo-operator.profilingRules" -}}
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, create, update, patch]
- apiGroups: [""]
  resources: [pods]
  verbs: [get]
{{- end }}

{{/* The EPP's permissions: the ClusterRole bound to epp-serviceaccount (cluster-wide) and,
namespace-restricted, the Role epp-role the operator creates (backends/shared_rbac.py). */}}
{{- define "dynamo-operator.eppRules" -}}
- apiGroups: [inference.networking.k8s.io]
  resources: [inferencepools, inferencepools/status]
  verbs: [get, list, watch]
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [get, list, watch]
- apiGroups: [nvidia.com]
  resources: [dynamoworkermetadatas]
  verbs: [get, list, watch]
{{- end }}
