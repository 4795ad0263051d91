"""`python -m hack.quickstart` (`make quickstart`): a Dynamo graph running in one command.

Starts the local cluster with its simulated GPU nodes (state in `.localcluster/`), installs the
CRDs (ours and LeaderWorkerSet's), starts `dynamo-operator` with its admission webhooks (served
on 127.0.0.1, registered with `--webhook-url`, the conversion webhook too; it waits until they
answer), applies `deploy/examples/v1beta1/vllm-agg.yaml` (the API Dynamo v1.x documents, stored
as v1alpha1 through the conversion webhook), waits until the graph is Ready, prints what runs,
and keeps the cluster and the operator running until Ctrl-C (or stops at once with `--exit`).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from types import FrameType

from hack.processes import free_port

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m hack.quickstart", description=__doc__)
    parser.add_argument("--port", type=int, default=6443, help="API server port (0: any free)")
    parser.add_argument("--dir", type=Path, default=ROOT / ".localcluster",
                        help="kubeconfig, cluster state and logs [.localcluster]")
    parser.add_argument("--example", type=Path,
                        default=ROOT / "deploy/examples/v1beta1/vllm-agg.yaml",
                        help="the graph to apply [deploy/examples/v1beta1/vllm-agg.yaml]")
    parser.add_argument("--timeout", type=int, default=120, help="seconds to wait for Ready")
    parser.add_argument("--exit", action="store_true",
                        help="stop the operator and the cluster after printing (CI, tests)")
    return parser.parse_args(argv)



class Quickstart:
    """The two child processes and the kubectl runs against them."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.dir: Path = args.dir.resolve()
        self.kubeconfig = self.dir / "kubeconfig"
        self.children: list[subprocess.Popen[bytes]] = []

    def kubectl(self, *args: str) -> None:
        env = {**os.environ, "KUBECONFIG": str(self.kubeconfig)}
        cmd = [str(BIN / "kubectl"), *args]
        print("$ kubectl " + " ".join(args), flush=True)
        subprocess.run(cmd, env=env, check=True, timeout=self.args.timeout + 30)

    def start_cluster(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        log = (self.dir / "cluster.log").open("ab")
        proc = subprocess.Popen(
            [sys.executable, "-m", "hack.localcluster", "--port", str(self.args.port),
             "--kubeconfig", str(self.kubeconfig), "--data-dir", str(self.dir / "data")],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=log)
        self.children.append(proc)
        assert proc.stdout is not None
        line = proc.stdout.readline().decode().strip()
        if not line.startswith("ready "):
            tail = (self.dir / "cluster.log").read_text(errors="replace")[-2000:]
            raise SystemExit(f"the local cluster did not start ({line!r}):\n{tail}")
        print(f"local cluster: {line.split()[1]} (simulated: 4 nodes x 8 GPUs)", flush=True)

    def start_operator(self) -> None:
        log = (self.dir / "operator.log").open("ab")
        env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
        env.setdefault("POD_NAME", "quickstart")
        probe, webhook = free_port(), free_port()
        url = f"https://127.0.0.1:{webhook}"
        self.children.append(subprocess.Popen(
            [str(BIN / "dynamo-operator"), "--kubeconfig", str(self.kubeconfig),
             "--leader-election-namespace", "default", "--log-format", "console",
             "--health-probe-bind-address", f"127.0.0.1:{probe}",
             "--metrics-bind-address", f"127.0.0.1:{free_port()}", "--metrics-secure=false",
             "--enable-webhooks", "--webhook-port", str(webhook), "--webhook-url", url],
            stdout=log, stderr=log, env=env))
        print(f"operator started; its log: {self.dir / 'operator.log'}", flush=True)
        self._wait_for_webhooks(probe, url)

    def _wait_for_webhooks(self, probe: int, url: str) -> None:
        """Until the operator is ready (its webhook serving) and the webhook configuration
        (maybe left by an earlier run on another port) calls this operator."""
        env = {**os.environ, "KUBECONFIG": str(self.kubeconfig)}
        deadline = time.monotonic() + self.args.timeout
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{probe}/readyz", timeout=2):
                    pass
                called = subprocess.run(
                    [str(BIN / "kubectl"), "get", "validatingwebhookconfiguration",
                     "dynamo-operator-validating", "-o",
                     "jsonpath={.webhooks[*].clientConfig.url}"],
                    env=env, capture_output=True, text=True, timeout=30).stdout.split()
                converting = subprocess.run(
                    [str(BIN / "kubectl"), "get", "crd", "dynamographdeployments.nvidia.com",
                     "-o", "jsonpath={.spec.conversion.webhook.clientConfig.url}"],
                    env=env, capture_output=True, text=True, timeout=30).stdout
                if called and all(u.startswith(url + "/") for u in called) \
                        and converting.startswith(url + "/"):
                    print(f"admission and conversion webhooks: {url}", flush=True)
                    return
            except OSError:
                pass
            time.sleep(0.3)
        raise SystemExit("the operator's webhooks did not come up; see operator.log")

    def run(self) -> int:
        self.start_cluster()
        self.kubectl("apply", "--server-side", "--force-conflicts",
                     "-f", str(ROOT / "deploy/crds"),
                     "-f", str(ROOT / "hack/crds/leaderworkerset.yaml"),
                     "-f", str(ROOT / "hack/crds/inferencepool.yaml"))
        self.kubectl("wait", "--for=condition=Established", "crd", "--all", "--timeout=60s")
        self.start_operator()
        self.kubectl("apply", "-f", str(self.args.example))
        name = _graph_name(self.args.example)
        started = time.monotonic()
        self.kubectl("wait", "--for=condition=Ready", f"dgd/{name}",
                     f"--timeout={self.args.timeout}s")
        print(f"dgd/{name} Ready after {time.monotonic() - started:.1f}s", flush=True)
        self.kubectl("get", "dgd,dcd,deploy,svc,pods", "-o", "wide")
        print(USAGE.format(kubeconfig=self.kubeconfig, bin=BIN, dir=self.dir), flush=True)
        if not self.args.exit:
            print("The cluster and the operator keep running until Ctrl-C.", flush=True)
            _wait_for_interrupt()
        return 0

    def stop(self) -> None:
        for proc in reversed(self.children):  # the operator first, then the cluster
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


USAGE = """
Use the cluster with kubectl (from another shell while this one runs):

  export KUBECONFIG={kubeconfig} PATH={bin}:$PATH
  kubectl get dgd -o wide
  kubectl get dynamographdeployments.v1beta1.nvidia.com vllm-agg -o yaml
  kubectl patch dynamographdeployments.v1alpha1.nvidia.com vllm-agg --type=merge \\
      -p '{{"spec":{{"services":{{"VllmDecodeWorker":{{"replicas":2}}}}}}}}'
  kubectl apply -f deploy/examples/v1beta1/vllm-disagg.yaml
  kubectl delete dgd vllm-agg

Logs: {dir}/operator.log and {dir}/cluster.log. State persists in {dir}/data.
"""


def _graph_name(path: Path) -> str:
    for line in path.read_text().splitlines():
        if line.startswith("  name:"):
            return line.split(":", 1)[1].strip()
    raise SystemExit(f"{path}: no metadata.name")


def _wait_for_interrupt() -> None:
    def stop(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        print("\nstopping", flush=True)


def main(argv: list[str] | None = None) -> int:
    quickstart = Quickstart(parse_args(sys.argv[1:] if argv is None else argv))
    try:
        return quickstart.run()
    except subprocess.CalledProcessError as err:
        print(f"failed: {err}; logs in {quickstart.dir}", file=sys.stderr)
        return 1
    finally:
        quickstart.stop()


if __name__ == "__main__":
    sys.exit(main())
