"""The message table: field numbers, JSON names and types of the kinds kubectl sends as protobuf.

Written from the public `generated.proto` files of k8s.io/api and k8s.io/apimachinery (field
numbers are part of the wire protocol and never change) plus the Go struct tags of the same
types (pointer or `omitempty`, which decide the `!` and `?` flags). The grammar is in
`schema.py`.

Scope: the kinds `kubectl create <generator>`, `kubectl run` and `kubectl expose` build, and
every message they reach. Deliberately left out, so such fields are skipped (and logged):
  - volume sources other than hostPath, emptyDir, secret, nfs, persistentVolumeClaim,
    downwardAPI, configMap, projected, csi and ephemeral (the cloud/legacy plugins);
  - pod status detail (container statuses, resize status, ...): a client never sends it;
  - fields whose numbers post-date the protos this table was checked against and that no
    kubectl generator sets (e.g. ServiceSpec.trafficDistribution, the newest
    PodSecurityContext policies).
"""

from __future__ import annotations

from .schema import Message, parse_table

_CONTAINER = """
    1 name string!; 2 image string; 3 command []string; 4 args []string; 5 workingDir string;
    6 ports []core.ContainerPort; 7 env []core.EnvVar; 8 resources core.ResourceRequirements;
    9 volumeMounts []core.VolumeMount; 10 livenessProbe core.Probe;
    11 readinessProbe core.Probe; 12 lifecycle core.Lifecycle;
    13 terminationMessagePath string; 14 imagePullPolicy string;
    15 securityContext core.SecurityContext; 16 stdin bool; 17 stdinOnce bool; 18 tty bool;
    19 envFrom []core.EnvFromSource; 20 terminationMessagePolicy string;
    21 volumeDevices []core.VolumeDevice; 22 startupProbe core.Probe;
    23 resizePolicy []core.ContainerResizePolicy; 24 restartPolicy string!;
    25 restartPolicyRules []core.ContainerRestartRule
"""

_CONDITION = """
    1 type string!; 2 status string!; 3 lastProbeTime Time; 4 lastTransitionTime Time;
    5 reason string; 6 message string
"""

