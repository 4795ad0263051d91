"""Developer tooling: the local cluster, benchmarks and code generators."""
