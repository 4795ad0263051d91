"""The operator process, the composition root: flags -> settings -> manager -> controllers.

Start-up: parse and check the flags (exit 2 on a bad one), configure logging, connect, serve
the probes (/readyz false until the controllers are registered), wait for the nvidia.com CRDs
and read which optional APIs the cluster serves, retrying transient errors (`startup`; exit 1
on refused credentials, CRDs still missing after `--crd-wait`, or a flag forcing a missing API),
register every controller of `registry.REGISTRATIONS` on one manager (leaving out, with one
error line each, those that need an API version the cluster does not serve), and run it until
SIGTERM/SIGINT (exit 0 after a clean stop: workers finish, the lease is released) or until the
lease is lost (exit 1, so the pod restarts as a candidate). The namespace mode wraps the run
(`namespace_scope`): restricted, the namespace-scope marker Lease is claimed first and its
loss is an exit 1 too; cluster-wide, claimed and ephemeral namespaces are skipped.
"""

from __future__ import annotations

import asyncio
import gc
import os
from collections.abc import Sequence

import aiohttp
import structlog

from backends.settings import OperatorSettings
from controller.client import ClientConfig
from controller.controller import CacheSyncTimeout
from controller.errors import ApiError
from controller.http import HttpClient
from controller.leader_election import LeaderElectionConfig
from controller.log_config import configure_logging
from controller.manager import LeadershipLost, Manager, ManagerConfig
from controller.signals import stop_on_signals
from reconcilers.machinery.context import OperatorContext
from reconcilers.operator.api_discovery import (
    DRA,
    GROVE,
    INFERENCE_POOL,
    ISTIO,
    KAI,
    LWS,
    SERVED_SINCE,
    VOLCANO,
    MissingApi,
    ServedApis,
    resolve,
    unserved,
)
from reconcilers.operator.api_discovery import served_apis as read_served_apis
from reconcilers.operator.flags import OperatorOptions, parse_options
from reconcilers.operator.metrics import OperatorMetrics, instrument_controllers
from reconcilers.operator.namespace_lease import MarkerLeaseConfig, NamespaceScopeLost
from reconcilers.operator.namespace_scope import NamespaceScope
from reconcilers.operator.registry import (
    REGISTRATIONS,
    cache_label_selectors,
    cache_transforms,
)
from reconcilers.operator.startup import CannotStart, wait_for_crds, with_retries
from reconcilers.operator.version import OPERATOR_NAME, VERSION
from reconcilers.operator.webhook_setup import WebhookSettings, set_up_webhooks

log = structlog.get_logger("reconcilers.operator")


def user_agent() -> str:
    """`dynamo-operator/<version> (<pod>)`: the pod name tells replicas apart in audit logs."""
    pod = os.environ.get("POD_NAME") or os.environ.get("HOSTNAME") or "unknown"
    return f"{OPERATOR_NAME}/{VERSION} ({pod})"


def client_config(qps: float | None = None, burst: int = ClientConfig.burst) -> ClientConfig:
    """The operator's client: its own user agent and field manager on the runtime's client."""
    return ClientConfig(qps=qps, burst=burst, user_agent=user_agent(),
                        field_manager=OPERATOR_NAME)


def manager_config(options: OperatorOptions) -> ManagerConfig:
    """The runtime's configuration from the flags."""
    election = None
    if options.leader_elect:
        election = LeaderElectionConfig(
            name=options.leader_election_id, namespace=options.leader_election_namespace,
            lease_duration=options.lease_duration, renew_deadline=options.renew_deadline,
            retry_period=options.retry_period)
    return ManagerConfig(
        kubeconfig=options.kubeconfig, context=options.kube_context,
        client=client_config(qps=options.kube_api_qps or None, burst=options.kube_api_burst),
        namespace=options.restricted_namespace,
        status_host=options.health_probe_address.host or "0.0.0.0",
        status_port=options.health_probe_address.port,
        metrics_host=(options.metrics_address.host if options.metrics_address else "") or "0.0.0.0",
        metrics_port=options.metrics_address.port if options.metrics_address else None,
        metrics_enabled=options.metrics_address is not None,
        metrics_secure=options.metrics_secure and options.metrics_address is not None,
        metrics_cert_dir=options.metrics_cert_path,
        by_object=cache_transforms(), label_selectors=cache_label_selectors(),
        leader_election=election)


