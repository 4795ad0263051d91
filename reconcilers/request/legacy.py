"""Profiling a request written as v1alpha1 with a profilingConfig, as the controller always
has: the profile config (with GPU discovery on request) handed to the profiler inline. The
request is read as stored (its v1beta1 model) with what only v1alpha1 says
(`api.conversion.request_inputs`: the profilingConfig, enableGpuDiscovery, deploymentOverrides),
which the conversion keeps in its spec payload.
"""

from __future__ import annotations

from typing import Any

import structlog
import yaml

from api.conversion.request_inputs import RequestInputs
from api.v1beta1.graph_deployment_request import DynamoGraphDeploymentRequest
from backends import profiling_job as pj
from backends.children import DesiredChildren
from backends.gpu_discovery import hardware_from_nodes
from controller.errors import NotFound
from reconcilers.machinery.context import OperatorContext
from reconcilers.machinery.resources import CONFIG_MAPS, NODES

Json = dict[str, Any]
log = structlog.get_logger("reconcilers.request")

__all__ = ["LegacyProfiling", "NoGpus"]


class NoGpus(Exception):
    """GPU discovery found nothing to go on."""


class LegacyProfiling:
    """The profilingConfig way of profiling, for one operator."""

    def __init__(self, ctx: OperatorContext) -> None:
        self.ctx = ctx

    async def problems(self, dgdr: DynamoGraphDeploymentRequest, inputs: RequestInputs
                       ) -> list[str]:
        """What the cluster says is wrong with the request's profilingConfig."""
        problems = []
        hardware = _given_hardware(inputs)
        low, high = (hardware.get("min_num_gpus_per_engine"),
                     hardware.get("max_num_gpus_per_engine"))
        if isinstance(low, int) and isinstance(high, int) and low > high:
            problems.append(f"spec.profilingConfig.config.hardware: min_num_gpus_per_engine "
                            f"({low}) is greater than max_num_gpus_per_engine ({high})")
        profiling = inputs.profiling_config
        ref = profiling.config_map_ref if profiling is not None else None
        if ref is not None:
            namespace = str(dgdr.metadata["namespace"])
            try:
                # One read when the request starts: ConfigMaps are not cached by the operator.
                cm = await self.ctx.client.get(CONFIG_MAPS, namespace, ref.name)
            except NotFound:
                problems.append(f"ConfigMap {ref.name} not found in namespace {namespace}")
            else:
                key = ref.key or pj.DEFAULT_CONFIG_KEY
                if key not in (cm.get("data") or {}) and key not in (cm.get("binaryData") or {}):
                    problems.append(f"key {key} not found in ConfigMap {ref.name}")
        if not problems:
            _log_overwrites(dgdr, inputs)
        return problems

    async def children(self, dgdr: DynamoGraphDeploymentRequest, inputs: RequestInputs,
                       cluster_role: str) -> tuple[DesiredChildren, bool]:
        """The profiling identity and Job, and whether AI Configurator profiles;
        GenerationError or NoGpus when the config cannot be made."""
        namespace = str(dgdr.metadata["namespace"])
        config = pj.profile_config(dgdr, inputs, namespace, await self._hardware(inputs))
        desired = pj.profiling_children(dgdr, inputs, config,
                                        yaml.safe_dump(config, sort_keys=False),
                                        cluster_role=cluster_role)
        return desired, pj.profiler_app(config) == "aic-profiler"

    async def _hardware(self, inputs: RequestInputs) -> Json | None:
        """GPU facts from the nodes when the request asks for discovery (cluster-wide only:
        validation refuses it for a namespace-restricted operator)."""
        if not inputs.enable_gpu_discovery:
            return None
        nodes = (await self.ctx.client.list(NODES)).get("items") or []
        hardware = hardware_from_nodes(nodes)
        given = _given_hardware(inputs)
        engine_sizes = all(given.get(k) for k in ("min_num_gpus_per_engine",
                                                  "max_num_gpus_per_engine"))
        if hardware is None and not (given.get("num_gpus_per_node") or engine_sizes):
            raise NoGpus("GPU discovery found no node with nvidia.com/gpu labels or capacity; "
                         "set spec.profilingConfig.config.hardware (num_gpus_per_node, or "
                         "both min_num_gpus_per_engine and max_num_gpus_per_engine) or turn "
                         "spec.enableGpuDiscovery off")
        return hardware


def _given_hardware(inputs: RequestInputs) -> Json:
    """The user's `hardware` section of the profile config ({} when absent)."""
    profiling = inputs.profiling_config
    config = (profiling.config or {}) if profiling is not None else {}
    hardware = config.get("hardware")
    return hardware if isinstance(hardware, dict) else {}


def _log_overwrites(dgdr: DynamoGraphDeploymentRequest, inputs: RequestInputs) -> None:
    """Values of the profile config that the request's own fields replace."""
    profiling = inputs.profiling_config
    config = (profiling.config or {}) if profiling is not None else {}
    engine, deployment = config.get("engine"), config.get("deployment")
    if isinstance(engine, dict) and engine.get("backend") not in (None, inputs.backend):
        log.info("profilingConfig.config.engine.backend will be overwritten by spec.backend",
                 given=engine.get("backend"), backend=inputs.backend)
    if isinstance(deployment, dict) and deployment.get("model") not in (None, dgdr.spec.model):
        log.info("profilingConfig.config.deployment.model will be overwritten by spec.model",
                 given=deployment.get("model"), model=dgdr.spec.model)
