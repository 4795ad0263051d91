"""One reconciler per custom resource kind."""
