"""The operator's command line: flags, their environment fallbacks, and their validation.

Every problem is reported before anything starts, naming the flag, with exit status 2 (as
argparse does for syntax errors). The original operator's camelCase spellings
(`--restrictedNamespace`, `--natsAddr`, `--etcdAddr`) are accepted as aliases, and boolean
flags take Go's `--flag`, `--flag=true|false` forms, so its Helm arguments keep working.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from backends import constants
from backends.settings import OperatorSettings
from controller.client import ClientConfig
from controller.leader_election import LeaderElectionConfig
from controller.log_config import FORMATS, LEVELS
from reconcilers.operator.version import VERSION

DEFAULT_LEASE = "dynamo-operator-leader"
SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
AUTO, ON, OFF = "auto", "true", "false"
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


@dataclass(frozen=True)
class Address:
    """A listen address; host "" means every interface."""

    host: str
    port: int


@dataclass
class OperatorOptions:
    """Everything the command line says, validated."""

    kubeconfig: Path | None = None
    kube_context: str | None = None
    #: No client-side limit by default, as controller-runtime since its PR #3119: the API
    #: server's Priority and Fairness protects it, and a 20 QPS limit kept 1,000 objects
    #: waiting 49 s for their writes (hack.bench.runtime). The flag restores a limit.
    kube_api_qps: float = 0.0
    kube_api_burst: int = ClientConfig.burst
    restricted_namespace: str | None = None
    leader_elect: bool = True
    leader_election_id: str = DEFAULT_LEASE
    leader_election_namespace: str = ""
    lease_duration: float = LeaderElectionConfig.lease_duration
    renew_deadline: float = LeaderElectionConfig.renew_deadline
    retry_period: float = LeaderElectionConfig.retry_period
    health_probe_address: Address = field(default_factory=lambda: Address("", 8081))
    #: None: metrics off (`--metrics-bind-address=0`, as controller-runtime has it).
    metrics_address: Address | None = field(default_factory=lambda: Address("", 8080))
    #: /metrics over HTTPS for callers the API server authorises (TokenReview and
    #: SubjectAccessReview), as the original serves it; False: plain HTTP, open, for local use.
    metrics_secure: bool = True
    #: tls.crt and tls.key for the secure /metrics (unset or absent: self-signed).
    metrics_cert_path: Path | None = None
    default_workers: int = 1
    workers: dict[str, int] = field(default_factory=dict)
    discovery_backend: str = OperatorSettings.discovery_backend
    nats_address: str = ""
    etcd_address: str = ""
    model_express_url: str = ""
    prometheus_endpoint: str = ""
    planner_cluster_role_name: str = ""
    epp_cluster_role_name: str = ""
    dgdr_profiling_cluster_role_name: str = ""
    mpi_run_ssh_secret_name: str = OperatorSettings.mpi_run_secret_name
    #: "" : the operator's own namespace when it runs in a pod, else each graph's namespace.
    mpi_run_ssh_secret_namespace: str = OperatorSettings.mpi_run_secret_namespace
    ingress_controller_class_name: str = ""
    ingress_controller_tls_secret_name: str = ""
    ingress_host_suffix: str = ""
    istio_virtual_service_gateway: str = ""
    grove_termination_delay: float = float(OperatorSettings.grove_termination_delay_seconds)
    #: auto (discovery decides), true or false, per optional API.
    grove: str = AUTO
    lws: str = AUTO
    volcano: str = AUTO
    kai_scheduler: str = AUTO
    log_level: str = "info"
    log_format: str = "json"
    operator_version: str = VERSION
    dynamo_version: str = OperatorSettings.dynamo_version
    #: The namespace-scope marker Lease of restricted mode (seconds).
    namespace_scope_lease_duration: float = 30.0
    namespace_scope_lease_renew_interval: float = 10.0
    #: How long start-up waits for the nvidia.com CRDs to be served before exiting (seconds).
    crd_wait: float = 60.0
    #: Admission webhooks (off: the controllers still validate and report in status).
    enable_webhooks: bool = False
    webhook_port: int = 9443
    webhook_cert_dir: Path = Path("/tmp/k8s-webhook-server/serving-certs")
    webhook_url: str = ""
    webhook_service_name: str = "dynamo-operator-webhook-service"
    webhook_secret_name: str = "dynamo-operator-webhook-server-cert"
    webhook_configuration_name: str = "dynamo-operator-validating"
    mutating_webhook_configuration_name: str = "dynamo-operator-mutating"
    webhook_cert_validity: float = 365 * 24 * 3600.0
    #: Flags of the original accepted for compatibility; set (true, or any value) they are
    #: logged as not supported.
    unsupported: list[str] = field(default_factory=list)


# --- value parsers (argparse `type=`): their ValueError names the flag -------------------------


def parse_bool(text: str) -> bool:
    """Go's strconv.ParseBool."""
    if text in ("1", "t", "T", "true", "TRUE", "True"):
        return True
    if text in ("0", "f", "F", "false", "FALSE", "False"):
        return False
    raise argparse.ArgumentTypeError(f"invalid boolean {text!r} (use true or false)")


