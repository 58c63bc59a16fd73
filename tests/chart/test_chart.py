"""charts/agones through real Helm (helm-python-sdk): lint, render, schema-validate, wire to the commands.

Every rendered object is validated against Kubernetes' OpenAPI schemas (kubernetes-validate, strict:
unknown fields fail) for the oldest Kubernetes the local cluster claims and a current one; every
container's env must be flags its `agones` sub-command has, and must parse there.
"""

from __future__ import annotations

import argparse
import base64
import json
from typing import Any

import kubernetes_validate
import pytest
from cryptography import x509

from agones.cmd.main import build_parser
from agones.featuregates import FEATURES
from tools import helmchart

pytest.importorskip("helm_python")

NO_SCHEMA = {"ServiceMonitor"}  # a Prometheus Operator CRD: no Kubernetes schema to check against
KUBE_VERSIONS = ["1.28.0", "1.34.0"]

VARIANTS: dict[str, dict[str, Any]] = {
    "defaults": {},
    "replicas-1": {"agones": {"controller": {"replicas": 1}, "extensions": {"replicas": 1}}},
    "tls-off": {"agones": {"allocator": {"disableTLS": True, "disableMTLS": True}}},
    "mtls-off": {"agones": {"allocator": {"disableMTLS": True}}},
    "port-ranges": {
        "gameservers": {
            "minPort": 7000,
            "maxPort": 7500,
            "additionalPortRanges": {"game": [9000, 9100], "voice": [9200, 9300]},
            "namespaces": ["default", "games"],
        }
    },
    "feature-gates": {
        "agones": {
            "featureGates": "PlayerTracking=true&CountsAndLists=false",
            "metrics": {"serviceMonitor": {"enabled": True}},
        }
    },
    "minimal": {
        "agones": {
            "crds": {"install": False},
            "allocator": {"install": False},
            "ping": {"install": False},
            "registerApiService": False,
            "registerWebhooks": False,
            "createPriorityClass": False,
        }
    },
    "own-certs": {
        "agones": {
            "controller": {"generateTLS": False, "tlsCert": "CERT", "tlsKey": "KEY"},
            "allocator": {"generateTLS": False, "tlsCert": "ACERT", "tlsKey": "AKEY"},
        }
    },
}


def by_kind(objs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in objs if o["kind"] == kind}


def container_env(deployment: dict[str, Any]) -> dict[str, str]:
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    return {e["name"]: e["value"] for e in container["env"] if "value" in e}


@pytest.mark.parametrize("name", VARIANTS, ids=list(VARIANTS))
def test_lint_strict_is_clean(name: str) -> None:
    report = helmchart.lint(VARIANTS[name])
    assert report["messages"] == [] and report["errors"] == []


@pytest.mark.parametrize(
    "values,needle",
    [
        ({"agones": {"featureGates": "PlayerTracking"}}, "featureGates"),
        ({"agones": {"controller": {"replicas": -1}}}, "replicas"),
        ({"gameservers": {"minPort": 0}}, "minPort"),
        ({"agones": {"allocator": {"remoteAllocationTimeout": "10"}}}, "remoteAllocationTimeout"),
        ({"gameservers": {"additionalPortRanges": {"game": [9000]}}}, "additionalPortRanges"),
    ],
    ids=[
        "gate-without-value",
        "negative-replicas",
        "port-zero",
        "duration-no-unit",
        "range-one-end",
    ],
)
def test_lint_rejects_bad_values_by_schema(values: dict[str, Any], needle: str) -> None:
    report = helmchart.lint(values)
    assert any(needle in e for e in report["errors"]), report


@pytest.mark.parametrize("kube", KUBE_VERSIONS)
@pytest.mark.parametrize("name", VARIANTS, ids=list(VARIANTS))
def test_every_object_is_valid_against_kubernetes_schemas(name: str, kube: str) -> None:
    objs = helmchart.objects(VARIANTS[name])
    assert objs
    checked = 0
    for obj in objs:
        if obj["kind"] in NO_SCHEMA:
            continue
        kubernetes_validate.validate(obj, kube, strict=True)
        checked += 1
    assert checked >= len(objs) - 3