TABLE: dict[str, str] = {
    # --- k8s.io/apimachinery/pkg/apis/meta/v1 ---------------------------------------------------
    "meta.ObjectMeta": """
        1 name string; 2 generateName string; 3 namespace string; 4 selfLink string;
        5 uid string; 6 resourceVersion string; 7 generation int64; 8 creationTimestamp Time;
        9 deletionTimestamp Time; 10 deletionGracePeriodSeconds int64!;
        11 labels {}string; 12 annotations {}string;
        13 ownerReferences []meta.OwnerReference; 14 finalizers []string;
        17 managedFields []meta.ManagedFieldsEntry
    """,
    "meta.OwnerReference": """
        5 apiVersion string!; 1 kind string!; 3 name string!; 4 uid string!;
        6 controller bool!; 7 blockOwnerDeletion bool!
    """,
    "meta.ManagedFieldsEntry": """
        1 manager string; 2 operation string; 3 apiVersion string; 4 time Time;
        6 fieldsType string; 7 fieldsV1 FieldsV1; 8 subresource string
    """,
    "meta.LabelSelector": """
        1 matchLabels {}string; 2 matchExpressions []meta.LabelSelectorRequirement
    """,
    "meta.LabelSelectorRequirement": "1 key string!; 2 operator string!; 3 values []string",
    "meta.Condition": """
        1 type string!; 2 status string!; 3 observedGeneration int64;
        4 lastTransitionTime Time; 5 reason string!; 6 message string!
    """,
    "meta.DeleteOptions": """
        1 gracePeriodSeconds int64!; 2 preconditions meta.Preconditions;
        3 orphanDependents bool!; 4 propagationPolicy string!; 5 dryRun []string;
        6 ignoreStoreReadErrorWithClusterBreakingPotential bool!
    """,
    "meta.Preconditions": "1 uid string!; 2 resourceVersion string!",
    # --- k8s.io/api/core/v1: top-level kinds -----------------------------------------------------
    "core.Namespace": """
        1 metadata meta.ObjectMeta; 2 spec core.NamespaceSpec; 3 status core.NamespaceStatus
    """,
    "core.NamespaceSpec": "1 finalizers []string",
    "core.NamespaceStatus": "1 phase string; 2 conditions []core.NamespaceCondition",
    "core.NamespaceCondition": """
        1 type string!; 2 status string!; 4 lastTransitionTime Time; 5 reason string;
        6 message string
    """,
    "core.ConfigMap": """
        1 metadata meta.ObjectMeta; 4 immutable bool!; 2 data {}string; 3 binaryData {}bytes
    """,
    "core.Secret": """
        1 metadata meta.ObjectMeta; 5 immutable bool!; 2 data {}bytes; 4 stringData {}string;
        3 type string
    """,
    "core.ServiceAccount": """
        1 metadata meta.ObjectMeta; 2 secrets []core.ObjectReference;
        3 imagePullSecrets []core.LocalObjectReference; 4 automountServiceAccountToken bool!
    """,
    "core.Service": """
        1 metadata meta.ObjectMeta; 2 spec core.ServiceSpec; 3 status core.ServiceStatus
    """,
    "core.ResourceQuota": """
        1 metadata meta.ObjectMeta; 2 spec core.ResourceQuotaSpec; 3 status core.ResourceQuotaStatus
    """,
    "core.Pod": "1 metadata meta.ObjectMeta; 2 spec core.PodSpec; 3 status core.PodStatus",
    # --- core/v1: references and selectors -------------------------------------------------------
    "core.ObjectReference": """
        1 kind string; 2 namespace string; 3 name string; 4 uid string; 5 apiVersion string;
        6 resourceVersion string; 7 fieldPath string
    """,
    "core.LocalObjectReference": "1 name string",
    "core.TypedLocalObjectReference": "1 apiGroup string!; 2 kind string!; 3 name string!",
    "core.TypedObjectReference": """
        1 apiGroup string!; 2 kind string!; 3 name string!; 4 namespace string!
    """,
    "core.ObjectFieldSelector": "1 apiVersion string; 2 fieldPath string!",
    "core.ResourceFieldSelector": "1 containerName string; 2 resource string!; 3 divisor Quantity",
    "core.ConfigMapKeySelector": """
        1 localObjectReference core.LocalObjectReference^; 2 key string!; 3 optional bool!
    """,
    "core.SecretKeySelector": """
        1 localObjectReference core.LocalObjectReference^; 2 key string!; 3 optional bool!
    """,
    "core.FileKeySelector": """
        1 volumeName string!; 2 path string!; 3 key string!; 4 optional bool!
    """,
    # --- core/v1: Service and ResourceQuota ------------------------------------------------------
    "core.ServiceSpec": """
        1 ports []core.ServicePort; 2 selector {}string; 3 clusterIP string;
        18 clusterIPs []string; 4 type string; 5 externalIPs []string;
        7 sessionAffinity string; 8 loadBalancerIP string; 9 loadBalancerSourceRanges []string;
        10 externalName string; 11 externalTrafficPolicy string; 12 healthCheckNodePort int32;
        13 publishNotReadyAddresses bool; 14 sessionAffinityConfig core.SessionAffinityConfig;
        19 ipFamilies []string; 17 ipFamilyPolicy string!;
        20 allocateLoadBalancerNodePorts bool!; 21 loadBalancerClass string!;
        22 internalTrafficPolicy string!
    """,
    "core.ServicePort": """
        1 name string; 2 protocol string; 6 appProtocol string!; 3 port int32!;
        4 targetPort IntOrString; 5 nodePort int32
    """,
    "core.SessionAffinityConfig": "1 clientIP core.ClientIPConfig",
    "core.ClientIPConfig": "1 timeoutSeconds int32!",
    "core.ServiceStatus": "1 loadBalancer core.LoadBalancerStatus; 2 conditions []meta.Condition",
    "core.LoadBalancerStatus": "1 ingress []core.LoadBalancerIngress",
    "core.LoadBalancerIngress": "1 ip string; 2 hostname string; 4 ports []core.PortStatus",
    "core.PortStatus": "1 port int32!; 2 protocol string!; 3 error string!",
    "core.ResourceQuotaSpec": """
        1 hard {}Quantity; 2 scopes []string; 3 scopeSelector core.ScopeSelector
    """,
    "core.ScopeSelector": "1 matchExpressions []core.ScopedResourceSelectorRequirement",
    "core.ScopedResourceSelectorRequirement": """
        1 scopeName string!; 2 operator string!; 3 values []string
    """,
    "core.ResourceQuotaStatus": "1 hard {}Quantity; 2 used {}Quantity",
    # --- core/v1: pods ---------------------------------------------------------------------------
    "core.PodTemplateSpec": "1 metadata meta.ObjectMeta; 2 spec core.PodSpec",
    "core.PodSpec": """
        1 volumes []core.Volume; 20 initContainers []core.Container;
        2 containers []core.Container?; 34 ephemeralContainers []core.EphemeralContainer;
        3 restartPolicy string; 4 terminationGracePeriodSeconds int64!;
        5 activeDeadlineSeconds int64!; 6 dnsPolicy string; 7 nodeSelector {}string;
        8 serviceAccountName string; 9 serviceAccount string;
        21 automountServiceAccountToken bool!; 10 nodeName string; 11 hostNetwork bool;
        12 hostPID bool; 13 hostIPC bool; 27 shareProcessNamespace bool!;
        14 securityContext core.PodSecurityContext;
        15 imagePullSecrets []core.LocalObjectReference; 16 hostname string;
        17 subdomain string; 18 affinity core.Affinity; 19 schedulerName string;
        22 tolerations []core.Toleration; 23 hostAliases []core.HostAlias;
        24 priorityClassName string; 25 priority int32!; 26 dnsConfig core.PodDNSConfig;
        28 readinessGates []core.PodReadinessGate; 29 runtimeClassName string!;
        30 enableServiceLinks bool!; 31 preemptionPolicy string!; 32 overhead {}Quantity;
        33 topologySpreadConstraints []core.TopologySpreadConstraint;
        35 setHostnameAsFQDN bool!; 36 os core.PodOS; 37 hostUsers bool!;
        38 schedulingGates []core.PodSchedulingGate;
        39 resourceClaims []core.PodResourceClaim; 40 resources core.ResourceRequirements;
        41 hostnameOverride string!
    """,
    "core.PodStatus": """
        1 phase string; 2 conditions []core.PodCondition; 3 message string; 4 reason string;
        11 nominatedNodeName string; 5 hostIP string; 6 podIP string; 12 podIPs []core.PodIP;
        7 startTime Time; 9 qosClass string
    """,
    "core.PodCondition": _CONDITION,
    "core.PodIP": "1 ip string",
    "core.Container": _CONTAINER,
    "core.EphemeralContainer": """
        1 ephemeralContainerCommon core.EphemeralContainerCommon^;
        2 targetContainerName string
    """,
    "core.EphemeralContainerCommon": _CONTAINER,
    "core.ContainerPort": """
        1 name string; 2 hostPort int32; 3 containerPort int32!; 4 protocol string;
        5 hostIP string
    """,
    "core.ContainerResizePolicy": "1 resourceName string!; 2 restartPolicy string!",
    "core.ContainerRestartRule": """
        1 action string; 2 exitCodes core.ContainerRestartRuleOnExitCodes
    """,
    "core.ContainerRestartRuleOnExitCodes": "1 operator string; 2 values []int32",
    "core.EnvVar": "1 name string!; 2 value string; 3 valueFrom core.EnvVarSource",
    "core.EnvVarSource": """
        1 fieldRef core.ObjectFieldSelector; 2 resourceFieldRef core.ResourceFieldSelector;
        3 configMapKeyRef core.ConfigMapKeySelector; 4 secretKeyRef core.SecretKeySelector;
        5 fileKeyRef core.FileKeySelector
    """,
    "core.EnvFromSource": """
        1 prefix string; 2 configMapRef core.ConfigMapEnvSource; 3 secretRef core.SecretEnvSource
    """,
    "core.ConfigMapEnvSource": """
        1 localObjectReference core.LocalObjectReference^; 2 optional bool!
    """,
    "core.SecretEnvSource": "1 localObjectReference core.LocalObjectReference^; 2 optional bool!",
    "core.ResourceRequirements": """
        1 limits {}Quantity; 2 requests {}Quantity; 3 claims []core.ResourceClaim
    """,
    "core.ResourceClaim": "1 name string!; 2 request string",
    "core.VolumeMount": """
        1 name string!; 2 readOnly bool; 7 recursiveReadOnly string!; 3 mountPath string!;
        4 subPath string; 5 mountPropagation string!; 6 subPathExpr string
    """,
    "core.VolumeDevice": "1 name string!; 2 devicePath string!",
    "core.Probe": """
        1 handler core.ProbeHandler^; 2 initialDelaySeconds int32; 3 timeoutSeconds int32;
        4 periodSeconds int32; 5 successThreshold int32; 6 failureThreshold int32;
        7 terminationGracePeriodSeconds int64!
    """,
    "core.ProbeHandler": """
        1 exec core.ExecAction; 2 httpGet core.HTTPGetAction; 3 tcpSocket core.TCPSocketAction;
        4 grpc core.GRPCAction
    """,
    "core.ExecAction": "1 command []string",
    "core.HTTPGetAction": """
        1 path string; 2 port IntOrString!; 3 host string; 4 scheme string;
        5 httpHeaders []core.HTTPHeader
    """,
    "core.HTTPHeader": "1 name string!; 2 value string!",
    "core.TCPSocketAction": "1 port IntOrString!; 2 host string",
    "core.GRPCAction": "1 port int32!; 2 service string!?",
    "core.Lifecycle": """
        1 postStart core.LifecycleHandler; 2 preStop core.LifecycleHandler; 3 stopSignal string!
    """,
    "core.LifecycleHandler": """
        1 exec core.ExecAction; 2 httpGet core.HTTPGetAction; 3 tcpSocket core.TCPSocketAction;
        4 sleep core.SleepAction
    """,
    "core.SleepAction": "1 seconds int64!",
    "core.SecurityContext": """
        1 capabilities core.Capabilities; 2 privileged bool!;
        3 seLinuxOptions core.SELinuxOptions;
        10 windowsOptions core.WindowsSecurityContextOptions; 4 runAsUser int64!;
        8 runAsGroup int64!; 5 runAsNonRoot bool!; 6 readOnlyRootFilesystem bool!;
        7 allowPrivilegeEscalation bool!; 9 procMount string!;
        11 seccompProfile core.SeccompProfile; 12 appArmorProfile core.AppArmorProfile
    """,
    "core.PodSecurityContext": """
        1 seLinuxOptions core.SELinuxOptions;
        8 windowsOptions core.WindowsSecurityContextOptions; 2 runAsUser int64!;
        6 runAsGroup int64!; 3 runAsNonRoot bool!; 4 supplementalGroups []int64;
        5 fsGroup int64!; 7 sysctls []core.Sysctl; 9 fsGroupChangePolicy string!;
        10 seccompProfile core.SeccompProfile; 11 appArmorProfile core.AppArmorProfile
    """,
    "core.Capabilities": "1 add []string; 2 drop []string",
    "core.SELinuxOptions": "1 user string; 2 role string; 3 type string; 4 level string",
    "core.WindowsSecurityContextOptions": """
        1 gmsaCredentialSpecName string!; 2 gmsaCredentialSpec string!;
        3 runAsUserName string!; 4 hostProcess bool!
    """,
    "core.SeccompProfile": "1 type string!; 2 localhostProfile string!",
    "core.AppArmorProfile": "1 type string!; 2 localhostProfile string!",
    "core.Sysctl": "1 name string!; 2 value string!",
    "core.Toleration": """
        1 key string; 2 operator string; 3 value string; 4 effect string;
        5 tolerationSeconds int64!
    """,
    "core.HostAlias": "1 ip string!; 2 hostnames []string",
    "core.PodDNSConfig": """
        1 nameservers []string; 2 searches []string; 3 options []core.PodDNSConfigOption
    """,
    "core.PodDNSConfigOption": "1 name string; 2 value string!",
    "core.PodReadinessGate": "1 conditionType string!",
    "core.PodOS": "1 name string!",
    "core.PodSchedulingGate": "1 name string!",
    "core.PodResourceClaim": """
        1 name string!; 3 resourceClaimName string!; 4 resourceClaimTemplateName string!
    """,
    "core.TopologySpreadConstraint": """
        1 maxSkew int32!; 2 topologyKey string!; 3 whenUnsatisfiable string!;
        4 labelSelector meta.LabelSelector; 5 minDomains int32!;
        6 nodeAffinityPolicy string!; 7 nodeTaintsPolicy string!; 8 matchLabelKeys []string
    """,
    # --- core/v1: affinity -----------------------------------------------------------------------
    "core.Affinity": """
        1 nodeAffinity core.NodeAffinity; 2 podAffinity core.PodAffinity;
        3 podAntiAffinity core.PodAntiAffinity
    """,
    "core.NodeAffinity": """
        1 requiredDuringSchedulingIgnoredDuringExecution core.NodeSelector;
        2 preferredDuringSchedulingIgnoredDuringExecution []core.PreferredSchedulingTerm
    """,
    "core.NodeSelector": "1 nodeSelectorTerms []core.NodeSelectorTerm?",
    "core.NodeSelectorTerm": """
        1 matchExpressions []core.NodeSelectorRequirement;
        2 matchFields []core.NodeSelectorRequirement
    """,
    "core.NodeSelectorRequirement": "1 key string!; 2 operator string!; 3 values []string",
    "core.PreferredSchedulingTerm": "1 weight int32!; 2 preference core.NodeSelectorTerm",
    "core.PodAffinity": """
        1 requiredDuringSchedulingIgnoredDuringExecution []core.PodAffinityTerm;
        2 preferredDuringSchedulingIgnoredDuringExecution []core.WeightedPodAffinityTerm
    """,
    "core.PodAntiAffinity": """
        1 requiredDuringSchedulingIgnoredDuringExecution []core.PodAffinityTerm;
        2 preferredDuringSchedulingIgnoredDuringExecution []core.WeightedPodAffinityTerm
    """,
    "core.PodAffinityTerm": """
        1 labelSelector meta.LabelSelector; 2 namespaces []string; 3 topologyKey string!;
        4 namespaceSelector meta.LabelSelector
    """,
    "core.WeightedPodAffinityTerm": "1 weight int32!; 2 podAffinityTerm core.PodAffinityTerm",
    # --- core/v1: volumes ------------------------------------------------------------------------
    "core.Volume": "1 name string!; 2 volumeSource core.VolumeSource^",
    "core.VolumeSource": """
        1 hostPath core.HostPathVolumeSource; 2 emptyDir core.EmptyDirVolumeSource;
        6 secret core.SecretVolumeSource; 7 nfs core.NFSVolumeSource;
        10 persistentVolumeClaim core.PersistentVolumeClaimVolumeSource;
        16 downwardAPI core.DownwardAPIVolumeSource; 19 configMap core.ConfigMapVolumeSource;
        26 projected core.ProjectedVolumeSource; 28 csi core.CSIVolumeSource;
        29 ephemeral core.EphemeralVolumeSource
    """,
    "core.HostPathVolumeSource": "1 path string!; 2 type string!",
    "core.EmptyDirVolumeSource": "1 medium string; 2 sizeLimit Quantity",
    "core.SecretVolumeSource": """
        1 secretName string; 2 items []core.KeyToPath; 3 defaultMode int32!; 4 optional bool!
    """,
    "core.ConfigMapVolumeSource": """
        1 localObjectReference core.LocalObjectReference^; 2 items []core.KeyToPath;
        3 defaultMode int32!; 4 optional bool!
    """,
    "core.KeyToPath": "1 key string!; 2 path string!; 3 mode int32!",
    "core.NFSVolumeSource": "1 server string!; 2 path string!; 3 readOnly bool",
    "core.PersistentVolumeClaimVolumeSource": "1 claimName string!; 2 readOnly bool",
    "core.DownwardAPIVolumeSource": "1 items []core.DownwardAPIVolumeFile; 2 defaultMode int32!",
    "core.DownwardAPIVolumeFile": """
        1 path string!; 2 fieldRef core.ObjectFieldSelector;
        3 resourceFieldRef core.ResourceFieldSelector; 4 mode int32!
    """,
    "core.ProjectedVolumeSource": "1 sources []core.VolumeProjection; 2 defaultMode int32!",
    "core.VolumeProjection": """
        1 secret core.SecretProjection; 2 downwardAPI core.DownwardAPIProjection;
        3 configMap core.ConfigMapProjection;
        4 serviceAccountToken core.ServiceAccountTokenProjection
    """,
    "core.SecretProjection": """
        1 localObjectReference core.LocalObjectReference^; 2 items []core.KeyToPath;
        4 optional bool!
    """,
    "core.ConfigMapProjection": """
        1 localObjectReference core.LocalObjectReference^; 2 items []core.KeyToPath;
        4 optional bool!
    """,
    "core.DownwardAPIProjection": "1 items []core.DownwardAPIVolumeFile",
    "core.ServiceAccountTokenProjection": """
        1 audience string; 2 expirationSeconds int64!; 3 path string!
    """,
    "core.CSIVolumeSource": """
        1 driver string!; 2 readOnly bool!; 3 fsType string!; 4 volumeAttributes {}string;
        5 nodePublishSecretRef core.LocalObjectReference
    """,
    "core.EphemeralVolumeSource": "1 volumeClaimTemplate core.PersistentVolumeClaimTemplate",
    "core.PersistentVolumeClaimTemplate": """
        1 metadata meta.ObjectMeta; 2 spec core.PersistentVolumeClaimSpec
    """,
    "core.PersistentVolumeClaimSpec": """
        1 accessModes []string; 4 selector meta.LabelSelector;
        2 resources core.VolumeResourceRequirements; 3 volumeName string;
        5 storageClassName string!; 6 volumeMode string!;
        7 dataSource core.TypedLocalObjectReference; 8 dataSourceRef core.TypedObjectReference
    """,
    "core.VolumeResourceRequirements": "1 limits {}Quantity; 2 requests {}Quantity",
    # --- k8s.io/api/apps/v1 ----------------------------------------------------------------------
    "apps.Deployment": """
        1 metadata meta.ObjectMeta; 2 spec apps.DeploymentSpec; 3 status apps.DeploymentStatus
    """,
    "apps.DeploymentSpec": """
        1 replicas int32!; 2 selector meta.LabelSelector?; 3 template core.PodTemplateSpec;
        4 strategy apps.DeploymentStrategy; 5 minReadySeconds int32;
        6 revisionHistoryLimit int32!; 7 paused bool; 9 progressDeadlineSeconds int32!
    """,
    "apps.DeploymentStrategy": "1 type string; 2 rollingUpdate apps.RollingUpdateDeployment",
    "apps.RollingUpdateDeployment": "1 maxUnavailable IntOrString; 2 maxSurge IntOrString",
    "apps.DeploymentStatus": """
        1 observedGeneration int64; 2 replicas int32; 3 updatedReplicas int32;
        7 readyReplicas int32; 4 availableReplicas int32; 5 unavailableReplicas int32;
        6 conditions []apps.DeploymentCondition; 8 collisionCount int32!
    """,
    "apps.DeploymentCondition": """
        1 type string!; 2 status string!; 6 lastUpdateTime Time; 7 lastTransitionTime Time;
        4 reason string; 5 message string
    """,
    # --- k8s.io/api/batch/v1 ---------------------------------------------------------------------
    "batch.Job": "1 metadata meta.ObjectMeta; 2 spec batch.JobSpec; 3 status batch.JobStatus",
    "batch.JobSpec": """
        1 parallelism int32!; 2 completions int32!; 3 activeDeadlineSeconds int64!;
        11 podFailurePolicy batch.PodFailurePolicy; 16 successPolicy batch.SuccessPolicy;
        7 backoffLimit int32!; 12 backoffLimitPerIndex int32!; 13 maxFailedIndexes int32!;
        4 selector meta.LabelSelector; 5 manualSelector bool!;
        6 template core.PodTemplateSpec; 8 ttlSecondsAfterFinished int32!;
        9 completionMode string!; 10 suspend bool!; 14 podReplacementPolicy string!;
        15 managedBy string!
    """,
    "batch.PodFailurePolicy": "1 rules []batch.PodFailurePolicyRule?",
    "batch.PodFailurePolicyRule": """
        1 action string!; 2 onExitCodes batch.PodFailurePolicyOnExitCodesRequirement?;
        3 onPodConditions []batch.PodFailurePolicyOnPodConditionsPattern?
    """,
    "batch.PodFailurePolicyOnExitCodesRequirement": """
        1 containerName string!?; 2 operator string!; 3 values []int32?
    """,
    "batch.PodFailurePolicyOnPodConditionsPattern": "1 type string!; 2 status string!",
    "batch.SuccessPolicy": "1 rules []batch.SuccessPolicyRule?",
    "batch.SuccessPolicyRule": "1 succeededIndexes string!; 2 succeededCount int32!",
    "batch.JobStatus": """
        1 conditions []batch.JobCondition; 2 startTime Time; 3 completionTime Time;
        4 active int32; 5 succeeded int32; 6 failed int32; 11 terminating int32!;
        7 completedIndexes string; 10 failedIndexes string!;
        8 uncountedTerminatedPods batch.UncountedTerminatedPods; 9 ready int32!
    """,
    "batch.JobCondition": _CONDITION,
    "batch.UncountedTerminatedPods": "1 succeeded []string; 2 failed []string",
    "batch.CronJob": """
        1 metadata meta.ObjectMeta; 2 spec batch.CronJobSpec; 3 status batch.CronJobStatus
    """,
    "batch.CronJobSpec": """
        1 schedule string!; 8 timeZone string!; 2 startingDeadlineSeconds int64!;
        3 concurrencyPolicy string; 4 suspend bool!; 5 jobTemplate batch.JobTemplateSpec;
        6 successfulJobsHistoryLimit int32!; 7 failedJobsHistoryLimit int32!
    """,
    "batch.JobTemplateSpec": "1 metadata meta.ObjectMeta; 2 spec batch.JobSpec",
    "batch.CronJobStatus": """
        1 active []core.ObjectReference; 4 lastScheduleTime Time; 5 lastSuccessfulTime Time
    """,
    # --- k8s.io/api/networking/v1 ----------------------------------------------------------------
    "networking.Ingress": """
        1 metadata meta.ObjectMeta; 2 spec networking.IngressSpec;
        3 status networking.IngressStatus
    """,
    "networking.IngressSpec": """
        4 ingressClassName string!; 1 defaultBackend networking.IngressBackend;
        2 tls []networking.IngressTLS; 3 rules []networking.IngressRule
    """,
    "networking.IngressBackend": """
        4 service networking.IngressServiceBackend; 3 resource core.TypedLocalObjectReference
    """,
    "networking.IngressServiceBackend": "1 name string!; 2 port networking.ServiceBackendPort",
    "networking.ServiceBackendPort": "1 name string; 2 number int32",
    "networking.IngressTLS": "1 hosts []string; 2 secretName string",
    "networking.IngressRule": """
        1 host string; 2 ingressRuleValue networking.IngressRuleValue^
    """,
    "networking.IngressRuleValue": "1 http networking.HTTPIngressRuleValue",
    "networking.HTTPIngressRuleValue": "1 paths []networking.HTTPIngressPath?",
    "networking.HTTPIngressPath": """
        1 path string; 3 pathType string!?; 2 backend networking.IngressBackend
    """,
    "networking.IngressStatus": "1 loadBalancer networking.IngressLoadBalancerStatus",
    "networking.IngressLoadBalancerStatus": "1 ingress []networking.IngressLoadBalancerIngress",
    "networking.IngressLoadBalancerIngress": """
        1 ip string; 2 hostname string; 4 ports []networking.IngressPortStatus
    """,
    "networking.IngressPortStatus": "1 port int32!; 2 protocol string!; 3 error string!",
    # --- k8s.io/api/rbac/v1 ----------------------------------------------------------------------
    "rbac.Role": "1 metadata meta.ObjectMeta; 2 rules []rbac.PolicyRule?",
    "rbac.ClusterRole": """
        1 metadata meta.ObjectMeta; 2 rules []rbac.PolicyRule?;
        3 aggregationRule rbac.AggregationRule
    """,
    "rbac.AggregationRule": "1 clusterRoleSelectors []meta.LabelSelector",
    "rbac.PolicyRule": """
        1 verbs []string?; 2 apiGroups []string; 3 resources []string;
        4 resourceNames []string; 5 nonResourceURLs []string
    """,
    "rbac.RoleBinding": """
        1 metadata meta.ObjectMeta; 2 subjects []rbac.Subject; 3 roleRef rbac.RoleRef
    """,
    "rbac.ClusterRoleBinding": """
        1 metadata meta.ObjectMeta; 2 subjects []rbac.Subject; 3 roleRef rbac.RoleRef
    """,
    "rbac.RoleRef": "1 apiGroup string!; 2 kind string!; 3 name string!",
    "rbac.Subject": "1 kind string!; 2 apiGroup string; 3 name string!; 4 namespace string",
    # --- k8s.io/api/authentication/v1 and authorization/v1 (create token, auth can-i) ------------
    "authentication.TokenRequest": """
        1 metadata meta.ObjectMeta; 2 spec authentication.TokenRequestSpec;
        3 status authentication.TokenRequestStatus
    """,
    "authentication.TokenRequestStatus": "1 token string!; 2 expirationTimestamp Time",
    # kubectl certificate approve|deny (spec.extra, a map of ExtraValue, is not decoded).
    "certificates.CertificateSigningRequest": """
        1 metadata meta.ObjectMeta; 2 spec certificates.CertificateSigningRequestSpec;
        3 status certificates.CertificateSigningRequestStatus
    """,
    "certificates.CertificateSigningRequestSpec": """
        1 request bytes?; 7 signerName string!; 8 expirationSeconds int32!; 5 usages []string;
        2 username string; 3 uid string; 4 groups []string
    """,
    "certificates.CertificateSigningRequestStatus": """
        1 conditions []certificates.CertificateSigningRequestCondition; 2 certificate bytes
    """,
    "certificates.CertificateSigningRequestCondition": """
        1 type string!; 6 status string!; 2 reason string; 3 message string;
        4 lastUpdateTime Time; 5 lastTransitionTime Time
    """,
    "authentication.TokenRequestSpec": """
        1 audiences []string?; 4 expirationSeconds int64; 3 boundObjectRef
        authentication.BoundObjectReference
    """,
    "authentication.BoundObjectReference": """
        1 kind string; 2 apiVersion string; 3 name string; 4 uid string
    """,
    "authorization.SelfSubjectAccessReview": """
        1 metadata meta.ObjectMeta; 2 spec authorization.SelfSubjectAccessReviewSpec;
        3 status authorization.SubjectAccessReviewStatus
    """,
    "authorization.SubjectAccessReviewStatus": """
        1 allowed bool!; 4 denied bool; 2 reason string; 3 evaluationError string
    """,
    "authorization.SelfSubjectAccessReviewSpec": """
        1 resourceAttributes authorization.ResourceAttributes;
        2 nonResourceAttributes authorization.NonResourceAttributes
    """,
    "authorization.ResourceAttributes": """
        1 namespace string; 2 verb string; 3 group string; 4 version string;
        5 resource string; 6 subresource string; 7 name string
    """,
    "authorization.NonResourceAttributes": "1 path string; 2 verb string",
    "authorization.SelfSubjectRulesReview": """
        1 metadata meta.ObjectMeta; 2 spec authorization.SelfSubjectRulesReviewSpec;
        3 status authorization.SubjectRulesReviewStatus
    """,
    "authorization.SubjectRulesReviewStatus": "3 incomplete bool!; 4 evaluationError string",
    "authorization.SelfSubjectRulesReviewSpec": "1 namespace string",
    # --- k8s.io/api/policy/v1 --------------------------------------------------------------------
    "policy.PodDisruptionBudget": """
        1 metadata meta.ObjectMeta; 2 spec policy.PodDisruptionBudgetSpec;
        3 status policy.PodDisruptionBudgetStatus
    """,
    "policy.PodDisruptionBudgetSpec": """
        1 minAvailable IntOrString; 2 selector meta.LabelSelector;
        3 maxUnavailable IntOrString; 4 unhealthyPodEvictionPolicy string!
    """,
    "policy.PodDisruptionBudgetStatus": """
        1 observedGeneration int64; 2 disruptedPods {}Time; 3 disruptionsAllowed int32!;
        4 currentHealthy int32!; 5 desiredHealthy int32!; 6 expectedPods int32!;
        7 conditions []meta.Condition
    """,
    "policy.Eviction": "1 metadata meta.ObjectMeta; 2 deleteOptions meta.DeleteOptions",
    # --- k8s.io/api/scheduling/v1 ----------------------------------------------------------------
    "scheduling.PriorityClass": """
        1 metadata meta.ObjectMeta; 2 value int32!; 3 globalDefault bool;
        4 description string; 5 preemptionPolicy string!
    """,
}

