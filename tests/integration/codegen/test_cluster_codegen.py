"""Against a real (or the local) API server: the generated CRDs pass the apiserver's own CRD
validation (server-side dry run, so the cluster is not changed), and the typed clients round-trip
an Agones manifest when the CRDs are installed.

The cluster is the shared `cluster` fixture (the local API server, or the one `$KUBECONFIG` names);
on the local server the GameServer CRD is installed for the round trip, elsewhere it must be.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml

from agones.apis.agones.v1 import GameServer
from agones.client import errors
from agones.client.config import load_kube_config
from agones.client.rest import RESTClient
from agones.client.versioned import Clientset
from agones.client.versioned.resources import CUSTOM_RESOURCE_DEFINITIONS as CRDS
from tests.cluster import Cluster

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(60)]

ROOT = Path(__file__).resolve().parents[3]
# Copies of the Agones oracle fixtures (what Agones itself returned), kept in the repository.
ORACLE = ROOT / "tests" / "fixtures" / "agones-oracle" / "valid"


@pytest.fixture
async def rest(cluster: Cluster) -> AsyncIterator[RESTClient]:
    client = RESTClient(load_kube_config(cluster.kubeconfig))
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


async def install_crd(rest: RESTClient, crd: dict[str, Any]) -> None:
    await rest.request("POST", CRDS.path(), body=crd)
    for _ in range(200):
        status = (await rest.get(CRDS, crd["metadata"]["name"])).get("status") or {}
        if any(
            c["type"] == "Established" and c["status"] == "True"
            for c in status.get("conditions") or []
        ):
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the CRD was not established")


async def test_typed_client_round_trips_an_agones_manifest(
    rest: RESTClient, cluster: Cluster
) -> None:
    try:
        await rest.get(CRDS, "gameservers.agones.dev")
    except errors.NotFoundError:
        if not cluster.local:
            pytest.skip("the GameServer CRD is not installed on this cluster")
        await install_crd(rest, yaml.safe_load((ROOT / "crds" / "gameserver.yaml").read_text()))
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
