"""REST gateway: routes from the proto's HTTP bindings, request building, and the wire over HTTP."""

from __future__ import annotations

import asyncio
import json

import aiohttp
import pytest

from agones.featuregates import FeatureGates
from agones.sdk.proto import sdk_pb2
from agones.sdkserver.gateway import Gateway, build_routes, compile_template
from agones.sdkserver.localsdk import LocalSDKServer
from tests.sdkserver.harness import running_local
from tests.waiting import wait_for_async

ROUTES = {(r.http_method, r.template): r.method.full_name for r in build_routes()}


@pytest.mark.parametrize(
    ("verb", "path", "rpc"),
    [
        ("POST", "/ready", "agones.dev.sdk.SDK.Ready"),
        ("POST", "/allocate", "agones.dev.sdk.SDK.Allocate"),
        ("POST", "/shutdown", "agones.dev.sdk.SDK.Shutdown"),
        ("POST", "/health", "agones.dev.sdk.SDK.Health"),
        ("GET", "/gameserver", "agones.dev.sdk.SDK.GetGameServer"),
        ("GET", "/watch/gameserver", "agones.dev.sdk.SDK.WatchGameServer"),
        ("PUT", "/metadata/label", "agones.dev.sdk.SDK.SetLabel"),
        ("PUT", "/metadata/annotation", "agones.dev.sdk.SDK.SetAnnotation"),
        ("POST", "/reserve", "agones.dev.sdk.SDK.Reserve"),
        ("POST", "/alpha/player/connect", "agones.dev.sdk.alpha.SDK.PlayerConnect"),
        ("POST", "/alpha/player/disconnect", "agones.dev.sdk.alpha.SDK.PlayerDisconnect"),
        ("PUT", "/alpha/player/capacity", "agones.dev.sdk.alpha.SDK.SetPlayerCapacity"),
        ("GET", "/alpha/player/capacity", "agones.dev.sdk.alpha.SDK.GetPlayerCapacity"),
        ("GET", "/alpha/player/count", "agones.dev.sdk.alpha.SDK.GetPlayerCount"),
        (
            "GET",
            "/alpha/player/connected/{playerID}",
            "agones.dev.sdk.alpha.SDK.IsPlayerConnected",
        ),
        ("GET", "/alpha/player/connected", "agones.dev.sdk.alpha.SDK.GetConnectedPlayers"),
        ("GET", "/v1beta1/counters/{name}", "agones.dev.sdk.beta.SDK.GetCounter"),
        (
            "PATCH",
            "/v1beta1/counters/{counterUpdateRequest.name}",
            "agones.dev.sdk.beta.SDK.UpdateCounter",
        ),
        ("GET", "/v1beta1/lists/{name}", "agones.dev.sdk.beta.SDK.GetList"),
        ("PATCH", "/v1beta1/lists/{list.name}", "agones.dev.sdk.beta.SDK.UpdateList"),
        ("POST", "/v1beta1/lists/{name}:addValue", "agones.dev.sdk.beta.SDK.AddListValue"),
        ("POST", "/v1beta1/lists/{name}:removeValue", "agones.dev.sdk.beta.SDK.RemoveListValue"),
    ],
)
def test_every_rpc_has_agones_rest_binding(verb: str, path: str, rpc: str) -> None:
    assert ROUTES[(verb, path)] == rpc


def test_routes_cover_exactly_the_22_rpcs() -> None:
    assert len(ROUTES) == 22


@pytest.mark.parametrize(
    ("verb", "path", "expected"),
    [
        pytest.param("GET", "/v1beta1/lists/players", {"name": "players"}, id="get-list"),
        pytest.param(
            "POST", "/v1beta1/lists/play%20ers:addValue", {"name": "play ers"}, id="decoded-verb"
        ),
        pytest.param(
            "PATCH",
            "/v1beta1/counters/rooms",
            {"counterUpdateRequest.name": "rooms"},
            id="dotted-var",
        ),
        pytest.param("GET", "/nope", 404, id="unknown-path"),
        pytest.param("DELETE", "/ready", 405, id="wrong-verb"),
    ],
)
def test_match(verb: str, path: str, expected: object) -> None:
    gateway = Gateway(LocalSDKServer(FeatureGates()))
    matched = gateway.match(verb, path)
    if isinstance(expected, int):
        assert matched == expected
    else:
        assert not isinstance(matched, int)
        assert matched[1] == expected


def test_compile_template_variables() -> None:
    regex, variables = compile_template("/v1beta1/lists/{name}:removeValue")
    assert variables == ("name",)
    assert regex.fullmatch("/v1beta1/lists/abc:removeValue")
    assert not regex.fullmatch("/v1beta1/lists/a/b:removeValue")


