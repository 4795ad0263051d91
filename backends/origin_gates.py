"""Rendering gated by the operator version that created a graph
(`nvidia.com/dynamo-operator-origin-version`, `api.origin_version`).

Some rendering changes the pod template of graphs that already run: turning it on for
every graph at an operator upgrade would restart their pods. As the original, such a change is
gated on the graph's origin version, which the operator's mutating webhook stamps when a graph
is created (`reconcilers.operator.defaulting`): a graph stamped by an operator at or above a
gate's version gets it; a graph without the stamp (made by an operator before the stamp
existed, or stored while the webhooks were off) and one whose stamp is not a version keep the
old rendering, for as long as they live. The original has no later switch; recreating the
graph, or stating the annotation on it (an explicit opt-in, which rolls its pods), turns a
gate on.

The stamp reaches the builders as the original carries it: a graph's children inherit it in
their annotations (`backends.constants.INHERITED_GRAPH_ANNOTATIONS`; the Grove path puts it in
each service's), and a component reads it there, or in its pod template's annotations (where a
DCD of its own, which no webhook stamps, may state it).

Gates:
* `FRONTEND_SIDECAR` (0.1.0, the first version of this operator that stamps): `frontendSidecar`
  gets the frontend's defaults merged into its container (`backends.frontend_sidecar`). Before
  it the container was dropped from the pod (a `v1alpha1` frontendSidecar), or kept as written
  (a `v1beta1` one the `v1alpha1` form cannot hold).
* `FRONTEND_SIDECAR_LOSSLESS` (0.2.0): on the DCD path, a graph's child DCD carries the
  `v1beta1` sidecar container whole, under its own name (`backends.component_deployment`,
  `api.conversion.written_inputs.with_frontend_container`), so its pods run all the container
  states (ports, probes, resources, mounts, securityContext...) as Grove's do. Before it the
  child carried `v1alpha1`'s form of it: a container named `sidecar-frontend` with its image,
  args, env and Secret only.
* `KUBE_DISCOVERY_MODE` (0.2.0, `backends.discovery_mode`): a graph's
  `nvidia.com/dynamo-kube-discovery-mode` reaches its components (container mode: `main`'s
  `CONTAINER_NAME` and `DYN_KUBE_DISCOVERY_MODE`). Before it the annotation was left alone,
  unless a component fails over.
* `PORTABLE_TOPOLOGY_ENV` (0.2.0, `backends.portable_topology`): `main` of every multinode
  leader and worker pod carries `DYNAMO_RANK` and `DYNAMO_LEADER_ADDRESS`, and the generated
  SGLang launch reads them. Before it only roles with templates of their own carried them.
* `PROVIDER_GENERATION` (0.3.0, `backends.worker_generation`): where Grove or LeaderWorkerSet
  replaces the pods, the templates carry the worker generation as the original's do: every
  worker clique (Grove) and multinode worker DCD (LeaderWorkerSet) the label
  `nvidia.com/dynamo-worker-hash`, their `main` `DYN_NAMESPACE_WORKER_SUFFIX`, and the
  frontend `DYN_NAMESPACE_PREFIX`; the hash covers every worker. Before it none of them did,
  and the hash covered the single-node workers alone. Its threshold is above 0.2.0, which
  builds without it stamp too; it is on for graphs stamped once pyproject's version is 0.3.0
  (or stating the annotation).

A later gate needs a later version of the operator (pyproject's), since the stamp is the
version.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from api.origin_version import ORIGIN_VERSION, OriginVersion, origin_version
from backends.component_spec import ComponentSpec

__all__ = ["FRONTEND_SIDECAR", "FRONTEND_SIDECAR_LOSSLESS", "OriginGate", "component_origin",
           "with_graph_origin"]


@dataclass(frozen=True)
class OriginGate:
    """Rendering enabled for graphs created by an operator at or above `min_version`."""

    name: str
    min_version: OriginVersion

    def enabled(self, origin: OriginVersion | None) -> bool:
        """On for a known origin at or above the threshold; off when unknown."""
        return origin is not None and origin >= self.min_version

    def enabled_for(self, spec: ComponentSpec) -> bool:
        """On for the graph `spec` is a component of (`component_origin`)."""
        return self.enabled(component_origin(spec))


FRONTEND_SIDECAR = OriginGate("FrontendSidecar", OriginVersion((0, 1, 0)))
FRONTEND_SIDECAR_LOSSLESS = OriginGate("FrontendSidecarLossless", OriginVersion((0, 2, 0)))


def component_origin(spec: ComponentSpec) -> OriginVersion | None:
    """The origin version a component carries: in its own annotations (inherited from its
    graph), else in its pod template's."""
    found = origin_version(spec.inputs.annotations)
    if found is not None:
        return found
    extra = spec.inputs.pod.extra_pod_metadata
    return origin_version(extra.annotations if extra is not None else None)


def with_graph_origin(annotations: Mapping[str, str] | None,
                      graph_annotations: Mapping[str, str]) -> Mapping[str, str] | None:
    """A component's `annotations` with its graph's origin stamp under them; the same object
    when the graph has none (a graph without the stamp renders as before)."""
    stamp = graph_annotations.get(ORIGIN_VERSION)
    if stamp is None or ORIGIN_VERSION in (annotations or {}):
        return annotations
    return {ORIGIN_VERSION: stamp, **(annotations or {})}