def marker_lease(options: OperatorOptions) -> MarkerLeaseConfig | None:
    """The namespace-scope marker Lease of restricted mode; None when cluster-wide."""
    if not options.restricted_namespace:
        return None
    return MarkerLeaseConfig(namespace=options.restricted_namespace,
                             operator_version=options.operator_version,
                             duration=options.namespace_scope_lease_duration,
                             renew_interval=options.namespace_scope_lease_renew_interval)


def webhook_settings(options: OperatorOptions) -> WebhookSettings:
    """The webhook server's settings from the flags; its Secret lives in the operator's own
    namespace (the lease's), or the restricted one, or default."""
    return WebhookSettings(
        port=options.webhook_port, cert_dir=options.webhook_cert_dir, url=options.webhook_url,
        namespace=(options.leader_election_namespace or options.restricted_namespace
                   or "default"),
        service_name=options.webhook_service_name, secret_name=options.webhook_secret_name,
        configuration_name=options.webhook_configuration_name,
        mutating_configuration_name=options.mutating_webhook_configuration_name,
        cert_validity=options.webhook_cert_validity,
        restricted_namespace=options.restricted_namespace)


def operator_settings(options: OperatorOptions, apis: ServedApis) -> OperatorSettings:
    """What the builders need, with the optional APIs decided; MissingApi when a flag asks
    for one the cluster does not serve."""
    gateway = options.istio_virtual_service_gateway
    if gateway and not apis.serves(ISTIO):
        raise MissingApi(f"--istio-virtual-service-gateway={gateway} but the API server does "
                         f"not serve {ISTIO}")
    return OperatorSettings(
        nats_address=options.nats_address, etcd_address=options.etcd_address,
        model_express_url=options.model_express_url,
        prometheus_endpoint=options.prometheus_endpoint,
        discovery_backend=options.discovery_backend,
        mpi_run_secret_name=options.mpi_run_ssh_secret_name,
        mpi_run_secret_namespace=options.mpi_run_ssh_secret_namespace,
        inference_pool_enabled=apis.serves(INFERENCE_POOL),
        dra_enabled=apis.serves_version(DRA),
        grove_enabled=resolve(options.grove, "grove", GROVE, apis),
        lws_enabled=resolve(options.lws, "lws", LWS, apis),
        volcano_enabled=resolve(options.volcano, "volcano", VOLCANO, apis),
        kai_scheduler_enabled=resolve(options.kai_scheduler, "kai-scheduler", KAI, apis),
        grove_termination_delay_seconds=int(options.grove_termination_delay),
        virtual_service_gateway=gateway,
        ingress_controller_class_name=options.ingress_controller_class_name,
        ingress_controller_tls_secret_name=options.ingress_controller_tls_secret_name,
        ingress_host_suffix=options.ingress_host_suffix,
        dynamo_version=options.dynamo_version)


