"""Reading a profiling run's output back: the generated graph and the extra documents.

The output ConfigMap holds a multi-document YAML stream under `final_config.yaml` (an
intent-based request's run) or, for a v1alpha1 profilingConfig's, `config_with_planner.yaml`
(or `mocker_config_with_planner.yaml`): the DynamoGraphDeployment (the last one wins) and any
other resources the profiler emits; documents that do not parse or have no kind are skipped.
`profiler_status.yaml` carries the profiler's own verdict.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

Json = dict[str, Any]

#: Kubernetes refuses annotations over 256 KiB in total; keep room for the others.
MAX_ADDITIONAL_BYTES = 250_000


class OutputError(Exception):
    """Profiling output the controller cannot use; the message is for the user."""


@dataclass(frozen=True)
class ProfilingOutput:
    deployment: Json
    additional: list[Json]

    def additional_yaml(self) -> str:
        """The extra documents as one YAML stream; OutputError above the annotation limit."""
        text = "\n---\n".join(yaml.safe_dump(d, sort_keys=False) for d in self.additional)
        size = len(text.encode())
        if size > MAX_ADDITIONAL_BYTES:
            raise OutputError(f"additional resources YAML size ({size} bytes) exceeds maximum "
                              f"annotation size ({MAX_ADDITIONAL_BYTES} bytes)")
        return text


def parse_output(config_map: Json, key: str) -> ProfilingOutput:
    """The graph and extra documents under `key`; OutputError naming what is missing."""
    name = config_map["metadata"]["name"]
    text = (config_map.get("data") or {}).get(key)
    if text is None:
        raise OutputError(f"key {key} not found in ConfigMap {name}")
    deployment: Json | None = None
    additional: list[Json] = []
    for doc in _documents(text):
        if doc.get("kind") == "DynamoGraphDeployment":
            deployment = doc
        else:
            additional.append(doc)
    if deployment is None:
        raise OutputError("no DynamoGraphDeployment found in YAML content")
    return ProfilingOutput(deployment, additional)


def _documents(text: str) -> list[Json]:
    out = []
    for chunk in text.split("\n---"):
        try:
            doc = yaml.safe_load(chunk)
        except yaml.YAMLError:
            continue
        if isinstance(doc, dict) and doc.get("kind"):
            out.append(doc)
    return out


def profiler_message(config_map: Json | None, key: str) -> str:
    """The profiler's own failure message from `profiler_status.yaml`, if any."""
    if config_map is None:
        return ""
    text = (config_map.get("data") or {}).get(key)
    if not text:
        return ""
    try:
        status = yaml.safe_load(text)
    except yaml.YAMLError:
        return ""
    if not isinstance(status, dict) or status.get("status") == "success":
        return ""
    return str(status.get("message") or status.get("error") or "")


def additional_documents(text: str) -> list[Json]:
    """The documents stored in the request's additional-resources annotation."""
    return _documents(text)
