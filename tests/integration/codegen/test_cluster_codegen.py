"""Against a real (or the local) API server: the generated CRDs pass the apiserver's own CRD
validation (server-side dry run, so the cluster is not changed), and the typed clients round-trip
an Agones manifest when the CRDs are installed.

The cluster comes from the project's `kubeconfig` fixture, else `$KUBECONFIG`; without either, or
when the server does not answer, the tests skip.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml

from agones.apis.agones.v1 import GameServer
from agones.client import errors
from agones.client.config import load_kube_config
from agones.client.rest import Resource, RESTClient
from agones.client.versioned import Clientset

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(60)]

ROOT = Path(__file__).resolve().parents[3]
# Copies of shared/fixtures/agones-oracle (what Agones itself returned), kept in the repository.
ORACLE = ROOT / "tests" / "fixtures" / "agones-oracle" / "valid"
CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions", namespaced=False)


@pytest.fixture
def cluster_kubeconfig(request: pytest.FixtureRequest) -> str:
    try:
        path = request.getfixturevalue("kubeconfig")
    except pytest.FixtureLookupError:
        path = None
    path = path or os.environ.get("KUBECONFIG")
    if not path:
        pytest.skip("no cluster: neither a kubeconfig fixture nor $KUBECONFIG")
    return str(path)


@pytest.fixture
async def rest(cluster_kubeconfig: str) -> AsyncIterator[RESTClient]:
    client = RESTClient(load_kube_config(cluster_kubeconfig))
    try:
        await client.request("GET", "/version")
    except Exception as err:
        await client.close()
        pytest.skip(f"cluster not reachable: {err}")
    yield client
    await client.close()


@pytest.mark.parametrize("path", sorted((ROOT / "crds").glob("*.yaml")), ids=lambda p: p.stem)
async def test_apiserver_accepts_generated_crd(rest: RESTClient, path: Path) -> None:
    crd: dict[str, Any] = yaml.safe_load(path.read_text())
    name = crd["metadata"]["name"]
    params = {"dryRun": "All"}
    try:
        current = await rest.get(CRDS, name)
    except errors.NotFoundError:
        await rest.request("POST", CRDS.path(), params=params, body=crd)
        return
    crd["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
    await rest.request("PUT", CRDS.path(None, name), params=params, body=crd)


async def test_typed_client_round_trips_an_agones_manifest(rest: RESTClient) -> None:
    try:
        await rest.get(CRDS, "gameservers.agones.dev")
    except errors.NotFoundError:
        pytest.skip("the GameServer CRD is not installed on this cluster")
    fixture = json.loads((ORACLE / "gameserver-examples-gameserver.json").read_text())
    gs = msgspec.convert(fixture["input"], GameServer)
    clientset = Clientset(rest)
    created = await clientset.agones_v1().game_servers("default").create(gs, dry_run=True)
    assert isinstance(created, GameServer)
    assert (
        created.spec.template["spec"]["containers"][0]["image"]
        == (  # type: ignore[union-attr]
            fixture["input"]["spec"]["template"]["spec"]["containers"][0]["image"]
        )
    )