_RELEASE = re.compile(r"(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})")


def parse_release(text: str) -> str:
    """A Dynamo release as MAJOR.MINOR.PATCH (no `v`, prerelease or leading zeros)."""
    if not _RELEASE.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"invalid release {text!r} (MAJOR.MINOR.PATCH, e.g. 1.4.0)")
    return text


def parse_duration(text: str) -> float:
    """Go's time.ParseDuration ("15m", "1h30m", "500ms", "0"), in seconds."""
    if text == "0":
        return 0.0
    pos, total = 0, 0.0
    for match in _DURATION_PART.finditer(text):
        if match.start() != pos:
            break
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    if pos != len(text) or not text:
        raise argparse.ArgumentTypeError(f"invalid duration {text!r} (e.g. 30s, 15m, 1h30m)")
    return total


def parse_address(text: str) -> Address:
    """A bind address "[host]:port"; ":8080" listens on every interface."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(f"invalid address {text!r} (use host:port or :port)")
    return Address(host.strip("[]"), int(port))


def parse_metrics_address(text: str) -> Address | None:
    """A bind address, or "0": no metrics server (":0" is still a free port)."""
    return None if text == "0" else parse_address(text)


def parse_tristate(text: str) -> str:
    value = text.lower()
    if value == AUTO:
        return AUTO
    return ON if parse_bool(value) else OFF


def parse_workers(text: str) -> tuple[str, int]:
    """"N" (every controller) or "controller=N"."""
    name, sep, count = text.rpartition("=")
    if not count.isdigit() or int(count) < 1 or (sep and not name):
        raise argparse.ArgumentTypeError(
            f"invalid value {text!r} (use a count of at least 1, or controller=count)")
    return name, int(count)


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if value < 0:
        raise argparse.ArgumentTypeError(f"invalid value {text!r} (a number >= 0)")
    return value


def _positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"invalid value {text!r} (an integer >= 1)")
    return int(text)


def _port(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"invalid port {text!r}")
    return int(text)


def _https_url(text: str) -> str:
    parts = urlsplit(text)
    if text and (parts.scheme != "https" or not parts.hostname):
        raise argparse.ArgumentTypeError(f"invalid URL {text!r} (e.g. https://127.0.0.1:9443)")
    return text


def _url(text: str) -> str:
    parts = urlsplit(text)
    if text and (not parts.scheme or not parts.netloc):
        raise argparse.ArgumentTypeError(f"invalid URL {text!r} (e.g. http://host:port)")
    return text


# --- the parser --------------------------------------------------------------------------------


def _bool_flag(parser: argparse._ActionsContainer, name: str, default: bool, help: str) -> None:
    parser.add_argument(name, type=parse_bool, nargs="?", const=True, default=default,
                        metavar="BOOL", help=help)


#: Every flag's default, from the dataclass: one source of truth.
_D = OperatorOptions()
#: Accepted, not used yet: the original's Helm chart passes them.
_UNUSED_VALUE_FLAGS: tuple[str, ...] = ()
_UNSUPPORTED_BOOL_FLAGS = ("--enable-http2",
                           "--virtual-service-supports-https")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="dynamo-operator", usage="%(prog)s [flags]   (or: %(prog)s render|convert -f FILE)",
        description="Kubernetes operator for NVIDIA Dynamo (nvidia.com/v1alpha1).",
        epilog="Subcommand: `dynamo-operator render -f FILE` prints the objects the operator "
               "would create, without a cluster.")
    cluster = p.add_argument_group("cluster access")
    cluster.add_argument("--kubeconfig", type=Path,
          help="kubeconfig file (default: $KUBECONFIG, then the in-cluster service account, "
               "then ~/.kube/config)")
    cluster.add_argument("--kube-context", help="kubeconfig context (default: the current one)")
    cluster.add_argument("--kube-api-qps", type=_positive_float, default=_D.kube_api_qps,
          help="client-side requests per second to the API server; 0 = no limit [%(default)g]")
    cluster.add_argument("--kube-api-burst", type=_positive_int, default=_D.kube_api_burst,
          help="client-side burst above the QPS [%(default)s]")
    cluster.add_argument("--restricted-namespace", "--restrictedNamespace",
          dest="restricted_namespace", default="",
          help="watch and reconcile only this namespace (default: cluster-wide)")
    cluster.add_argument("--crd-wait", type=parse_duration, default=_D.crd_wait,
          help="how long start-up waits for the nvidia.com CRDs before exiting [%(default)gs]")

    election = p.add_argument_group("leader election")
    _bool_flag(election, "--leader-elect", True,
               "run controllers only while holding the lease [true]")
    election.add_argument("--leader-election-id", default=_D.leader_election_id,
          help="name of the Lease [%(default)s]")
    election.add_argument("--leader-election-namespace", default="",
          help="namespace of the Lease (default: $POD_NAMESPACE, the in-cluster namespace, "
               "or the restricted namespace)")
    election.add_argument("--leader-election-lease-duration", type=parse_duration,
          default=_D.lease_duration, help="lease duration [%(default)gs]")
    election.add_argument("--leader-election-renew-deadline", type=parse_duration,
          default=_D.renew_deadline, help="renew deadline [%(default)gs]")
    election.add_argument("--leader-election-retry-period", type=parse_duration,
          default=_D.retry_period, help="retry period [%(default)gs]")

    servers = p.add_argument_group("servers")
    servers.add_argument("--health-probe-bind-address", type=parse_address,
          default=_D.health_probe_address, help="address of /healthz and /readyz [:8081]")
    servers.add_argument("--metrics-bind-address", type=parse_metrics_address,
          default=_D.metrics_address,
          help="address of /metrics; 0 turns metrics off [:8080]")
    _bool_flag(servers, "--metrics-secure", _D.metrics_secure,
               "serve /metrics over HTTPS to callers allowed to get the non-resource URL "
               "/metrics (TokenReview and SubjectAccessReview); false: plain HTTP, open to "
               "anyone who reaches the port [true]")
    servers.add_argument("--metrics-cert-path", type=Path, default=None,
          help="directory with tls.crt and tls.key for the secure /metrics [self-signed]")

    hooks = p.add_argument_group("admission webhooks")
    # None when not given: --webhook-url alone turns the webhooks on.
    hooks.add_argument("--enable-webhooks", type=parse_bool, nargs="?", const=True,
                       default=None, metavar="BOOL",
                       help="serve the validating webhooks of our kinds on every replica "
                            "[false; true when --webhook-url is given]")
    hooks.add_argument("--webhook-port", type=_port, default=_D.webhook_port,
          help="HTTPS port of the webhook server [%(default)s]")
    hooks.add_argument("--webhook-cert-dir", type=Path, default=_D.webhook_cert_dir,
          help="tls.crt/tls.key mounted here are used as is; without them the operator keeps "
               "its own CA and certificate in a Secret [%(default)s]")
    hooks.add_argument("--webhook-url", type=_https_url, default="",
          help="running outside the cluster: the API server calls URL plus each path; the "
               "operator creates and keeps the ValidatingWebhookConfiguration (turns the "
               "webhooks on)")
    hooks.add_argument("--webhook-service-name", default=_D.webhook_service_name,
          help="Service in front of the webhook server (names in its certificate) "
               "[%(default)s]")
    hooks.add_argument("--webhook-secret-name", default=_D.webhook_secret_name,
          help="Secret holding the self-managed certificate [%(default)s]")
    hooks.add_argument("--webhook-configuration-name", default=_D.webhook_configuration_name,
          help="ValidatingWebhookConfiguration whose caBundle the operator keeps "
               "[%(default)s]")
    hooks.add_argument("--mutating-webhook-configuration-name",
          default=_D.mutating_webhook_configuration_name,
          help="MutatingWebhookConfiguration (graphs' origin-version stamp) whose caBundle "
               "the operator keeps [%(default)s]")
    hooks.add_argument("--webhook-cert-validity", type=parse_duration,
          default=_D.webhook_cert_validity,
          help="validity of self-managed serving certificates, renewed at two thirds "
               "[%(default)gs]")

    work = p.add_argument_group("reconciling")
    work.add_argument("--max-concurrent-reconciles", type=parse_workers, action="append",
          default=[], metavar="[CONTROLLER=]N",
          help="workers per controller: N for all, CONTROLLER=N for one, CONTROLLER its kind "
               "in any case, e.g. DynamoGraphDeployment=4 (repeatable) [1]")

    infra = p.add_argument_group("Dynamo infrastructure (injected into pods)")
    infra.add_argument("--discovery-backend", choices=[constants.DISCOVERY_KUBERNETES,
                                                 constants.DISCOVERY_ETCD],
          default=_D.discovery_backend, help="service discovery [%(default)s]")
    infra.add_argument("--nats-address", "--natsAddr", dest="nats_address", default="",
          help="NATS server address")
    infra.add_argument("--etcd-address", "--etcdAddr", dest="etcd_address", default="",
          help="etcd endpoints, comma-separated (injected into pods; the DCD finalizer "
               "deletes etcd discovery keys through their v3 JSON gateway)")
    infra.add_argument("--model-express-url", type=_url, default="", help="model express URL")
    infra.add_argument("--prometheus-endpoint", type=_url, default="",
          help="Prometheus endpoint for planners")
    infra.add_argument("--planner-cluster-role-name", default="",
          help="ClusterRole bound to planner service accounts (cluster-wide mode)")
    infra.add_argument("--epp-cluster-role-name", default=OperatorOptions.epp_cluster_role_name,
          help="ClusterRole bound to EPP service accounts (cluster-wide mode)")
    infra.add_argument("--dgdr-profiling-cluster-role-name", default="",
          help="ClusterRole bound to DGDR profiling jobs' service account (cluster-wide mode;"
               " default: a Role of the request's namespace)")
    infra.add_argument("--mpi-run-ssh-secret-name", default=_D.mpi_run_ssh_secret_name,
          help="Secret with the SSH keys of multinode TRT-LLM pods [%(default)s]")
    infra.add_argument("--mpi-run-ssh-secret-namespace", default=_D.mpi_run_ssh_secret_namespace,
          help="namespace of that Secret, copied from there into the namespaces running "
               "multinode TRT-LLM (default: the operator's own namespace in a pod, else each "
               "graph's namespace holds its own)")

    exposure = p.add_argument_group("ingress defaults")
    exposure.add_argument("--ingress-controller-class-name", default="", help="IngressClass")
    exposure.add_argument("--ingress-controller-tls-secret-name", default="", help="TLS Secret")
    exposure.add_argument("--ingress-host-suffix", default="", help="host suffix [local]")
    exposure.add_argument("--istio-virtual-service-gateway", default="",
          help="Istio gateway; enables VirtualServices (needs networking.istio.io)")

    optional = p.add_argument_group(
        "optional APIs (auto: used when the API server serves them)")
    for flag, group in (("--grove", "grove.io"), ("--lws", "leaderworkerset.x-k8s.io"),
                        ("--volcano", "scheduling.volcano.sh"),
                        ("--kai-scheduler", "scheduling.run.ai")):
        optional.add_argument(flag, type=parse_tristate, default=AUTO, metavar="auto|true|false",
              help=f"use {group} [auto]")
    optional.add_argument("--grove-termination-delay", type=parse_duration,
          default=_D.grove_termination_delay,
          help="Grove gang termination delay in seconds [%(default)g]")

    logs = p.add_argument_group("logging")
    logs.add_argument("--log-level", choices=LEVELS, default=_D.log_level, help="[%(default)s]")
    logs.add_argument("--log-format", choices=FORMATS, default=_D.log_format,
                      help="[%(default)s]")
    scope = p.add_argument_group("namespace-restricted mode")
    scope.add_argument("--namespace-scope-lease-duration", type=parse_duration,
          default=_D.namespace_scope_lease_duration,
          help="how long the namespace-scope marker Lease claims the restricted namespace "
               "[%(default)gs]")
    scope.add_argument("--namespace-scope-lease-renew-interval", type=parse_duration,
          default=_D.namespace_scope_lease_renew_interval,
          help="how often the marker Lease is renewed [%(default)gs]")
    p.add_argument("--dynamo-version", type=parse_release, default=_D.dynamo_version,
                   help="the Dynamo release of default images, e.g. the profiler's "
                        "dynamo-planner:<version> (MAJOR.MINOR.PATCH) [%(default)s]")
    p.add_argument("--operator-version", default=_D.operator_version,
                   help="version reported in logs and in the marker Lease's holder [%(default)s]")

    compat = p.add_argument_group("accepted for compatibility with the original's arguments")
    for name in _UNSUPPORTED_BOOL_FLAGS:
        _bool_flag(compat, name, False, "not supported; logged when true")
    for name in _UNUSED_VALUE_FLAGS:
        compat.add_argument(name, default="", help="not used yet; logged when set")
    return p


def _dest(flag: str) -> str:
    return flag.removeprefix("--").replace("-", "_")


def _own_namespace() -> str:
    """The operator pod's namespace ("" outside a pod)."""
    if os.environ.get("POD_NAMESPACE"):
        return os.environ["POD_NAMESPACE"]
    try:
        return SERVICE_ACCOUNT_NAMESPACE.read_text().strip()
    except OSError:
        return ""


