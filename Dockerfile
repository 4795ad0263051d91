# The dynamo-operator image. The operator process itself lands with its issue; this builds the
# package and its console script so the image layout is settled early.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY api ./api
COPY controller ./controller
COPY reconcilers ./reconcilers
COPY backends ./backends
COPY hack ./hack
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
USER 65532:65532
EXPOSE 8080 8081
ENTRYPOINT ["dynamo-operator"]
