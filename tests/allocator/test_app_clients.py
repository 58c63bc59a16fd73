"""The allocator process writes Events and GameServers through one client with a QPS budget per
clientset, as Agones' allocator has `kubeClient` beside `agonesClient` (a token bucket each), so
Event writes never take from the GameServer writes' budget."""

from __future__ import annotations

from agones.allocator.app import AllocatorApp
from agones.allocator.settings import AllocatorServiceSettings
from agones.client.config import Config
from agones.client.rest import RESTClient
from agones.client.versioned.resources import EVENTS, GAME_SERVERS
from agones.featuregates import FeatureGates


async def test_events_and_game_servers_draw_from_separate_budgets() -> None:
    client = RESTClient(Config(host="https://127.0.0.1:1", qps=400, burst=500))
    settings = AllocatorServiceSettings(http_port=0, grpc_port=0, disable_tls=True)
    app = AllocatorApp(settings, FeatureGates(), client)
    try:
        assert app.events.client is client
        assert app.allocator.client is client
        events = client.rate_limiters.for_path(EVENTS.path("default"))
        game_servers = client.rate_limiters.for_path(GAME_SERVERS.path("default", "gs"))
        assert events is not None and game_servers is not None
        assert events is not game_servers
    finally:
        await client.close()