def _lease_namespace(given: str, restricted: str) -> str:
    if given:
        return given
    if os.environ.get("POD_NAMESPACE"):
        return os.environ["POD_NAMESPACE"]
    try:
        return SERVICE_ACCOUNT_NAMESPACE.read_text().strip()
    except OSError:
        return restricted


def parse_options(argv: Sequence[str]) -> OperatorOptions:
    """Options from a command line; exits with status 2 and a message naming the flag."""
    parser = build_parser()
    a = parser.parse_args(list(argv))
    workers = dict(a.max_concurrent_reconciles)
    default_workers = workers.pop("", 1)
    lease_namespace = _lease_namespace(a.leader_election_namespace, a.restricted_namespace)
    if a.leader_elect and not lease_namespace:
        parser.error("argument --leader-election-namespace: required when not running in a pod"
                     " (or set POD_NAMESPACE, or --leader-elect=false)")
    if a.leader_elect and not (a.leader_election_lease_duration
                               > a.leader_election_renew_deadline
                               > a.leader_election_retry_period * 1.2 > 0):
        parser.error("argument --leader-election-renew-deadline: need lease duration > renew "
                     "deadline > 1.2 x retry period > 0")
    if a.restricted_namespace and not (0 < a.namespace_scope_lease_renew_interval
                                       < a.namespace_scope_lease_duration):
        parser.error("argument --namespace-scope-lease-renew-interval: need 0 < renew interval"
                     " < --namespace-scope-lease-duration")
    if a.webhook_url and a.enable_webhooks is False:
        parser.error("argument --webhook-url: the API server would call webhooks this operator "
                     "does not serve; drop --enable-webhooks=false, or --webhook-url")
    return OperatorOptions(
        kubeconfig=a.kubeconfig, kube_context=a.kube_context,
        kube_api_qps=a.kube_api_qps, kube_api_burst=a.kube_api_burst,
        restricted_namespace=a.restricted_namespace or None,
        leader_elect=a.leader_elect, leader_election_id=a.leader_election_id,
        leader_election_namespace=lease_namespace,
        lease_duration=a.leader_election_lease_duration,
        renew_deadline=a.leader_election_renew_deadline,
        retry_period=a.leader_election_retry_period,
        health_probe_address=a.health_probe_bind_address,
        metrics_address=a.metrics_bind_address,
        metrics_secure=a.metrics_secure, metrics_cert_path=a.metrics_cert_path,
        default_workers=default_workers, workers=workers,
        discovery_backend=a.discovery_backend, nats_address=a.nats_address,
        etcd_address=a.etcd_address, model_express_url=a.model_express_url,
        prometheus_endpoint=a.prometheus_endpoint,
        planner_cluster_role_name=a.planner_cluster_role_name,
        dgdr_profiling_cluster_role_name=a.dgdr_profiling_cluster_role_name,
        epp_cluster_role_name=a.epp_cluster_role_name,
        mpi_run_ssh_secret_name=a.mpi_run_ssh_secret_name,
        mpi_run_ssh_secret_namespace=a.mpi_run_ssh_secret_namespace or _own_namespace(),
        ingress_controller_class_name=a.ingress_controller_class_name,
        ingress_controller_tls_secret_name=a.ingress_controller_tls_secret_name,
        ingress_host_suffix=a.ingress_host_suffix,
        istio_virtual_service_gateway=a.istio_virtual_service_gateway,
        grove_termination_delay=a.grove_termination_delay,
        grove=a.grove, lws=a.lws, volcano=a.volcano, kai_scheduler=a.kai_scheduler,
        log_level=a.log_level, log_format=a.log_format, operator_version=a.operator_version,
        dynamo_version=a.dynamo_version,
        enable_webhooks=bool(a.enable_webhooks or a.webhook_url),
        webhook_port=a.webhook_port,
        webhook_cert_dir=a.webhook_cert_dir, webhook_url=a.webhook_url,
        webhook_service_name=a.webhook_service_name, webhook_secret_name=a.webhook_secret_name,
        webhook_configuration_name=a.webhook_configuration_name,
        mutating_webhook_configuration_name=a.mutating_webhook_configuration_name,
        webhook_cert_validity=a.webhook_cert_validity,
        namespace_scope_lease_duration=a.namespace_scope_lease_duration,
        namespace_scope_lease_renew_interval=a.namespace_scope_lease_renew_interval,
        crd_wait=a.crd_wait,
        unsupported=[dest for dest in (_dest(f) for f in (*_UNSUPPORTED_BOOL_FLAGS,
                                                          *_UNUSED_VALUE_FLAGS))
                     if getattr(a, dest)],
    )
