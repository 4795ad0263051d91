"""Micro-benchmark of one write inside the local API server (no HTTP): status, update, create."""
