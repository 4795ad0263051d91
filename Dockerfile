# The dynamo-operator image: the product wheel (api, backends, controller, reconcilers) and its
# runtime dependencies in a virtualenv; nothing of hack/, tests/ or e2e/ (see .dockerignore).
# Runs as a non-root user and writes nothing at run time, so the root filesystem can be
# read-only. Build from the repository root: `make image` (adds the version label).
ARG PYTHON_IMAGE=python:3.11-slim

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
WORKDIR /src
COPY pyproject.toml README.md ./
COPY api ./api
COPY backends ./backends
COPY controller ./controller
COPY reconcilers ./reconcilers
# The virtualenv gets no pip; its bytecode is compiled here, hash-based because the image is
# immutable (no timestamps to check, nothing to write at start-up).
RUN pip wheel --no-deps --wheel-dir /wheels . \
 && python -m venv --without-pip /opt/dynamo-operator \
 && pip --python /opt/dynamo-operator/bin/python install --no-compile /wheels/*.whl \
 && python -m compileall -q --invalidation-mode unchecked-hash /opt/dynamo-operator/lib

FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="dynamo-operator" \
      org.opencontainers.image.description="A Kubernetes operator for NVIDIA Dynamo inference graphs (nvidia.com/v1alpha1), on asyncio." \
      org.opencontainers.image.licenses="Apache-2.0"
ENV PATH=/opt/dynamo-operator/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
COPY --from=build /opt/dynamo-operator /opt/dynamo-operator
USER 65532:65532
# metrics, health probes, admission webhooks
EXPOSE 8080 8081 9443
ENTRYPOINT ["dynamo-operator"]
