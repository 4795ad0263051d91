"""The composition root: the `dynamo-operator` process (flags, API discovery, the registry
of controllers) and the `render` command."""
