"""examples/zone-servers/chart through real Helm (helm-python-sdk): lint, the values schema, every
rendered object valid against Kubernetes' schemas, the zone count driving the StatefulSet and the
per-zone Services, and the packed configuration archive fresh and unpacking to `config/`."""

from __future__ import annotations

import base64
import gzip
import importlib.util
import io
import tarfile
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

helm = pytest.importorskip("helm_python")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "zone-servers"
CHART = EXAMPLE / "chart"


def objects(values: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    with helm.Chart.load(str(CHART)) as chart:
        rendered = chart.render(values, name="zs", namespace="games", is_install=True)
    out: list[dict[str, Any]] = []
    for path, text in sorted(rendered.items()):
        if not path.endswith(".txt"):
            out.extend(doc for doc in yaml.safe_load_all(text) if doc)
    return out


def named(objs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in objs if o["kind"] == kind}


def test_lint_strict_is_clean() -> None:
    report = helm.lint(str(CHART), {}, strict=True)
    assert report["messages"] == [] and report["errors"] == []


@pytest.mark.parametrize(
    ("values", "needle"),
    [
        pytest.param({"zones": {"count": -1}}, "count", id="negative-zones"),
        pytest.param({"zones": {"storage": "lots"}}, "storage", id="storage"),
        pytest.param({"gates": {"port": 70000}}, "port", id="port"),
    ],
)
def test_lint_rejects_bad_values(values: dict[str, Any], needle: str) -> None:
    report = helm.lint(str(CHART), values, strict=True)
    assert any(needle in e for e in report["errors"]), report


@pytest.mark.parametrize("kube", ["1.28.0", "1.34.0"])
def test_every_object_is_valid_against_kubernetes_schemas(kube: str) -> None:
    objs = objects()
    for obj in objs:
        kubernetes_validate.validate(obj, kube, strict=True)
    kinds = sorted({o["kind"] for o in objs})
    assert kinds == ["ConfigMap", "Deployment", "Service", "StatefulSet"]


@pytest.mark.parametrize("count", [0, 1, 5])
def test_the_zone_count_drives_replicas_services_and_gates(count: int) -> None:
    objs = objects({"zones": {"count": count}})
    sets = named(objs, "StatefulSet")
    assert sets["zs-zone"]["spec"]["replicas"] == count
    per_zone = sorted(n for n in named(objs, "Service") if n.startswith("zs-zone-"))
    assert per_zone == sorted(f"zs-zone-{i}" for i in range(count))
    gate_env = {
        e["name"]: e["value"]
        for e in sets["zs-gate"]["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    assert gate_env["ZONE_COUNT"] == str(count)
    assert sets["zs-zone"]["spec"]["serviceName"] == "zs-zone"


def test_zone_pods_wait_for_the_db_unpack_the_config_and_save_on_prestop() -> None:
    spec = named(objects(), "StatefulSet")["zs-zone"]["spec"]
    pod = spec["template"]["spec"]
    assert [c["name"] for c in pod["initContainers"]] == ["unpack-config", "wait-for-db"]
    assert "until getent hosts zs-db" in pod["initContainers"][1]["command"][2]
    prestop = pod["containers"][0]["lifecycle"]["preStop"]["exec"]["command"]
    assert "/save-and-exit" in prestop[-1]
    assert spec["volumeClaimTemplates"][0]["metadata"]["name"] == "save"
    db = named(objects(), "Service")["zs-db"]
    assert db["spec"]["clusterIP"] == "None"


def _pack_config() -> Any:
    spec = importlib.util.spec_from_file_location("pack_config", EXAMPLE / "pack_config.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_packed_config_is_fresh_and_is_what_the_configmap_carries() -> None:
    packer = _pack_config()
    assert packer.main(["--check"]) == 0
    cm = named(objects(), "ConfigMap")["zs-config"]
    archive = base64.b64decode(cm["binaryData"]["config.tar.gz"])
    assert archive == (CHART / "files" / "config.tar.gz").read_bytes()
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(archive))) as tar:
        members = {m.name: m for m in tar.getmembers() if m.isfile()}
        assert set(members) == {"server.json", "zones/names.txt"}
        extracted = tar.extractfile(members["zones/names.txt"])
        assert extracted is not None
        assert extracted.read() == (EXAMPLE / "config" / "zones" / "names.txt").read_bytes()