@pytest.mark.parametrize(
    "breakage",
    [
        lambda d: d["spec"]["template"]["spec"]["containers"][0].update(imagePullPolicy=3),
        lambda d: d["spec"].update(replica=2),
        lambda d: d["spec"]["template"]["spec"]["containers"][0].pop("name"),
    ],
    ids=["wrong-type", "unknown-field", "missing-required"],
)
def test_schema_validation_catches_a_broken_object(breakage: Any) -> None:
    deployment = by_kind(helmchart.objects(), "Deployment")["agones-controller"]
    breakage(deployment)
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, KUBE_VERSIONS[0], strict=True)


def test_defaults_render_every_component() -> None:
    objs = helmchart.objects()
    deployments = by_kind(objs, "Deployment")
    assert set(deployments) == {
        "agones-controller",
        "agones-extensions",
        "agones-allocator",
        "agones-ping",
    }
    assert deployments["agones-controller"]["spec"]["replicas"] == 2
    assert container_env(deployments["agones-controller"])["LEADER_ELECTION"] == "true"
    assert set(by_kind(objs, "CustomResourceDefinition")) == {
        "gameservers.agones.dev",
        "gameserversets.agones.dev",
        "fleets.agones.dev",
        "fleetautoscalers.autoscaling.agones.dev",
        "gameserverallocationpolicies.multicluster.agones.dev",
    }
    services = by_kind(objs, "Service")
    assert services["agones-ping-http-service"]["spec"]["ports"][0]["port"] == 80
    udp = services["agones-ping-udp-service"]["spec"]["ports"][0]
    assert (udp["port"], udp["protocol"]) == (50000, "UDP")
    assert [p["port"] for p in services["agones-allocator"]["spec"]["ports"]] == [443]
    assert set(by_kind(objs, "PodDisruptionBudget")) == {
        "agones-controller-pdb",
        "agones-extensions-pdb",
    }
    assert by_kind(objs, "ServiceMonitor") == {}


def test_replicas_one_turns_leader_election_off() -> None:
    objs = helmchart.objects(VARIANTS["replicas-1"])
    controller = by_kind(objs, "Deployment")["agones-controller"]
    assert controller["spec"]["replicas"] == 1
    assert container_env(controller)["LEADER_ELECTION"] == "false"


def test_tls_off_drops_allocator_certificates() -> None:
    objs = helmchart.objects(VARIANTS["tls-off"])
    allocator = by_kind(objs, "Deployment")["agones-allocator"]
    env = container_env(allocator)
    assert (env["DISABLE_TLS"], env["DISABLE_MTLS"]) == ("true", "true")
    assert not [v for v in allocator["spec"]["template"]["spec"]["volumes"] if "secret" in v]
    assert not [s for s in by_kind(objs, "Secret") if s.startswith("allocator-")]


def test_port_ranges_and_namespaces_reach_the_controller() -> None:
    objs = helmchart.objects(VARIANTS["port-ranges"])
    env = container_env(by_kind(objs, "Deployment")["agones-controller"])
    assert (env["MIN_PORT"], env["MAX_PORT"]) == ("7000", "7500")
    assert json.loads(env["ADDITIONAL_PORT_RANGES"]) == {
        "game": [9000, 9100],
        "voice": [9200, 9300],
    }
    accounts = [
        o for o in objs if o["kind"] == "ServiceAccount" and o["metadata"]["name"] == "agones-sdk"
    ]
    assert sorted(a["metadata"]["namespace"] for a in accounts) == ["default", "games"]
    bindings = [
        o
        for o in objs
        if o["kind"] == "RoleBinding" and o["metadata"]["name"] == "agones-sdk-access"
    ]
    assert sorted(b["metadata"]["namespace"] for b in bindings) == ["default", "games"]