async def test_http_wire_conventions() -> None:
    async with running_local() as srv, aiohttp.ClientSession(srv.base_url) as http:
        async with http.post("/ready") as r:  # an empty body is an empty request
            assert (r.status, await r.json()) == (200, {})
        async with http.post("/health") as r:
            assert r.status == 400
        async with http.get("/gameserver?unknown=1") as r:
            assert r.headers["Content-Type"].startswith("application/json")
            body = await r.json()
            assert body["object_meta"]["name"] == "local"
            assert body["object_meta"]["generation"] == "1"
            assert body["status"]["players"] is None
        async with http.put("/metadata/label", data='{"key": "k", "value": "v", "x": 1}') as r:
            assert r.status == 200
        assert srv.backend.gs.object_meta.labels["agones.dev/sdk-k"] == "v"
        async with http.post("/reserve", data='{"seconds": "soon"}') as r:
            body = await r.json()
            assert (r.status, body["code"]) == (400, 3)
        async with http.get("/v1beta1/counters/nope") as r:
            assert (r.status, await r.json()) == (
                500,
                {"code": 2, "message": "not found. nope Counter not found", "details": []},
            )
        async with http.get("/alpha/player/count") as r:
            assert (r.status, (await r.json())["message"]) == (500, "PlayerTracking not enabled")
        async with http.get("/v1beta1/lists/players?name=other") as r:  # the path wins
            assert (await r.json())["name"] == "players"


async def test_update_list_mask_comes_from_body_or_query() -> None:
    async with running_local() as srv, aiohttp.ClientSession(srv.base_url) as http:
        async with http.patch("/v1beta1/lists/players", json={"capacity": "10"}) as r:
            assert await r.json() == {
                "name": "players",
                "capacity": "10",
                "values": ["test0", "test1", "test2"],
            }
        async with http.patch(
            "/v1beta1/lists/players?update_mask=values", json={"capacity": "1", "values": ["z"]}
        ) as r:
            assert await r.json() == {"name": "players", "capacity": "10", "values": ["z"]}


async def test_player_id_path_variable() -> None:
    gates = FeatureGates().with_values(PlayerTracking=True)
    async with running_local(gates) as srv, aiohttp.ClientSession(srv.base_url) as http:
        async with http.put("/alpha/player/capacity", json={"count": "3"}) as r:
            assert r.status == 200
        async with http.post("/alpha/player/connect", json={"playerID": "p1"}) as r:
            assert await r.json() == {"bool": True}
        async with http.get("/alpha/player/connected/p1") as r:
            assert await r.json() == {"bool": True}
        async with http.get("/alpha/player/connected") as r:
            assert await r.json() == {"list": ["p1"]}


async def test_watch_stream_is_newline_delimited_results() -> None:
    async with (
        running_local() as srv,
        aiohttp.ClientSession(srv.base_url) as http,
        http.get("/watch/gameserver") as r,
    ):
        assert r.status == 200
        first = json.loads(await asyncio.wait_for(r.content.readline(), 5))
        assert first["result"]["status"]["state"] == "Ready"
        await srv.backend.allocate(sdk_pb2.Empty())
        second = json.loads(await asyncio.wait_for(r.content.readline(), 5))
        assert second["result"]["status"]["state"] == "Allocated"


async def test_watch_over_websocket() -> None:
    async with running_local() as srv, aiohttp.ClientSession(srv.base_url) as http:
        async with http.ws_connect("/watch/gameserver") as ws:
            first = json.loads((await asyncio.wait_for(ws.receive(), 5)).data)
            assert first["result"]["object_meta"]["name"] == "local"
            await srv.backend.shutdown(sdk_pb2.Empty())
            second = json.loads((await asyncio.wait_for(ws.receive(), 5)).data)
            assert second["result"]["status"]["state"] == "Shutdown"
        # the server forgets the stream once the socket closes
        await wait_for_async(lambda: not srv.backend._observers, 1, 0.02, "the stream forgotten")


async def test_health_pings_over_websocket() -> None:
    async with running_local(expected="health") as srv, aiohttp.ClientSession(srv.base_url) as http:
        async with http.ws_connect("/health?method=POST") as ws:
            await ws.send_str("{}")
            await ws.send_str("{}{}")
            for _ in range(100):
                if srv.backend.requests.count("health") == 3:
                    break
                await asyncio.sleep(0.02)
        assert srv.backend.requests.count("health") == 3
