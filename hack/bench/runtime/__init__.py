"""Benchmark of the controller runtime against kopf: one ConfigMap per custom object.

`python -m hack.bench.runtime --objects 1000` runs the local API server in-process, creates
N Widgets in each of two namespaces, then runs each operator in its own subprocess on its
own namespace and reports time to converge, API requests per object (from the server's
per-user-agent counts) and peak RSS.
"""
