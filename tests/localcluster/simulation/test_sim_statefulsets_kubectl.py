"""kubectl rollout status, history and undo on a simulated StatefulSet; a ReplicationController."""

from __future__ import annotations

import json

import pytest

from hack.localcluster.testing import Kubectl

pytestmark = pytest.mark.kubectl

MANIFESTS = """
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 3
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: c, image: "postgres:16"}]
  volumeClaimTemplates:
    - metadata: {name: data}
      spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: ReplicationController
metadata: {name: legacy}
spec:
  replicas: 2
  template:
    metadata: {labels: {app: legacy}}
    spec:
      containers: [{name: c, image: nginx:1.27}]
"""


async def test_rollout_of_a_statefulset(sim_kubectl: Kubectl) -> None:
    await sim_kubectl("apply", "-f", "-", stdin=MANIFESTS)
    out = await sim_kubectl("rollout", "status", "sts/db", "--timeout=30s")
    assert "roll out complete: 3 new pods have been updated" in out
    sts = json.loads(await sim_kubectl("get", "sts", "db", "-o", "json"))
    assert sts["spec"]["updateStrategy"] == {"type": "RollingUpdate",
                                             "rollingUpdate": {"partition": 0}}
    assert sts["spec"]["podManagementPolicy"] == "OrderedReady"
    first = sts["status"]["currentRevision"]
    claims = (await sim_kubectl("get", "pvc", "-o", "name")).split()
    assert claims == [f"persistentvolumeclaim/data-db-{i}" for i in range(3)]
    pod = json.loads(await sim_kubectl("get", "pod", "db-1", "-o", "json"))
    assert {"name": "data", "persistentVolumeClaim": {"claimName": "data-db-1"}} in \
        pod["spec"]["volumes"]

    await sim_kubectl("set", "image", "sts/db", "c=postgres:17")
    await sim_kubectl("rollout", "status", "sts/db", "--timeout=30s")
    history = await sim_kubectl("rollout", "history", "sts/db")
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"]
    await sim_kubectl("rollout", "undo", "sts/db")
    await sim_kubectl("rollout", "status", "sts/db", "--timeout=30s")
    sts = json.loads(await sim_kubectl("get", "sts", "db", "-o", "json"))
    # Back to the first template: its revision is reused, with the next number.
    assert sts["status"]["currentRevision"] == sts["status"]["updateRevision"] == first
    images = await sim_kubectl("get", "pods", "-l", "app=db", "-o",
                               "jsonpath={.items[*].spec.containers[0].image}")
    assert images.split() == ["postgres:16"] * 3
    history = await sim_kubectl("rollout", "history", "sts/db")
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["2", "3"]

    await sim_kubectl("scale", "rc/legacy", "--replicas=3")
    out = await sim_kubectl("wait", "--for=jsonpath={.status.readyReplicas}=3", "rc/legacy",
                            "--timeout=30s")
    assert "condition met" in out
    table = (await sim_kubectl("get", "rc", "legacy")).splitlines()
    assert table[1].split()[:4] == ["legacy", "3", "3", "3"]
