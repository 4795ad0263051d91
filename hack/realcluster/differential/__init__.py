"""Differential conformance: the same scripted interactions against the real kube-apiserver
(v1.20.2, `hack.realcluster`) and the local API server (`hack.localcluster`), outcomes compared.

`model` says what a case is (data plus a short list of requests), `target` talks HTTP to one
server, `normalize` turns volatile values into ordinal tokens, `runner` runs every case on both
servers and sorts the outcomes into same / explained / unexplained, `explained` is the table of
differences Kubernetes' history accounts for, and `cases/` holds the cases by topic.
"""
