"""The operator's flags: values, aliases, and bad input failing fast with status 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from reconcilers.machinery.context import OperatorContext
from reconcilers.operator import flags as operator_flags
from reconcilers.operator.api_discovery import MissingApi, ServedApis
from reconcilers.operator.flags import Address, parse_duration, parse_options
from reconcilers.operator.process import main, manager_config, operator_settings

IN_POD = ["--leader-election-namespace", "ops"]


def test_defaults() -> None:
    options = parse_options(IN_POD)
    assert options.leader_elect is True
    assert options.leader_election_id == "dynamo-operator-leader"
    assert options.health_probe_address == Address("", 8081)
    assert options.metrics_address == Address("", 8080)
    assert options.restricted_namespace is None
    assert options.discovery_backend == "kubernetes"
    assert (options.kube_api_qps, options.kube_api_burst) == (0.0, 30)
    config = manager_config(options)
    assert config.leader_election is not None
    assert (config.leader_election.name, config.leader_election.namespace) == (
        "dynamo-operator-leader", "ops")
    assert (config.status_port, config.metrics_port) == (8081, 8080)


def test_lease_namespace_from_the_pod(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POD_NAMESPACE", "dynamo-system")
    assert parse_options([]).leader_election_namespace == "dynamo-system"


def test_original_spellings_and_go_booleans() -> None:
    options = parse_options([*IN_POD, "--restrictedNamespace=team-a", "--natsAddr", "nats://n:4222",
                             "--etcdAddr=etcd:2379", "--leader-elect=false",
                             "--enable-webhooks=true", "--max-concurrent-reconciles=4",
                             "--max-concurrent-reconciles", "dynamographdeployment=8",
                             "--health-probe-bind-address=127.0.0.1:9000",
                             "--grove-termination-delay=1h30m", "--lws=false"])
    assert options.restricted_namespace == "team-a"
    assert options.nats_address == "nats://n:4222"
    assert options.etcd_address == "etcd:2379"
    assert options.leader_elect is False
    assert options.enable_webhooks is True and options.unsupported == []
    assert (options.default_workers, options.workers) == (4, {"dynamographdeployment": 8})
    assert options.health_probe_address == Address("127.0.0.1", 9000)
    assert options.grove_termination_delay == 5400.0
    assert manager_config(options).namespace == "team-a"


def test_dgdr_profiling_cluster_role_is_an_option() -> None:
    options = parse_options([*IN_POD, "--dgdr-profiling-cluster-role-name=dynamo-profiling"])
    assert options.dgdr_profiling_cluster_role_name == "dynamo-profiling"
    assert options.unsupported == []


def test_epp_cluster_role_is_an_option() -> None:
    assert parse_options(IN_POD).epp_cluster_role_name == ""
    options = parse_options([*IN_POD, "--epp-cluster-role-name=dynamo-operator-epp"])
    assert options.epp_cluster_role_name == "dynamo-operator-epp"


def test_webhook_flags() -> None:
    options = parse_options(IN_POD)
    assert options.enable_webhooks is False
    assert (options.webhook_port, str(options.webhook_cert_dir)) == (
        9443, "/tmp/k8s-webhook-server/serving-certs")
    options = parse_options([*IN_POD, "--enable-webhooks", "--webhook-port=9444",
                             "--webhook-url=https://127.0.0.1:9444",
                             "--webhook-cert-validity=1h"])
    assert options.enable_webhooks and options.webhook_port == 9444
    assert options.webhook_url == "https://127.0.0.1:9444"
    assert options.webhook_cert_validity == 3600.0
    with pytest.raises(SystemExit):
        parse_options([*IN_POD, "--webhook-url=http://127.0.0.1:9444"])


def test_webhook_url_alone_turns_the_webhooks_on(capsys: pytest.CaptureFixture[str]) -> None:
    options = parse_options([*IN_POD, "--webhook-url=https://127.0.0.1:9444"])
    assert options.enable_webhooks and options.webhook_url == "https://127.0.0.1:9444"
    assert parse_options([*IN_POD, "--enable-webhooks"]).webhook_url == ""
    with pytest.raises(SystemExit):
        parse_options([*IN_POD, "--enable-webhooks=false", "--webhook-url=https://127.0.0.1:1"])
    err = capsys.readouterr().err
    assert "--webhook-url" in err and "drop --enable-webhooks=false" in err


def test_durations() -> None:
    assert parse_duration("500ms") == 0.5
    assert parse_duration("2m3s") == 123.0
    assert parse_duration("0") == 0.0


@pytest.mark.parametrize(("argv", "flag"), [
    (["--discovery-backend", "zookeeper"], "--discovery-backend"),
    (["--model-express-url", "not a url"], "--model-express-url"),
    (["--prometheus-endpoint", "localhost"], "--prometheus-endpoint"),
    (["--metrics-bind-address", "8080"], "--metrics-bind-address"),
    (["--kube-api-qps", "-1"], "--kube-api-qps"),
    (["--kube-api-burst", "0"], "--kube-api-burst"),
    (["--max-concurrent-reconciles", "dcd=0"], "--max-concurrent-reconciles"),
    (["--leader-elect", "maybe"], "--leader-elect"),
    (["--grove-termination-delay", "15 minutes"], "--grove-termination-delay"),
    (["--log-level", "loud"], "--log-level"),
    (["--log-format", "xml"], "--log-format"),
    (["--lws", "sometimes"], "--lws"),
    (["--leader-election-lease-duration", "5s"], "--leader-election-renew-deadline"),
    (["--no-such-flag"], "--no-such-flag"),
    (["--dynamo-version", "v1.4.0"], "--dynamo-version"),
    (["--dynamo-version", "1.04.0"], "--dynamo-version"),
    (["--dynamo-version", "1.4.0-rc1"], "--dynamo-version"),
])
def test_bad_flags_exit_2_naming_the_flag(argv: list[str], flag: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*IN_POD, *argv]) == 2
    assert flag in capsys.readouterr().err


def test_leader_election_needs_a_namespace_outside_a_pod(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        tmp_path: Path) -> None:
    monkeypatch.delenv("POD_NAMESPACE", raising=False)
    monkeypatch.setattr(operator_flags, "SERVICE_ACCOUNT_NAMESPACE", tmp_path / "none")
    assert main([]) == 2
    assert "--leader-election-namespace" in capsys.readouterr().err
    assert parse_options(["--leader-elect=false"]).leader_elect is False


def test_console_script_fails_fast() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "reconcilers.operator", "--discovery-backend", "x"],
        capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 2
    assert "argument --discovery-backend: invalid choice: 'x'" in done.stderr


def test_optional_apis_follow_discovery_unless_forced() -> None:
    served = ServedApis(frozenset({"leaderworkerset.x-k8s.io", "grove.io"}))
    settings = operator_settings(parse_options(IN_POD), served)
    assert (settings.grove_enabled, settings.lws_enabled, settings.volcano_enabled) == (
        True, True, False)
    settings = operator_settings(parse_options([*IN_POD, "--grove=false"]), served)
    assert settings.grove_enabled is False
    with pytest.raises(MissingApi, match="--volcano=true"):
        operator_settings(parse_options([*IN_POD, "--volcano=true"]), served)
    with pytest.raises(MissingApi, match=r"networking\.istio\.io"):
        operator_settings(parse_options([*IN_POD, "--istio-virtual-service-gateway=gw"]),
                          served)


def test_the_dynamo_release_of_default_images_is_an_option() -> None:
    served = ServedApis(frozenset())
    assert operator_settings(parse_options(IN_POD), served).dynamo_version == "1.4.0"
    settings = operator_settings(parse_options([*IN_POD, "--dynamo-version=1.5.2"]), served)
    assert settings.dynamo_version == "1.5.2"


def test_mpi_secret_namespace_is_an_option_defaulting_to_the_pods(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("POD_NAMESPACE", raising=False)
    monkeypatch.setattr(operator_flags, "SERVICE_ACCOUNT_NAMESPACE", Path("/nonexistent"))
    options = parse_options([*IN_POD, "--mpi-run-ssh-secret-namespace=keys"])
    assert options.unsupported == []
    settings = operator_settings(options, ServedApis(frozenset()))
    assert settings.mpi_run_secret_namespace == "keys"
    assert parse_options(IN_POD).mpi_run_ssh_secret_namespace == ""
    monkeypatch.setenv("POD_NAMESPACE", "dynamo-system")
    assert parse_options(IN_POD).mpi_run_ssh_secret_namespace == "dynamo-system"


def test_the_inference_pool_api_is_discovered() -> None:
    options = parse_options(IN_POD)
    assert not operator_settings(options, ServedApis(frozenset())).inference_pool_enabled
    served = ServedApis(frozenset({"inference.networking.k8s.io"}))
    assert operator_settings(options, served).inference_pool_enabled


def test_workers_per_controller_by_its_kind_in_any_case() -> None:
    """Controllers are named by their kind (as the original's); the older lower-case spelling
    of `--max-concurrent-reconciles CONTROLLER=N` still names the same controller."""
    options = parse_options([*IN_POD, "--max-concurrent-reconciles=2",
                             "--max-concurrent-reconciles", "dynamographdeployment=8",
                             "--max-concurrent-reconciles", "DynamoModel=3"])
    ctx = OperatorContext(client=None, cache=None, settings=None,  # type: ignore[arg-type]
                          workers=options.workers, default_workers=options.default_workers)
    assert ctx.max_concurrent_reconciles("DynamoGraphDeployment") == 8
    assert ctx.max_concurrent_reconciles("dynamographdeployment") == 8
    assert ctx.max_concurrent_reconciles("DynamoModel") == 3
    assert ctx.max_concurrent_reconciles("dynamomodel") == 3
    assert ctx.max_concurrent_reconciles("DynamoComponentDeployment") == 2
