"""kubectl against the simulated cluster: apply workloads and see what a real cluster reports."""

from __future__ import annotations

import json

import pytest

from hack.localcluster.simulation import Delays, SimulationConfig
from hack.localcluster.testing import Kubectl, eventually

pytestmark = pytest.mark.kubectl


@pytest.fixture
def sim_config() -> SimulationConfig:
    # A crash-looping container waits long enough for two kubectl runs to see the back-off.
    return SimulationConfig(delays=Delays(crash_backoff=3.0, crash_backoff_max=3.0))

MANIFESTS = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: nginx
          image: nginx:1.27
          ports: [{name: http, containerPort: 80}]
          readinessProbe: {httpGet: {path: /, port: http}}
          resources:
            limits: {nvidia.com/gpu: "1"}
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: http}]
---
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
spec:
  completions: 2
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: migrate
          image: busybox:1.36
"""


async def test_apply_deployment_job_and_service(sim_kubectl: Kubectl) -> None:
    out = await sim_kubectl("apply", "-f", "-", stdin=MANIFESTS)
    assert "deployment.apps/web created" in out and "job.batch/migrate created" in out
    out = await sim_kubectl("rollout", "status", "deployment/web", "--timeout=20s")
    assert 'deployment "web" successfully rolled out' in out
    out = await sim_kubectl("wait", "--for=condition=complete", "job/migrate", "--timeout=20s")
    assert "job.batch/migrate condition met" in out

    deploy = json.loads(await sim_kubectl("get", "deployment", "web", "-o", "json"))
    status = deploy["status"]
    assert {k: status[k] for k in ("replicas", "readyReplicas", "availableReplicas",
                                   "updatedReplicas", "observedGeneration")} == {
        "replicas": 3, "readyReplicas": 3, "availableReplicas": 3, "updatedReplicas": 3,
        "observedGeneration": 1}
    table = await sim_kubectl("get", "deployment", "web")
    assert table.splitlines()[1].split()[:4] == ["web", "3/3", "3", "3"]
    jobs = await sim_kubectl("get", "job", "migrate")
    assert jobs.splitlines()[1].split()[:3] == ["migrate", "Complete", "2/2"]
    slices = json.loads(await sim_kubectl("get", "endpointslices", "-l",
                                          "kubernetes.io/service-name=web", "-o", "json"))
    endpoints = slices["items"][0]["endpoints"]
    assert len(endpoints) == 3 and all(e["conditions"]["ready"] for e in endpoints)
    ep_table = await sim_kubectl("get", "endpoints", "web")
    assert ep_table.count(":80") == 3

    # A template change rolls out the way kubectl expects to follow it.
    await sim_kubectl("set", "image", "deployment/web", "nginx=nginx:1.28")
    out = await sim_kubectl("rollout", "status", "deployment/web", "--timeout=20s")
    assert 'deployment "web" successfully rolled out' in out
    history = await sim_kubectl("rollout", "history", "deployment/web")
    assert "1 " in history and "2 " in history
    await sim_kubectl("rollout", "undo", "deployment/web")
    out = await sim_kubectl("rollout", "status", "deployment/web", "--timeout=20s")
    assert "successfully rolled out" in out
    # As on a real cluster, the rolled-back pods may still be Terminating when rollout status
    # returns; they are gone after their grace period.

    async def only_the_old_image() -> bool:
        images = await sim_kubectl("get", "pods", "-l", "app=web", "-o",
                                   "jsonpath={.items[*].spec.containers[0].image}")
        return images.split() == ["nginx:1.27"] * 3
    await eventually(only_the_old_image, within=20.0, what="only nginx:1.27 pods")


async def test_get_nodes_and_pods_wide_looks_like_a_cluster(sim_kubectl: Kubectl) -> None:
    await sim_kubectl("create", "deployment", "hello", "--image=nginx", "--replicas=2")
    await sim_kubectl("rollout", "status", "deployment/hello", "--timeout=20s")
    out = await sim_kubectl("get", "nodes,pods", "-A", "-o", "wide")
    lines = out.splitlines()
    node_header = lines[0].split()
    assert node_header[:6] == ["NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP"]
    nodes = [line.split() for line in lines[1:5]]
    assert [n[0] for n in nodes] == [f"node/gpu-node-{i}" for i in range(4)]
    assert all(n[1] == "Ready" and n[5].startswith("127.0.0.") for n in nodes)
    assert all("Ubuntu" in line for line in lines[1:5])
    pod_lines = [line.split() for line in lines if line.startswith("default ")]
    assert len(pod_lines) == 2
    for fields in pod_lines:
        # NAMESPACE NAME READY STATUS RESTARTS AGE IP NODE ...
        assert fields[2:5] == ["1/1", "Running", "0"]
        assert fields[6].startswith("127.0.1.") and fields[7].startswith("gpu-node-")
    described = await sim_kubectl("describe", "node", "gpu-node-0")
    assert "nvidia.com/gpu:" in described and "nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3" \
        in described


async def test_kubectl_sees_crash_loops_and_pending_pods(sim_kubectl: Kubectl) -> None:
    await sim_kubectl("apply", "-f", "-", stdin="""
apiVersion: v1
kind: Pod
metadata:
  name: crashy
  annotations: {localcluster.dev/mode: crashloop}
spec:
  containers: [{name: app, image: busybox}]
---
apiVersion: v1
kind: Pod
metadata:
  name: huge
spec:
  containers:
    - name: app
      image: busybox
      resources: {limits: {nvidia.com/gpu: "16"}}
""")
    out = await sim_kubectl("wait", "--for=jsonpath={.status.containerStatuses[0].state."
                            "waiting.reason}=CrashLoopBackOff", "pod/crashy", "--timeout=20s")
    assert "condition met" in out
    table = await sim_kubectl("get", "pod", "crashy", "huge")
    rows = {line.split()[0]: line.split() for line in table.splitlines()[1:]}
    assert rows["crashy"][2] == "CrashLoopBackOff"
    assert rows["huge"][2] == "Pending"
    events = await sim_kubectl("get", "events", "--field-selector",
                               "involvedObject.name=huge")
    assert "FailedScheduling" in events and "Insufficient nvidia.com/gpu" in events
