"""Pure translation of component specs into Kubernetes objects, one strategy per backend."""
