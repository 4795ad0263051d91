"""A local Kubernetes API server (and, later, a simulated cluster) for tests and the quickstart."""