async def run(options: OperatorOptions) -> int:
    """Run the operator until stopped; the process exit status."""
    for flag in options.unsupported:
        log.warning("flag not supported, ignored", flag="--" + flag.replace("_", "-"))
    try:
        manager = await Manager.create(manager_config(options))
    except Exception as err:  # kubeconfig missing or unreadable: nothing to run against
        log.error("cannot load the cluster configuration", error=str(err))
        return 1
    started = asyncio.Event()  # /readyz stays false until every controller is registered
    manager.add_readiness_check(started.is_set)
    try:
        await manager.start_servers()
        await wait_for_crds(manager.client, options.crd_wait)
        apis = await with_retries(lambda: read_served_apis(manager.client), "api discovery")
        settings = operator_settings(options, apis)
    except (CannotStart, MissingApi) as err:
        log.error("cannot start", error=str(err))
        await _close(manager)
        return 1
    except (ApiError, aiohttp.ClientError, TimeoutError, OSError) as err:
        log.error("cannot start", error=str(err) or type(err).__name__)
        await _close(manager)
        return 1
    ctx = OperatorContext(
        client=manager.client, cache=manager.cache, settings=settings,
        namespace=options.restricted_namespace, workers=options.workers,
        default_workers=options.default_workers,
        planner_cluster_role_name=options.planner_cluster_role_name,
        dgdr_profiling_cluster_role_name=options.dgdr_profiling_cluster_role_name,
        epp_cluster_role_name=options.epp_cluster_role_name,
        http=HttpClient(user_agent()))
    scope = NamespaceScope(manager, marker_lease(options))
    for register in REGISTRATIONS:
        register(manager, ctx)
    try:
        await leave_out_unserved(manager)
    except (CannotStart, ApiError, aiohttp.ClientError, TimeoutError, OSError) as err:
        log.error("cannot start", error=str(err) or type(err).__name__)
        await ctx.http.close()
        await _close(manager)
        return 1
    operator_metrics = OperatorMetrics(manager.metrics.registry)
    instrument_controllers(manager, operator_metrics, scope.claimed)
    if options.enable_webhooks:
        await set_up_webhooks(manager, webhook_settings(options), scope.claimed,
                              operator_metrics=operator_metrics,
                              grove_enabled=settings.grove_enabled)
    started.set()
    stop_on_signals(manager.stop)
    log.info("starting operator", version=options.operator_version,
             namespace=options.restricted_namespace or "(all)",
             grove=settings.grove_enabled, lws=settings.lws_enabled,
             volcano=settings.volcano_enabled, inference_pool=settings.inference_pool_enabled,
             discovery=settings.discovery_backend,
             controllers=[c.name for c in manager.controllers])
    try:
        await scope.run()
    except LeadershipLost as err:
        log.error("leadership lost, exiting", error=str(err))
        return 1
    except NamespaceScopeLost as err:
        log.error("namespace scope lost, exiting", error=str(err))
        return 1
    except OSError as err:  # the webhook port is taken, say
        log.error("cannot serve, exiting", error=str(err))
        return 1
    except CacheSyncTimeout as err:
        log.error("cannot start", error=str(err))
        return 1
    finally:
        await ctx.http.close()
    return 0


async def leave_out_unserved(manager: Manager) -> None:
    """Name each API the controllers need that the cluster does not serve, once, and leave
    out the controllers that need it (and its informers): the rest run as usual."""
    resources = {informer.resource for informer in manager.cache.informers}
    missing = await with_retries(lambda: unserved(manager.client, resources), "api discovery")
    for resource in sorted(missing, key=str):
        needed_by = sorted(c.name for c in manager.controllers if resource in c.resources)
        since = SERVED_SINCE.get(resource.api_version)
        log.error("API not served by this cluster; controllers left out",
                  api=resource.api_version, resource=resource.plural, kind=resource.kind,
                  controllers=needed_by,
                  hint=f"Kubernetes {since} or newer serves {resource.api_version}"
                  if since else f"install the API that serves {resource.api_version}")
        manager.cache.discard(resource)
    if missing:
        manager.controllers[:] = [c for c in manager.controllers
                                  if not set(c.resources) & set(missing)]


async def _close(manager: Manager) -> None:
    """Undo a start that ends before the manager runs."""
    await manager.stop_servers()
    await manager.client.close()


#: The collector's thresholds. Python's first (700 container objects allocated more than freed)
#: suits programs that allocate little; the operator allocates tens of thousands of containers
#: per second, decoding watch events and building desired objects, nearly all freed at once by
#: reference counting. At 700 it ran a young collection every few events and spent 6.5% of
#: its CPU collecting at 1,000 graphs (8.8% at 5,000); at 20,000 it collects a twelfth as
#: often, for about 1% (`hack/bench/graphs`, README). What lingers between collections is
#: cyclic garbage only, a few MiB at most.
GC_THRESHOLDS = (20_000, 10, 10)


def main(argv: Sequence[str]) -> int:
    """`dynamo-operator [FLAGS]`: the process exit status."""
    try:
        options = parse_options(argv)
    except SystemExit as done:  # --help (0) or a bad flag (2), message already printed
        return done.code if isinstance(done.code, int) else 2
    configure_logging(options.log_level, options.log_format)
    # Everything imported so far lives as long as the process: out of the collector's reach,
    # a full collection walks only what the run allocates (the caches), and pauses the event
    # loop for about half as long. Nothing allocated later is frozen: a cycle of garbage
    # there must stay collectable.
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        return asyncio.run(run(options))
    except KeyboardInterrupt:
        return 1
