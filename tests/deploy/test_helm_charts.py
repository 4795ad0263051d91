"""The Helm charts in deploy/helm and the kustomize manifests in deploy/manifests: they lint,
render what the operator's code needs (and no wildcard permission), pass the local API
server's dry run, stay equal to each other, and `helm upgrade` upgrades the CRDs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from helm_support import CRD_CHART, OPERATOR_CHART, Helm, Json, by_key, objects, rules_of

from hack import gen_manifests
from hack.gen_crds import OUTPUT_DIR as CRD_DIR
from hack.localcluster.server import LocalCluster
from hack.localcluster.testing import Kubectl, eventually
from reconcilers.operator.admission import API_VERSIONS, WEBHOOKS
from reconcilers.operator.flags import parse_options

pytestmark = pytest.mark.kubectl

NAMESPACE = gen_manifests.NAMESPACE
#: Value sets rendered by the tests: defaults, restricted, and every optional integration on.
VALUE_SETS: dict[str, tuple[str, ...]] = {
    "default": (),
    "restricted": ("namespaceRestriction.enabled=true",),
    "everything": ("grove.enabled=true", "lws.enabled=true", "volcano.enabled=true",
                   "istio.virtualServiceGateway=gw", "webhook.certManager.enabled=true",
                   "metrics.serviceMonitor.enabled=true", "kaiScheduler.enabled=true"),
    "restricted-everything": ("namespaceRestriction.enabled=true", "grove.enabled=true",
                              "lws.enabled=true", "volcano.enabled=true",
                              "istio.virtualServiceGateway=gw"),
    "minimal": ("webhook.enabled=false", "metrics.enabled=false",
                "leaderElection.enabled=false", "replicaCount=1"),
}


@pytest.fixture
def helm(tmp_path: Path) -> Helm:
    return Helm(tmp_path / "helm-home")


@pytest.fixture
def cluster_helm(cluster: LocalCluster, kubeconfig: Path, tmp_path: Path) -> Helm:
    return Helm(tmp_path / "helm-home", kubeconfig)


def render(*values: str) -> list[Json]:
    return objects(gen_manifests.helm_template(*values))


def operator_container(docs: list[Json]) -> Json:
    [deployment] = [d for d in docs if d["kind"] == "Deployment"]
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    return dict(container)


# --- lint and render ---------------------------------------------------------------------------

@pytest.mark.parametrize("chart,values", [
    (CRD_CHART, ()), (OPERATOR_CHART, ()),
    (OPERATOR_CHART, VALUE_SETS["restricted"]), (OPERATOR_CHART, VALUE_SETS["everything"])])
async def test_helm_lint(helm: Helm, chart: Path, values: tuple[str, ...]) -> None:
    args = ["lint", "--strict", str(chart)]
    for value in values:
        args += ["--set", value]
    assert "0 chart(s) failed" in await helm(*args)


def test_chart_versions_follow_the_project() -> None:
    import tomllib
    version = tomllib.loads((OPERATOR_CHART.parents[2] / "pyproject.toml").read_text())[
        "project"]["version"]
    for chart in (CRD_CHART, OPERATOR_CHART):
        meta = yaml.safe_load((chart / "Chart.yaml").read_text())
        assert meta["appVersion"] == version


def test_crd_chart_files_are_the_generated_crds() -> None:
    names = sorted(p.name for p in CRD_DIR.glob("*.yaml"))
    assert names == sorted(p.name for p in (CRD_CHART / "files").glob("*.yaml"))
    for name in names:
        assert (CRD_CHART / "files" / name).read_text() == (CRD_DIR / name).read_text(), (
            f"run `python -m hack.gen_crds`: {name}")


async def test_crd_chart_renders_the_crds_kept_on_uninstall(helm: Helm) -> None:
    rendered = {d["metadata"]["name"]: d for d in objects(
        await helm("template", "crds", str(CRD_CHART)))}
    for path in sorted(CRD_DIR.glob("*.yaml")):
        [crd] = objects(path.read_text())
        got = rendered.pop(crd["metadata"]["name"])
        assert got["metadata"].pop("annotations") == {"helm.sh/resource-policy": "keep"}
        assert got["metadata"].pop("labels")["app.kubernetes.io/name"] == "dynamo-crds"
        assert got == crd
    assert not rendered


async def test_crd_chart_lets_cert_manager_inject_the_conversion_ca(helm: Helm) -> None:
    certificate = f"{NAMESPACE}/dynamo-operator-webhook"
    rendered = objects(await helm("template", "crds", str(CRD_CHART), "--set",
                                  f"certManager.injectCAFrom={certificate}"))
    assert len(rendered) == 6
    for crd in rendered:
        if crd["metadata"]["name"] == "dynamoworkermetadatas.nvidia.com":
            # One version, no conversion: no caBundle for cert-manager to keep.
            assert "conversion" not in crd["spec"]
            assert crd["metadata"]["annotations"] == {"helm.sh/resource-policy": "keep"}
            continue
        assert crd["metadata"]["annotations"] == {
            "helm.sh/resource-policy": "keep", "cert-manager.io/inject-ca-from": certificate}
        assert crd["spec"]["conversion"]["strategy"] == "Webhook"
    # The operator chart's Certificate has that name.
    [cert] = [d for d in render(*VALUE_SETS["everything"]) if d["kind"] == "Certificate"]
    assert f"{cert['metadata']['namespace']}/{cert['metadata']['name']}" == certificate


@pytest.mark.parametrize("name", sorted(VALUE_SETS))
def test_no_wildcard_rules(name: str) -> None:
    for role, rule in rules_of(render(*VALUE_SETS[name])):
        for field in ("apiGroups", "resources", "verbs", "resourceNames", "nonResourceURLs"):
            assert "*" not in (rule.get(field) or []), (role, rule)
            assert not any("*" in str(v) for v in rule.get(field) or []), (role, rule)
        assert rule["verbs"], (role, rule)


def test_restricted_mode_has_no_cluster_wide_grant_but_the_webhook_ca_and_reviews() -> None:
    docs = render(*VALUE_SETS["restricted-everything"])
    cluster_roles = {d["metadata"]["name"]: d["rules"] for d in docs
                     if d["kind"] == "ClusterRole"}
    assert cluster_roles == {
        "dynamo-operator-webhook-ca": [{
            "apiGroups": ["admissionregistration.k8s.io"],
            "resources": ["validatingwebhookconfigurations"], "verbs": ["get", "patch"],
            "resourceNames": ["dynamo-operator-validating"]}, {
            "apiGroups": ["admissionregistration.k8s.io"],
            "resources": ["mutatingwebhookconfigurations"], "verbs": ["get", "patch"],
            "resourceNames": ["dynamo-operator-mutating"]}],
        # Who scrapes /metrics: the reviews are cluster-scoped, and reveal nothing stored.
        "dynamo-operator-metrics-auth": [
            {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"],
             "verbs": ["create"]},
            {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"],
             "verbs": ["create"]}],
        # For the scraper, bound to nothing by the chart.
        "dynamo-operator-metrics-reader": [{"nonResourceURLs": ["/metrics"],
                                            "verbs": ["get"]}],
    }
    bindings = {d["roleRef"]["name"] for d in docs if d["kind"] == "ClusterRoleBinding"}
    assert "dynamo-operator-metrics-reader" not in bindings
    [manager] = [d for d in docs if d["kind"] == "Role"
                 and d["metadata"]["name"] == "dynamo-operator-manager"]
    assert manager["metadata"]["namespace"] == NAMESPACE
    assert not [r for r in manager["rules"] if "nodes" in r["resources"]]


def _grants(rules: list[Json], group: str, resource: str, verb: str) -> bool:
    return any(group in r["apiGroups"] and resource in r["resources"] and verb in r["verbs"]
               and not r.get("resourceNames") for r in rules)


@pytest.mark.parametrize("name", ["default", "restricted"])
def test_the_operator_holds_what_the_roles_it_creates_grant(name: str) -> None:
    """RBAC lets the operator create a Role only with permissions it holds (no `escalate`)."""
    from backends.graph_objects import discovery_rbac_of
    from backends.profiling_job import rbac as profiling_rbac
    from backends.shared_rbac import epp_rbac, planner_rbac

    docs = render(*VALUE_SETS[name])
    [manager] = [d for d in docs if d["metadata"]["name"] == "dynamo-operator-manager"
                 and d["kind"] in ("Role", "ClusterRole")]
    restricted = name == "restricted"
    # Cluster-wide, the chart names the EPP's ClusterRole, so the operator makes no epp-role.
    epp_cluster_role = "" if restricted else "dynamo-operator-epp"
    created = [*epp_rbac("ns", epp_cluster_role), *discovery_rbac_of("graph", "ns")]
    if restricted:
        created += [*planner_rbac("ns"), *(c.obj for c in profiling_rbac("ns", ""))]
    roles = [o for o in created if o["kind"] == "Role"]
    assert roles
    for role in roles:
        for rule in role["rules"]:
            for group in rule["apiGroups"]:
                for resource in rule["resources"]:
                    for verb in rule["verbs"]:
                        assert _grants(manager["rules"], group, resource, verb), (
                            role["metadata"]["name"], group, resource, verb)


def test_cluster_wide_binds_the_workload_cluster_roles_by_name() -> None:
    docs = render()
    [manager] = [d for d in docs if d["kind"] == "ClusterRole"
                 and d["metadata"]["name"] == "dynamo-operator-manager"]
    [bind] = [r for r in manager["rules"] if r["verbs"] == ["bind"]]
    assert bind["resources"] == ["clusterroles"]
    names = {d["metadata"]["name"] for d in docs if d["kind"] == "ClusterRole"}
    assert set(bind["resourceNames"]) <= names
    args = operator_container(docs)["args"]
    for role in bind["resourceNames"]:
        assert any(a.endswith("=" + role) for a in args)


def test_cluster_wide_binds_the_epp_to_its_cluster_role() -> None:
    """The original's chart makes the ClusterRole `<fullname>-epp` in cluster-wide mode."""
    docs = render()
    [role] = [d for d in docs if d["kind"] == "ClusterRole"
              and d["metadata"]["name"] == "dynamo-operator-epp"]
    assert {"apiGroups": ["inference.networking.k8s.io"],
            "resources": ["inferencepools", "inferencepools/status"],
            "verbs": ["get", "list", "watch"]} in role["rules"]
    options = parse_options(operator_container(docs)["args"])
    assert options is not None
    assert options.epp_cluster_role_name == "dynamo-operator-epp"


