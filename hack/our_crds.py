"""Our five CRDs installed for a test bed without the operator process, converted in-process.

The DGD, DCD and DGDR are stored as `v1beta1`: a `v1alpha1` write or read of them needs the
conversion webhook, on the local API server as on a real cluster. A test, benchmark or tool
that installs our CRDs without running the operator's webhook server gets one here: the
operator's own `/convert` (`controller.conversion_webhook.ConversionWebhook` with
`reconcilers.operator.conversion_setup.converter`, the handler the operator serves) on
127.0.0.1 with a CA of its own, and the CRDs' `spec.conversion.webhook.clientConfig` (url and
caBundle) pointing at it.

The webhook runs in a thread of its own, one per process, started at first use and kept until
the process exits: a test's cluster and event loop come and go, the webhook is there for each
of them, and its conversions never wait on (nor stall) the loop of the API server calling it.
"""

from __future__ import annotations

import asyncio
import base64
import datetime
import fnmatch
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from prometheus_client import CollectorRegistry

from api.v1alpha1 import GROUP
from controller.certificates import new_authority, serving_certificate
from controller.client import KubeClient
from controller.conversion_webhook import ConversionMetrics, ConversionWebhook
from controller.errors import ApiError
from controller.resource import Resource
from controller.webhook import TLSConfig, WebhookMetrics, WebhookServer
from reconcilers.operator.conversion_setup import CONVERSION_PATH, converter

Json = dict[str, Any]

__all__ = ["CRD_DIR", "InProcessConversion", "client_config", "install_our_crds", "our_crds",
           "our_crds_yaml",
           "shared_conversion", "with_conversion", "write_our_crds"]

ROOT = Path(__file__).resolve().parents[1]
CRD_DIR = ROOT / "deploy" / "crds"
CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions",
                "CustomResourceDefinition", namespaced=False)
_START_TIMEOUT = 30.0


class InProcessConversion:
    """The operator's conversion webhook on 127.0.0.1, in a daemon thread with its own loop."""

    def __init__(self) -> None:
        ca = new_authority("in-process-conversion-ca", datetime.timedelta(days=30))
        cert = serving_certificate(ca, ["localhost"], ["127.0.0.1"])
        self.ca_pem = ca.cert_pem
        self._tls = TLSConfig()
        self._tls.load(cert.cert_pem, cert.key_pem)
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self.port = 0
        self._thread = threading.Thread(target=self._serve, name="in-process-conversion",
                                        daemon=True)

    def start(self) -> None:
        """Serve, and return once the port is bound."""
        self._thread.start()
        if not self._ready.wait(_START_TIMEOUT):
            raise RuntimeError("the in-process conversion webhook did not start")
        if self._failure is not None:
            raise RuntimeError("the in-process conversion webhook failed to start") \
                from self._failure

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        registry = CollectorRegistry()
        webhook = ConversionWebhook(ConversionMetrics(registry))
        webhook.register(GROUP, converter)
        server = WebhookServer(self._tls, WebhookMetrics(registry), host="127.0.0.1", port=0)
        server.route(CONVERSION_PATH, webhook.handle)
        try:
            self._loop.run_until_complete(server.start())
            self.port = server.port
        except BaseException as err:  # reported to the thread that waits in start()
            self._failure = err
            self._ready.set()
            return
        self._ready.set()
        self._loop.run_forever()

    def client_config(self) -> Json:
        """The CRD's `spec.conversion.webhook.clientConfig` calling this webhook."""
        return {"url": f"https://127.0.0.1:{self.port}{CONVERSION_PATH}",
                "caBundle": base64.b64encode(self.ca_pem).decode()}


_shared: InProcessConversion | None = None
_shared_lock = threading.Lock()


def shared_conversion() -> InProcessConversion:
    """This process's in-process conversion webhook, started at the first call."""
    global _shared
    with _shared_lock:
        if _shared is None:
            hook = InProcessConversion()
            hook.start()
            _shared = hook
        return _shared


def client_config() -> Json:
    """The clientConfig of this process's in-process conversion webhook."""
    return shared_conversion().client_config()


def with_conversion(crd: Json, config: Json | None = None) -> Json:
    """`crd` (changed in place) converting through `config`, by default the in-process
    webhook's; CRDs of other groups, or without Webhook conversion, are returned unchanged."""
    conversion = crd.get("spec", {}).get("conversion") or {}
    if crd["spec"].get("group") != GROUP or conversion.get("strategy") != "Webhook":
        return crd
    webhook = conversion.setdefault("webhook", {})
    webhook["clientConfig"] = config if config is not None else client_config()
    return crd


def our_crds(pattern: str = "*.yaml", names: Iterable[str] = ()) -> list[Json]:
    """Our CRDs from deploy/crds (the files matching `pattern`, or the CRDs named
    `<plural>.nvidia.com` in `names`), converting through the in-process webhook."""
    wanted = set(names)
    crds = []
    for path in sorted(CRD_DIR.glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        if wanted and crd["metadata"]["name"] not in wanted:
            continue
        if not wanted and not fnmatch.fnmatch(path.name, pattern):
            continue
        crds.append(with_conversion(crd))
    return crds


async def install_our_crds(kube: KubeClient, pattern: str = "*.yaml",
                           names: Iterable[str] = (), *, wait: float = 30.0) -> list[str]:
    """Create our CRDs (as `our_crds` picks them) and wait until each is Established; the
    names of the CRDs created."""
    created = []
    for crd in our_crds(pattern, names):
        await kube.create(CRDS, crd)
        created.append(crd["metadata"]["name"])
    deadline = time.monotonic() + wait
    for name in created:
        while not await _established(kube, name):
            if time.monotonic() > deadline:
                raise TimeoutError(f"CRD {name} not Established after {wait}s")
            await asyncio.sleep(0.02)
    return created


async def _established(kube: KubeClient, name: str) -> bool:
    try:
        crd = await kube.get(CRDS, None, name)
    except ApiError:
        return False
    return any(c.get("type") == "Established" and c.get("status") == "True"
               for c in (crd.get("status") or {}).get("conditions") or [])


def write_our_crds(directory: Path) -> Path:
    """Our CRDs, converting through the in-process webhook, written as YAML files into
    `directory` (for `kubectl apply -f`); returns `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    for crd in our_crds():
        name = f"{crd['spec']['group']}_{crd['spec']['names']['plural']}.yaml"
        (directory / name).write_text(yaml.safe_dump(crd, sort_keys=False))
    return directory


# The resources of our kinds stored as the hub, as the test bed reads and writes them: in
# v1alpha1, the version of its manifests and assertions (through the webhook above). The
# operator's own, v1beta1, are reconcilers.machinery.resources'.
GRAPH_DEPLOYMENTS = Resource(GROUP, "v1alpha1", "dynamographdeployments",
                             "DynamoGraphDeployment")
COMPONENT_DEPLOYMENTS = Resource(GROUP, "v1alpha1", "dynamocomponentdeployments",
                                 "DynamoComponentDeployment")
DEPLOYMENT_REQUESTS = Resource(GROUP, "v1alpha1", "dynamographdeploymentrequests",
                               "DynamoGraphDeploymentRequest")


def our_crds_yaml() -> str:
    """Our CRDs, converting through the in-process webhook, as one YAML stream (for
    `kubectl apply -f -`)."""
    return yaml.safe_dump_all(our_crds(), sort_keys=False)
