"""Benchmark of the local API server: write throughput and watch fan-out at 10,000 objects."""