@pytest.mark.parametrize("name", sorted(VALUE_SETS))
def test_the_deployment_args_are_the_operators_flags(name: str) -> None:
    docs = render(*VALUE_SETS[name])
    container = operator_container(docs)
    options = parse_options(container["args"])
    assert options is not None
    assert container["securityContext"] == {
        "allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]}}
    env = {e["name"]: e["valueFrom"]["fieldRef"]["fieldPath"] for e in container["env"]}
    assert env == {"POD_NAME": "metadata.name", "POD_NAMESPACE": "metadata.namespace"}
    assert container["livenessProbe"]["httpGet"]["port"] == "health"
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports["health"] == 8081
    if name == "minimal":
        assert "--metrics-bind-address=0" in container["args"]
        assert set(ports) == {"health"}
    else:
        assert ports["metrics"] == 8080


def test_default_install_shape() -> None:
    docs = render()
    [deployment] = [d for d in docs if d["kind"] == "Deployment"]
    spec = deployment["spec"]
    assert spec["replicas"] == 2
    pod = spec["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert pod["terminationGracePeriodSeconds"] == 30
    assert pod["affinity"]["podAntiAffinity"]
    assert any(d["kind"] == "PodDisruptionBudget" for d in docs)
    args = operator_container(docs)["args"]
    assert "--enable-webhooks=true" in args and "--leader-elect=true" in args


def test_webhooks_are_the_operators() -> None:
    [config] = [d for d in render() if d["kind"] == "ValidatingWebhookConfiguration"]
    got = {(w["name"], w["clientConfig"]["service"]["path"], w["rules"][0]["resources"][0])
           for w in config["webhooks"]}
    assert got == {(w.name, w.path, w.plural) for w in WEBHOOKS}
    for webhook in config["webhooks"]:
        assert webhook["rules"][0]["apiVersions"] == list(API_VERSIONS)
        excluded = webhook["namespaceSelector"]["matchExpressions"][0]["values"]
        assert set(excluded) == {"kube-system", NAMESPACE}
        assert webhook["failurePolicy"] == "Fail"


def test_the_mutating_webhook_is_the_operators() -> None:
    """The origin-version stamp (reconcilers/operator/defaulting.py): the chart's
    configuration is the one the operator keeps with --webhook-url, but for the Service."""
    from reconcilers.operator.webhook_setup import WebhookSettings, desired_mutating_configuration

    [config] = [d for d in render() if d["kind"] == "MutatingWebhookConfiguration"]
    args = operator_container(render())["args"]
    assert f"--mutating-webhook-configuration-name={config['metadata']['name']}" in args
    [hook] = config["webhooks"]
    [own] = desired_mutating_configuration(WebhookSettings(url="https://x"), None)["webhooks"]
    assert hook["clientConfig"]["service"]["path"] == own["clientConfig"]["url"][len("https://x"):]
    for key in ("name", "rules", "sideEffects", "matchPolicy", "reinvocationPolicy",
                "admissionReviewVersions", "failurePolicy"):
        assert hook[key] == own[key], key
    excluded = hook["namespaceSelector"]["matchExpressions"][0]["values"]
    assert set(excluded) == {"kube-system", NAMESPACE}


@pytest.mark.parametrize("name", ["default", "everything"])
def test_cluster_wide_may_patch_the_conversion_of_our_crds_only(name: str) -> None:
    """The conversion webhook's clientConfig and caBundle (reconcilers/operator/
    conversion_setup.py): get and patch of our five CRDs, by name, and the patch of their
    status (the storage migration trims storedVersions), nothing else of apiextensions; with
    or without cert-manager."""
    from reconcilers.operator.conversion_setup import CONVERSION_CRDS

    docs = render(*VALUE_SETS[name])
    crd_rules = [(role, rule) for role, rule in rules_of(docs)
                 if "apiextensions.k8s.io" in rule.get("apiGroups", ())]
    assert crd_rules == [("dynamo-operator-crd-conversion", {
        "apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"],
        "verbs": ["get", "patch"], "resourceNames": sorted(CONVERSION_CRDS)}),
        ("dynamo-operator-crd-conversion", {
            "apiGroups": ["apiextensions.k8s.io"],
            "resources": ["customresourcedefinitions/status"],
            "verbs": ["patch"], "resourceNames": sorted(CONVERSION_CRDS)})]
    [binding] = [d for d in docs if d["kind"] == "ClusterRoleBinding"
                 and d["roleRef"]["name"] == "dynamo-operator-crd-conversion"]
    assert binding["subjects"][0]["namespace"] == NAMESPACE


@pytest.mark.parametrize("name", ["restricted", "minimal"])
def test_no_crd_grant_without_webhooks_or_when_restricted(name: str) -> None:
    assert not [rule for _, rule in rules_of(render(*VALUE_SETS[name]))
                if "apiextensions.k8s.io" in rule.get("apiGroups", ())]


# --- against the local API server -------------------------------------------------------------

@pytest.mark.parametrize("name", ["default", "restricted"])
async def test_rendering_passes_server_dry_run(cluster: LocalCluster, kubectl: Kubectl,
                                               name: str) -> None:
    await kubectl("create", "namespace", NAMESPACE)
    text = gen_manifests.helm_template(*VALUE_SETS[name])
    out = await kubectl("apply", "--dry-run=server", "-f", "-", stdin=text)
    assert out.count("(server dry run)") == len(objects(text))


def _normalized(docs: list[Json]) -> dict[tuple[str, str, str], Json]:
    return {k: v for k, v in by_key(docs).items() if k[0] not in ("Namespace",
                                                                  "CustomResourceDefinition")}


@pytest.mark.parametrize("base", sorted(gen_manifests.BASES))
async def test_kustomize_manifests_equal_the_chart(kubectl: Kubectl, base: str) -> None:
    assert gen_manifests.stale_files() == [], "run `python -m hack.gen_manifests`"
    built = objects(await kubectl("kustomize", str(gen_manifests.MANIFESTS / base)))
    rendered = render(*gen_manifests.BASES[base])
    assert _normalized(built) == _normalized(rendered)
    crds = {d["metadata"]["name"] for d in built if d["kind"] == "CustomResourceDefinition"}
    assert len(crds) == len(list(CRD_DIR.glob("*.yaml")))


async def test_apply_k_installs_without_helm(cluster: LocalCluster, kubectl: Kubectl) -> None:
    out = await kubectl("apply", "-k", str(gen_manifests.MANIFESTS / "cluster-wide"))
    assert "deployment.apps/dynamo-operator created" in out
    assert "dynamographdeployments.nvidia.com created" in out


async def test_helm_install_then_upgrade_changes_the_served_crd(
        cluster_helm: Helm, kubectl: Kubectl, tmp_path: Path) -> None:
    await cluster_helm("install", "dynamo-crds", str(CRD_CHART))
    await cluster_helm("install", "dynamo-operator", str(OPERATOR_CHART), "--namespace",
                       NAMESPACE, "--create-namespace")
    assert "dynamo-operator-manager" in await kubectl("get", "clusterroles", "-o", "name")

    chart = tmp_path / "dynamo-crds"
    shutil.copytree(CRD_CHART, chart)
    path = chart / "files" / "nvidia.com_dynamomodels.yaml"
    [crd] = objects(path.read_text())
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["properties"]["spec"]["properties"]["addedByUpgrade"] = {"type": "string"}
    path.write_text("---\n" + yaml.safe_dump(crd, sort_keys=False))
    await cluster_helm("upgrade", "dynamo-crds", str(chart))

    async def served() -> bool:
        out = await kubectl("get", "crd", "dynamomodels.nvidia.com", "-o",
                            "jsonpath={.spec.versions[0].schema.openAPIV3Schema"
                            ".properties.spec.properties.addedByUpgrade.type}")
        return out == "string"

    await eventually(served, within=10, what="the upgraded CRD")
    history = await cluster_helm("history", "dynamo-crds", "-o", "yaml")
    assert [r["revision"] for r in yaml.safe_load(history)] == [1, 2]
    # Uninstalling the CRD chart keeps the CRDs (helm.sh/resource-policy: keep).
    await cluster_helm("uninstall", "dynamo-crds")
    assert "dynamomodels.nvidia.com" in await kubectl("get", "crd", "-o", "name")


def test_every_resource_the_code_names_has_a_rule() -> None:
    """A resource added to reconcilers/machinery/resources.py needs its rule in the chart."""
    from controller.resource import Resource
    from reconcilers.machinery import resources

    named = [v for v in vars(resources).values() if isinstance(v, Resource)]
    assert len(named) > 20
    rules = [rule for _, rule in rules_of(render(*VALUE_SETS["everything"]))]
    for resource in named:
        assert any(resource.group in r.get("apiGroups", ())
                   and resource.plural in r.get("resources", ())
                   for r in rules), f"no rule for {resource.plural}.{resource.group}"
