"""Pure translation of component specs into Kubernetes objects, one strategy per backend.

Nothing here does I/O: inputs are API models, an `OperatorSettings` and plain data (the
pull-secret index); outputs are Kubernetes objects as JSON dicts, the same input always giving
the same bytes. Graphs and DCDs are taken as the hub: a `hub_graph.HubGraph` or
`hub_component.HubComponent` (the `v1beta1` model and the `v1alpha1`-only inputs of
`api.conversion.render_inputs`), one component as a `component_spec.ComponentSpec`
(ARCHITECTURE.md, The API hub, says what the inputs carry and why). The entry points:

- `render.render(manifest, settings)`: everything the operator creates for a manifest;
- `graph_children.graph_children(graph, settings, ...)`: a graph's whole desired set;
- `component_deployment.component_deployments(graph, settings)`: the DCDs of a graph, built
  as `v1beta1` (what only `v1alpha1` says written by
  `api.conversion.written_inputs.with_component_inputs`);
- `component_workload.component_objects(dcd, settings, ...)`: a DCD's Deployment or
  LeaderWorkerSets, Service, model Service, Ingress or VirtualService;
- `grove.grove_objects(graph, settings, ...)`: the PodCliqueSet of a graph and its Services;
- `graph_objects`: PVCs, scaling adapters and discovery RBAC of a graph;
- `pod_spec.generate_pod_spec(component, role, ctx)`: one role's pod spec;
- `frameworks`: the backend strategies (vLLM, SGLang, TRT-LLM, no-op), one module each;
- `pull_secrets`: the registry-host index of docker-config Secrets.

Builders raise `errors.GenerationError` with a message for the user when a spec cannot
become objects. Builders set no owner references: the operator's child writer adds the
controller reference when it creates a child.
"""
