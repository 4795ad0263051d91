"""The Dynamo reconcilers: one package per custom resource kind, the machinery they share,
and the operator process that wires them onto the runtime (`reconcilers.operator`)."""
