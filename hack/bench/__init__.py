"""Benchmarks that print figures, each compared with a peer in the same run."""
