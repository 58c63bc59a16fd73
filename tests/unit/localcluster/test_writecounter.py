"""`WriteCounter`: writes and 409s by client, and with `sequences` each GameServer's updates and
patches as `client:state:code`, the state read from the body whatever its form."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agones.client.config import load_config
from agones.client.errors import ApiError, ConflictError
from agones.client.rest import RESTClient
from agones.client.versioned.resources import CONFIG_MAPS, GAME_SERVERS
from agones.localcluster.apiserver.server import LocalAPIServer
from agones.localcluster.writecounter import WriteCounter, _state_asked
from tests.integration.gameserverallocations.harness import harness


@pytest.mark.parametrize(
    ("method", "body", "state"),
    [
        pytest.param("PUT", {"status": {"state": "Scheduled"}}, "Scheduled", id="update"),
        pytest.param("PUT", {"metadata": {}}, "-", id="update-no-status"),
        pytest.param("PUT", {"status": {"state": ""}}, "-", id="update-empty-state"),
        pytest.param(
            "PATCH",
            [
                {"op": "test", "path": "/metadata/resourceVersion", "value": "7"},
                {"op": "replace", "path": "/status/state", "value": "RequestReady"},
            ],
            "RequestReady",
            id="json-patch",
        ),
        pytest.param(
            "PATCH", [{"op": "add", "path": "/x", "value": 1}], "-", id="json-patch-other"
        ),
        pytest.param("PATCH", {"status": {"state": "Shutdown"}}, "Shutdown", id="merge-patch"),
        pytest.param("PUT", [1, 2], "-", id="update-not-an-object"),
        pytest.param("PUT", {"status": ["x"]}, "-", id="status-not-an-object"),
    ],
)
def test_state_asked(method: str, body: object, state: str) -> None:
    assert _state_asked(method, json.dumps(body).encode()) == state


@given(st.sampled_from(["PUT", "PATCH"]), st.binary(max_size=200))
def test_any_body_gives_a_state_or_a_dash(method: str, body: bytes) -> None:
    assert isinstance(_state_asked(method, body), str)


async def test_counts_writes_and_conflicts_and_traces_only_when_asked() -> None:
    counter = WriteCounter()
    async with LocalAPIServer() as server:
        counter.install(server)
        async with RESTClient(load_config(server.kubeconfig)) as rest:
            cm = await rest.create(CONFIG_MAPS, {"metadata": {"name": "a"}}, "default")
            stale = dict(cm)
            await rest.update(CONFIG_MAPS, {**cm, "data": {"k": "1"}}, "default")
            with pytest.raises(ConflictError):
                await rest.update(CONFIG_MAPS, {**stale, "data": {"k": "2"}}, "default")
            await rest.get(CONFIG_MAPS, "a", "default")
    client = next(iter({c for c, _, _ in counter.counts}))
    assert counter.counts[(client, "POST", "configmaps")] == 1
    assert counter.counts[(client, "PUT", "configmaps")] == 2
    assert counter.conflicts == {(client, "PUT", "configmaps"): 1}
    assert counter.sequences is None


async def test_sequences_record_each_game_server_write_with_its_state_and_answer() -> None:
    counter = WriteCounter()
    async with harness() as h:
        counter.install(h.server)
        counter.sequences = {}
        gs = await h.create_ready("gs-1")
        stale = dict(gs)
        gs = await h.rest.update(
            GAME_SERVERS, {**gs, "status": {**gs["status"], "state": "Allocated"}}, "default"
        )
        with pytest.raises(ConflictError):
            await h.rest.update(
                GAME_SERVERS,
                {**stale, "status": {**stale["status"], "state": "Shutdown"}},
                "default",
            )
        ops = [
            {
                "op": "test",
                "path": "/metadata/resourceVersion",
                "value": stale["metadata"]["resourceVersion"],
            },
            {"op": "replace", "path": "/status/state", "value": "Ready"},
        ]
        with pytest.raises(ApiError):
            await h.rest.patch(GAME_SERVERS, "gs-1", ops, namespace="default", patch_type="json")
    client = next(iter({c for c, _, _ in counter.counts}))
    assert counter.sequences == {
        "gs-1": [f"{client}:Allocated:200", f"{client}:Shutdown:409", f"{client}:Ready:422"]
    }
