"""Decoding a CRD drops the schema fields JSONSchemaProps lacks, or refuses them under
fieldValidation=Strict (as kube-apiserver's decoder does); Agones' own CRDs pass strict decoding."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from agones.localcluster import ServerOptions, ThreadedAPIServer
from tests.cluster import Cluster

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def local() -> Iterator[Cluster]:
    runner = ThreadedAPIServer(ServerOptions())
    srv = runner.start()
    yield Cluster(srv.kubeconfig, local=True, url=srv.url)
    runner.stop()


def crd_with_unknown_field(group: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"things.{group}"},
        "spec": {
            "group": group,
            "names": {"plural": "things", "kind": "Thing"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {"spec": {"type": "string", "colour": "blue"}},
                        }
                    },
                }
            ],
        },
    }


def test_strict_decoding_refuses_an_unknown_schema_field(local: Cluster) -> None:
    resp = local.api.post(
        CRDS, crd_with_unknown_field("strict.example.com"), fieldValidation="Strict"
    )
    assert resp.status == 400, resp
    assert (
        'strict decoding error: unknown field "spec.versions[0].schema.openAPIV3Schema'
        '.properties.spec.colour"'
    ) in resp.body["message"]


def test_lax_decoding_drops_an_unknown_schema_field(local: Cluster) -> None:
    resp = local.api.post(CRDS, crd_with_unknown_field("lax.example.com"))
    assert resp.status == 201, resp
    stored = resp.body["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert stored["properties"]["spec"] == {"type": "string"}


@pytest.mark.parametrize("path", sorted((ROOT / "crds").glob("*.yaml")), ids=lambda p: p.stem)
def test_agones_crds_pass_strict_decoding(local: Cluster, path: Path) -> None:
    crd = yaml.safe_load(path.read_text())
    resp = local.api.post(CRDS, crd, fieldValidation="Strict", dryRun="All")
    assert resp.status == 201, resp