MESSAGES: dict[str, Message] = parse_table(TABLE)

#: The message of each (apiVersion, kind) this server decodes from protobuf.
KINDS: dict[tuple[str, str], str] = {
    ("v1", "Namespace"): "core.Namespace",
    ("v1", "ConfigMap"): "core.ConfigMap",
    ("v1", "Secret"): "core.Secret",
    ("v1", "ServiceAccount"): "core.ServiceAccount",
    ("v1", "Service"): "core.Service",
    ("v1", "ResourceQuota"): "core.ResourceQuota",
    ("v1", "Pod"): "core.Pod",
    ("apps/v1", "Deployment"): "apps.Deployment",
    ("batch/v1", "Job"): "batch.Job",
    ("batch/v1", "CronJob"): "batch.CronJob",
    ("networking.k8s.io/v1", "Ingress"): "networking.Ingress",
    ("rbac.authorization.k8s.io/v1", "Role"): "rbac.Role",
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): "rbac.RoleBinding",
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): "rbac.ClusterRole",
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): "rbac.ClusterRoleBinding",
    ("authentication.k8s.io/v1", "TokenRequest"): "authentication.TokenRequest",
    ("certificates.k8s.io/v1", "CertificateSigningRequest"):
        "certificates.CertificateSigningRequest",
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview"):
        "authorization.SelfSubjectAccessReview",
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview"): "authorization.SelfSubjectRulesReview",
    ("policy/v1", "PodDisruptionBudget"): "policy.PodDisruptionBudget",
    ("policy/v1", "Eviction"): "policy.Eviction",
    ("scheduling.k8s.io/v1", "PriorityClass"): "scheduling.PriorityClass",
}

#: Kinds decoded whatever apiVersion the envelope names (options types every group registers).
ANY_VERSION_KINDS: dict[str, str] = {"DeleteOptions": "meta.DeleteOptions"}
