"""The simulated sidecars' shared GameServer store against the local API server over HTTP: no
watch of every GameServer until a simulated game starts; then one informer for all games."""

from __future__ import annotations

import asyncio
import functools

from agones.client.config import load_kube_config
from agones.client.rest import RESTClient
from agones.client.versioned.resources import GAME_SERVERS
from agones.featuregates import FeatureGates
from agones.informers import SharedInformerFactory
from agones.localcluster.nodes.simulated import GameOptions, SharedGameServerStore, SimulatedGame
from tests.integration.gameserverallocations.harness import harness, ready_game_server
from tests.waiting import wait_for_async


async def _requested_ready(rest: RESTClient, name: str) -> bool:
    gs = await rest.get(GAME_SERVERS, name, "default")
    return bool(gs["status"].get("state") == "RequestReady")


async def test_the_informer_starts_with_the_first_simulated_game() -> None:
    async with harness() as h:
        rest = RESTClient(load_kube_config(h.server.kubeconfig))
        factory = SharedInformerFactory(rest)
        games: list[SimulatedGame] = []
        try:
            store = SharedGameServerStore(rest, factory)
            factory.start()
            assert store.informer is None
            assert factory.informers() == []

            for name in ("first", "second"):
                gs = ready_game_server(name, "default")
                gs["status"]["state"] = "Scheduled"
                await rest.create(GAME_SERVERS, gs, "default")
                game = SimulatedGame(store, "default", name, GameOptions(), FeatureGates())
                games.append(game)
                await asyncio.wait_for(game.start(), 10)
                assert store.informer is not None
                assert store.informer.informer().has_synced()

                # the game's Ready() went through the store: no controller here to go on
                await wait_for_async(
                    functools.partial(_requested_ready, rest, name),
                    timeout=5,
                    interval=0.02,
                    what=f"{name} RequestReady",
                )
            assert len(factory.informers()) == 1  # both games share the one informer
            cached = store.informer.lister().by_namespace("default").get("second")
            assert cached["metadata"]["name"] == "second"
        finally:
            for game in games:
                await game.stop()
            await factory.shutdown()
            await rest.close()
