"""Pure translation of component specs into Kubernetes objects, one strategy per backend.

Nothing here does I/O: inputs are API models, an `OperatorSettings` and plain data (the
pull-secret index); outputs are Kubernetes objects as JSON dicts, the same input always giving
the same bytes. The builders are moving from the `v1alpha1` models to the hub's: those moved
take a `hub_graph.HubGraph` or `hub_component.HubComponent` (the `v1beta1` model and the
`v1alpha1`-only inputs of `api.conversion.render_inputs`), the others the `v1alpha1` view
(ARCHITECTURE.md, The API hub, lists which). The entry points:

- `render.render(manifest, settings)`: everything the operator creates for a manifest;
- `component_deployment.component_deployments(dgd, settings)`: the DCDs of a graph;
- `component_workload.component_objects(dcd, settings, ...)`: a DCD's Deployment or
  LeaderWorkerSets, Service, model Service, Ingress or VirtualService;
- `grove.grove_objects(dgd, settings, ...)`: the PodCliqueSet of a graph and its Services;
- `graph_objects`: PVCs, scaling adapters and discovery RBAC of a graph;
- `pod_spec.generate_pod_spec(spec, role, ctx)`: one role's pod spec;
- `frameworks`: the backend strategies (vLLM, SGLang, TRT-LLM, no-op), one module each;
- `pull_secrets`: the registry-host index of docker-config Secrets.

Builders raise `errors.GenerationError` with a message for the user when a spec cannot
become objects. Builders set no owner references: the operator's child writer adds the
controller reference when it creates a child.
"""
