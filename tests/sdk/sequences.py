"""Agones' SDK conformance client sequences, written for our Python SDK and for plain HTTP.

`default_sequence` follows the order of Agones' Node.js test client (test/sdk/nodejs): watch (its
first event sets the `annotation` annotation to the uid), ready, get, label with the creation
timestamp, one health ping, reserve(5), allocate, then the counter and list calls, shutdown.
`skip` names a step to leave out, to prove the server notices. `pause` stands in for the client's
one-second sleeps.
"""

from __future__ import annotations

import asyncio
import json

import aiohttp

from agones.sdk import AsyncSDK


async def default_sequence(
    sdk: AsyncSDK, *, counts_and_lists: bool = True, skip: str = "", pause: float = 0.05
) -> None:
    annotated = asyncio.Event()

    async def on_update(gs: object) -> None:
        if not annotated.is_set():
            annotated.set()
            if skip != "setannotation":
                await sdk.set_annotation("annotation", gs.object_meta.uid)  # type: ignore[attr-defined]

    if skip != "watch":
        await sdk.watch_game_server(on_update)
    if skip != "ready":
        await sdk.ready()
    gs = await sdk.game_server()
    await sdk.set_label("label", str(gs.object_meta.creation_timestamp))
    if skip != "health":
        await sdk.health()
    if skip != "reserve":
        await sdk.reserve(5)
    await asyncio.sleep(pause)
    await sdk.allocate()
    if counts_and_lists:
        beta = sdk.beta
        assert await beta.get_counter_count("rooms") == 1
        await beta.increment_counter("rooms", 9)
        await beta.decrement_counter("rooms", 10)
        await beta.set_counter_count("rooms", 10)
        assert await beta.get_counter_capacity("rooms") == 10
        await beta.set_counter_capacity("rooms", 1)
        assert await beta.list_contains("players", "test1")
        assert await beta.get_list_length("players") == 3
        assert await beta.get_list_values("players") == ["test0", "test1", "test2"]
        await beta.append_list_value("players", "test3")
        await beta.delete_list_value("players", "test2")
        assert await beta.get_list_capacity("players") == 100
        await beta.set_list_capacity("players", 2)
    if skip != "watch":
        await asyncio.wait_for(annotated.wait(), 5)
    await asyncio.sleep(pause)
    await sdk.shutdown()
    # the health stream is flushed and closed before the client goes away
    await sdk.close()


async def alpha_sequence(sdk: AsyncSDK) -> None:
    """The player-tracking steps of Agones' Go conformance client."""
    alpha = sdk.alpha
    await alpha.set_player_capacity(10)
    assert await alpha.get_player_capacity() == 10
    assert await alpha.player_connect("1234")
    assert await alpha.is_player_connected("1234")
    assert await alpha.get_connected_players() == ["1234"]
    assert await alpha.player_disconnect("1234")
    assert await alpha.get_player_count() == 0


async def rest_players(base_url: str) -> None:
    """The player-tracking steps of Agones' REST conformance client (http-api-test.go)."""
    async with aiohttp.ClientSession(base_url) as http:

        async def call(verb: str, path: str, body: object = None) -> dict[str, object]:
            async with http.request(verb, path, json=body) as r:
                data = await r.json()
                assert r.status == 200, (verb, path, r.status, data)
                return data  # type: ignore[no-any-return]

        await call("PUT", "/alpha/player/capacity", {"count": "10"})
        assert await call("GET", "/alpha/player/capacity") == {"count": "10"}
        assert await call("POST", "/alpha/player/connect", {"playerID": "1234"}) == {"bool": True}
        assert await call("GET", "/alpha/player/connected/1234") == {"bool": True}
        assert await call("GET", "/alpha/player/connected") == {"list": ["1234"]}
        assert await call("POST", "/alpha/player/disconnect", {"playerID": "1234"}) == {
            "bool": True
        }
        assert await call("GET", "/alpha/player/count") == {"count": "0"}


async def rest_sequence(base_url: str, *, skip: str = "") -> None:
    """The default + counters-and-lists sequence with plain HTTP calls, watch stream included."""
    async with aiohttp.ClientSession(base_url) as http:

        async def call(verb: str, path: str, body: object = None) -> dict[str, object]:
            async with http.request(verb, path, json=body) as r:
                data = await r.json()
                assert r.status == 200, (verb, path, r.status, data)
                return data  # type: ignore[no-any-return]

        watch = await http.get("/watch/gameserver")
        first = json.loads(await asyncio.wait_for(watch.content.readline(), 5))
        uid = first["result"]["object_meta"]["uid"]
        if skip != "ready":
            await call("POST", "/ready", {})
        gs = await call("GET", "/gameserver")
        meta = gs["object_meta"]
        assert isinstance(meta, dict)
        await call("PUT", "/metadata/label", {"key": "label", "value": meta["creation_timestamp"]})
        await call("PUT", "/metadata/annotation", {"key": "annotation", "value": uid})
        await call("POST", "/health", {})
        await call("POST", "/reserve", {"seconds": "5"})
        await call("POST", "/allocate", {})
        update = json.loads(await asyncio.wait_for(watch.content.readline(), 5))
        assert update["result"]["object_meta"]["uid"] == uid
        watch.close()
        counter = await call("GET", "/v1beta1/counters/rooms")
        assert counter == {"name": "rooms", "count": "1", "capacity": "10"}
        counter = await call(
            "PATCH", "/v1beta1/counters/rooms", {"countDiff": "-1", "capacity": "42"}
        )
        assert counter == {"name": "rooms", "count": "0", "capacity": "42"}
        counter = await call("PATCH", "/v1beta1/counters/rooms", {"count": "40"})
        assert counter == {"name": "rooms", "count": "40", "capacity": "42"}
        lst = await call("GET", "/v1beta1/lists/players")
        assert lst["values"] == ["test0", "test1", "test2"]
        lst = await call(
            "PATCH", "/v1beta1/lists/players", {"values": ["test123", "test456"], "capacity": "10"}
        )
        assert lst == {"name": "players", "capacity": "10", "values": ["test123", "test456"]}
        lst = await call("POST", "/v1beta1/lists/players:addValue", {"value": "test789"})
        assert lst["values"] == ["test123", "test456", "test789"]
        lst = await call("POST", "/v1beta1/lists/players:removeValue", {"value": "test456"})
        assert lst["values"] == ["test123", "test789"]
        await call("POST", "/shutdown", {})
