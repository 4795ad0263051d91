"""What the kubectl tests share: the sample Widget CRD, manifests, and a background kubectl."""

from __future__ import annotations

import asyncio
import os
import re
from typing import Any

import yaml

from hack.localcluster.testing import Kubectl, kubectl_binary

Json = dict[str, Any]

#: A namespaced CRD with status and scale subresources, printer columns (one at priority 1,
#: so only `-o wide` shows it), short names and a category.
WIDGET_CRD: Json = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                  "listKind": "WidgetList", "shortNames": ["wg", "wgt"],
                  "categories": ["gadgets"]},
        "versions": [{
            "name": "v1",
            "served": True,
            "storage": True,
            "subresources": {
                "status": {},
                "scale": {"specReplicasPath": ".spec.replicas",
                          "statusReplicasPath": ".status.replicas",
                          "labelSelectorPath": ".status.selector"},
            },
            "additionalPrinterColumns": [
                {"name": "Size", "type": "string", "jsonPath": ".spec.size",
                 "description": "How big the widget is."},
                {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
                {"name": "Phase", "type": "string", "jsonPath": ".status.phase",
                 "priority": 1},
                {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
            ],
            "schema": {"openAPIV3Schema": {
                "type": "object",
                "description": "A Widget is a sample custom resource.",
                "properties": {
                    "spec": {
                        "type": "object",
                        "description": "The desired state of the widget.",
                        "required": ["size"],
                        "properties": {
                            "size": {"type": "string", "description": "How big the widget is.",
                                     "enum": ["small", "medium", "large"]},
                            "replicas": {"type": "integer", "minimum": 0, "default": 1,
                                         "description": "How many copies to run."},
                            "color": {"type": "string"},
                            "tags": {"type": "array", "items": {"type": "string"}},
                        },
                    },
                    "status": {
                        "type": "object",
                        "properties": {
                            "phase": {"type": "string"},
                            "replicas": {"type": "integer"},
                            "selector": {"type": "string"},
                            "conditions": {"type": "array", "items": {
                                "type": "object",
                                "required": ["type", "status"],
                                "properties": {
                                    "type": {"type": "string"},
                                    "status": {"type": "string",
                                               "enum": ["True", "False", "Unknown"]},
                                    "reason": {"type": "string"},
                                    "message": {"type": "string"},
                                    "lastTransitionTime": {"type": "string",
                                                           "format": "date-time"},
                                },
                            }},
                        },
                    },
                },
            }},
        }],
    },
}


def manifest(*objects: Json) -> str:
    """YAML for `kubectl ... -f -`."""
    return yaml.safe_dump_all(objects, sort_keys=False)


def widget(name: str, **spec: Any) -> Json:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name},
            "spec": spec}


def deployment(name: str, image: str = "nginx:1.25", replicas: int = 2) -> Json:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [
                     {"name": "app", "image": image, "ports": [{"containerPort": 80}]}]}}},
    }


def pod(name: str, image: str = "nginx:1.25") -> Json:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"containers": [{"name": "app", "image": image}]}}


def configmap(name: str, data: dict[str, str] | None = None, **meta: Any) -> Json:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **meta},
            "data": data or {}}


async def install_widgets(kubectl: Kubectl) -> None:
    """Create the Widget CRD and wait until it is served, as a user would."""
    out = await kubectl("apply", "-f", "-", stdin=manifest(WIDGET_CRD))
    assert out == "customresourcedefinition.apiextensions.k8s.io/widgets.example.com created\n"
    out = await kubectl("wait", "--for=condition=Established", "--timeout=10s",
                        "crd/widgets.example.com")
    assert out == "customresourcedefinition.apiextensions.k8s.io/widgets.example.com" \
        " condition met\n"


def table(out: str) -> list[list[str]]:
    """The rows of kubectl's human-readable output split on runs of two or more spaces."""
    return [re.split(r"\s{2,}", line.strip()) for line in out.splitlines() if line.strip()]


#: How kubectl prints an age (metav1.Duration, humanized): 0s, 5s, 3m2s, 4h, ...
AGE = re.compile(r"\d+(s|m(\d+s)?|h(\d+m)?|d(\d+h)?|y(\d+d)?)")


#: klog's prefix of a log line (`I1122 03:40:26.095868   21161 loader.go:408] ...`).
_KLOG = re.compile(r"[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ \S+:\d+\] ")

#: What kubectl logs (at -v=6) once the informer of `wait`/`get -w` has its initial state:
#: changes made after it are seen as changes, not as the state the command started from.
WATCHING = '"Caches populated"'


class Background:
    """A long-running kubectl (`get -w`, `wait`) whose output lines can be awaited.

    With `logged=True` kubectl also logs its requests (-v=6) so a test can wait, through
    `logged()`, until it is watching before it makes the change the command should see.
    """

    def __init__(self, kubectl: Kubectl, *args: str, logged: bool = False,
                 limit: float = 10.0) -> None:
        self.kubectl = kubectl
        self.limit = limit  # seconds any one step may take
        self.args = (*args, "-v=6") if logged else args
        self.lines: list[str] = []
        self.proc: asyncio.subprocess.Process | None = None

    async def __aenter__(self) -> Background:
        env = {**os.environ, "KUBECONFIG": str(self.kubectl.kubeconfig),
               "KUBECACHEDIR": str(self.kubectl.cache_dir), "HOME": str(self.kubectl.cache_dir)}
        self.proc = await asyncio.create_subprocess_exec(
            kubectl_binary(), *self.args, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.proc is not None
        if self.proc.returncode is None:
            self.proc.terminate()
        await self.proc.wait()

    async def line(self) -> str:
        """The next line kubectl prints."""
        assert self.proc is not None and self.proc.stdout is not None
        async with asyncio.timeout(self.limit):
            raw = await self.proc.stdout.readline()
        if not raw:
            err = await self.proc.stderr.read() if self.proc.stderr else b""
            raise AssertionError(f"kubectl {' '.join(self.args)} ended: {err.decode()}")
        line = raw.decode().rstrip("\n")
        self.lines.append(line)
        return line

    async def logged(self, text: str = WATCHING) -> None:
        """Wait until kubectl logs a line containing `text` (needs `logged=True`)."""
        assert self.proc is not None and self.proc.stderr is not None
        async with asyncio.timeout(self.limit):
            while True:
                raw = await self.proc.stderr.readline()
                if not raw:
                    raise AssertionError(f"kubectl {' '.join(self.args)} ended before"
                                         f" logging {text}")
                if text in raw.decode():
                    return

    async def finish(self) -> tuple[int, str, str]:
        """Wait for kubectl to exit: (exit code, rest of stdout, stderr without log lines)."""
        assert self.proc is not None
        async with asyncio.timeout(self.limit):
            out, err = await self.proc.communicate()
        errors = "".join(line for line in err.decode().splitlines(keepends=True)
                         if not _KLOG.match(line) and not line.startswith((" ", "\t", ">")))
        return self.proc.returncode or 0, out.decode(), errors