def test_feature_gates_reach_every_component_and_service_monitors_render() -> None:
    objs = helmchart.objects(VARIANTS["feature-gates"])
    gates = VARIANTS["feature-gates"]["agones"]["featureGates"]
    for name in ("agones-controller", "agones-extensions", "agones-allocator"):
        assert container_env(by_kind(objs, "Deployment")[name])["FEATURE_GATES"] == gates
    assert set(by_kind(objs, "ServiceMonitor")) == {
        "agones-controller-monitor",
        "agones-extensions-monitor",
        "agones-allocator-monitor",
    }


def test_unknown_feature_gate_fails_the_render() -> None:
    with pytest.raises(Exception, match='Unknown feature gate "NoSuchGate"'):
        helmchart.render({"agones": {"featureGates": "PlayerTracking=true&NoSuchGate=true"}})


def test_feature_gates_shown_are_the_defaults_with_the_values_over_them() -> None:
    notes = helmchart.render({"agones": {"featureGates": "PlayerTracking=true&CountsAndLists=0"}})[
        "agones/templates/NOTES.txt"
    ]
    shown = dict(kv.split("=") for kv in notes.split("Feature gates: ")[1].split("\n")[0].split())
    expected = {f.value: str(spec.default).lower() for f, spec in FEATURES.items()}
    expected |= {"PlayerTracking": "true", "CountsAndLists": "false"}
    assert shown == expected


def test_sdk_account_may_do_only_what_the_sidecar_does() -> None:
    role = by_kind(helmchart.objects(), "ClusterRole")["agones-sdk"]
    rules = {
        (g, r): sorted(rule["verbs"])
        for rule in role["rules"]
        for g in rule["apiGroups"]
        for r in rule["resources"]
    }
    assert rules == {
        ("", "events"): ["create"],
        ("agones.dev", "gameservers"): ["get", "list", "patch", "update", "watch"],
    }


def test_generated_certificates_chain_and_name_the_services() -> None:
    objs = helmchart.objects()
    secrets = by_kind(objs, "Secret")
    webhook_ca = x509.load_pem_x509_certificate(
        base64.b64decode(
            by_kind(objs, "APIService")["v1.allocation.agones.dev"]["spec"]["caBundle"]
        )
    )
    serving = x509.load_pem_x509_certificate(
        base64.b64decode(secrets["agones-cert"]["data"]["server.crt"])
    )
    serving.verify_directly_issued_by(webhook_ca)
    names = serving.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "agones-controller-service.agones-system.svc" in names.get_values_for_type(x509.DNSName)
    client = x509.load_pem_x509_certificate(
        base64.b64decode(secrets["allocator-client.default"]["data"]["tls.crt"])
    )
    client_ca = x509.load_pem_x509_certificate(
        base64.b64decode(secrets["allocator-client-ca"]["data"]["client-ca.crt"])
    )
    client.verify_directly_issued_by(client_ca)


def subcommand_parser(command: str) -> argparse.ArgumentParser:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    found: argparse.ArgumentParser = sub.choices[command]
    return found


@pytest.mark.parametrize("name", VARIANTS, ids=list(VARIANTS))
def test_containers_run_agones_subcommands_with_env_they_parse(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for deployment in by_kind(helmchart.objects(VARIANTS[name]), "Deployment").values():
        container = deployment["spec"]["template"]["spec"]["containers"][0]
        (command,) = container["args"]
        flags = {
            opt[2:].upper().replace("-", "_")
            for action in subcommand_parser(command)._actions
            for opt in action.option_strings
            if opt.startswith("--")
        }
        env = {e["name"]: e.get("value", "x") for e in container["env"]}
        assert set(env) <= flags, f"{command}: env without a flag: {set(env) - flags}"
        with monkeypatch.context() as m:
            for key, value in env.items():
                m.setenv(key, value)
            build_parser().parse_args([command])  # exits (SystemExit) on a value it cannot parse


def test_install_yaml_is_fresh() -> None:
    current = helmchart.INSTALL_YAML.read_text()
    assert helmchart.normalise(current) == helmchart.normalise(helmchart.install_yaml()), (
        "install/yaml/install.yaml is stale: run `python -m tools.helmchart`"
    )
