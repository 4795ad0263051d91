"""The command lines of etcd and the three Kubernetes components, as kubeadm would set them,
bound to loopback only. Pure functions of the ports and the files of one data directory.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .pki import FRONT_PROXY_CLIENT, Pki

SERVICE_ACCOUNT_ISSUER = "https://kubernetes.default.svc.cluster.local"
# Only allocated to Service objects: with aggregator routing on and the endpoint reconciler
# off, kube-apiserver never dials a ClusterIP (webhooks and APIServices go to endpoints).
SERVICE_CLUSTER_IP_RANGE = "10.96.0.0/12"
LOOPBACK = "127.0.0.1"


@dataclass(frozen=True)
class Ports:
    """The loopback ports of one control plane."""

    apiserver: int
    etcd_client: int
    etcd_peer: int
    controller_manager: int
    scheduler: int


@dataclass(frozen=True)
class Layout:
    """The files of one control plane under its data directory."""

    data_dir: Path

    @property
    def etcd_data(self) -> Path:
        return self.data_dir / "etcd"

    @property
    def pki(self) -> Pki:
        return Pki(self.data_dir / "pki")

    @property
    def logs(self) -> Path:
        return self.data_dir / "logs"

    @property
    def audit_log(self) -> Path:
        return self.logs / "audit.log"

    @property
    def audit_policy(self) -> Path:
        return self.data_dir / "audit-policy.yaml"

    def kubeconfig(self, component: str) -> Path:
        return self.data_dir / "kubeconfigs" / f"{component}.kubeconfig"


def etcd(binary: Path, layout: Layout, ports: Ports) -> list[str]:
    client = f"http://{LOOPBACK}:{ports.etcd_client}"
    peer = f"http://{LOOPBACK}:{ports.etcd_peer}"
    return [str(binary), "--name=realcluster", f"--data-dir={layout.etcd_data}",
            f"--listen-client-urls={client}", f"--advertise-client-urls={client}",
            f"--listen-peer-urls={peer}", f"--initial-advertise-peer-urls={peer}",
            f"--initial-cluster=realcluster={peer}", "--initial-cluster-state=new",
            "--logger=zap", "--log-level=warn", "--snapshot-count=10000"]


def kube_apiserver(binary: Path, layout: Layout, ports: Ports, authorization_mode: str,
                   admission_plugins: tuple[str, ...], extra: tuple[str, ...] = ()) -> list[str]:
    pki = layout.pki
    flags = [
        f"--advertise-address={LOOPBACK}", f"--bind-address={LOOPBACK}",
        f"--secure-port={ports.apiserver}", "--insecure-port=0",
        f"--etcd-servers=http://{LOOPBACK}:{ports.etcd_client}",
        f"--client-ca-file={pki.path('ca.crt')}",
        f"--tls-cert-file={pki.path('serving.crt')}",
        f"--tls-private-key-file={pki.path('serving.key')}",
        f"--cert-dir={layout.data_dir / 'apiserver-certs'}",
        f"--service-account-key-file={pki.path('sa.pub')}",
        f"--service-account-signing-key-file={pki.path('sa.key')}",
        f"--service-account-issuer={SERVICE_ACCOUNT_ISSUER}",
        f"--api-audiences={SERVICE_ACCOUNT_ISSUER}",
        f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
        f"--authorization-mode={authorization_mode}",
        "--allow-privileged=true", "--enable-bootstrap-token-auth=true",
        "--endpoint-reconciler-type=none", "--enable-aggregator-routing=true",
        # The aggregation layer, as kubeadm configures it.
        f"--requestheader-client-ca-file={pki.path('front-proxy-ca.crt')}",
        f"--requestheader-allowed-names={FRONT_PROXY_CLIENT}",
        "--requestheader-extra-headers-prefix=X-Remote-Extra-",
        "--requestheader-group-headers=X-Remote-Group",
        "--requestheader-username-headers=X-Remote-User",
        f"--proxy-client-cert-file={pki.path('front-proxy-client.crt')}",
        f"--proxy-client-key-file={pki.path('front-proxy-client.key')}",
    ]
    if admission_plugins:
        flags.append(f"--enable-admission-plugins={','.join(admission_plugins)}")
    return [str(binary), *flags, *extra]


def _delegated(layout: Layout, component: str, port: int) -> list[str]:
    """The flags a controller-manager and a scheduler share: their kubeconfig and serving."""
    kubeconfig = layout.kubeconfig(component)
    pki = layout.pki
    return [f"--kubeconfig={kubeconfig}", f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            f"--bind-address={LOOPBACK}", f"--secure-port={port}", "--port=0",
            f"--tls-cert-file={pki.path('serving.crt')}",
            f"--tls-private-key-file={pki.path('serving.key')}",
            f"--client-ca-file={pki.path('ca.crt')}", "--leader-elect=false"]


def kube_controller_manager(binary: Path, layout: Layout, ports: Ports) -> list[str]:
    pki = layout.pki
    return [str(binary), *_delegated(layout, "controller-manager", ports.controller_manager),
            f"--root-ca-file={pki.path('ca.crt')}",
            f"--service-account-private-key-file={pki.path('sa.key')}",
            f"--cluster-signing-cert-file={pki.path('ca.crt')}",
            f"--cluster-signing-key-file={pki.path('ca.key')}",
            "--use-service-account-credentials=true", "--cluster-name=realcluster",
            "--controllers=*,bootstrapsigner,tokencleaner"]


def kube_scheduler(binary: Path, layout: Layout, ports: Ports) -> list[str]:
    return [str(binary), *_delegated(layout, "scheduler", ports.scheduler)]
