"""The allocator process writes Events through a client of its own, as Agones' allocator does
(`kubeClient` beside `agonesClient`: one QPS token bucket each), so Event writes never take from
the GameServer writes' budget."""

from __future__ import annotations

from agones.allocator.app import AllocatorApp
from agones.allocator.settings import AllocatorServiceSettings
from agones.client.config import Config
from agones.client.rest import RESTClient
from agones.featuregates import FeatureGates


async def test_events_have_their_own_client_and_qps_budget() -> None:
    client = RESTClient(Config(host="https://127.0.0.1:1", qps=400, burst=500))
    settings = AllocatorServiceSettings(http_port=0, grpc_port=0, disable_tls=True)
    app = AllocatorApp(settings, FeatureGates(), client)
    try:
        assert app.events.client is app.events_client
        assert app.events_client is not client
        assert app.events_client.rate_limiter is not None
        assert app.events_client.rate_limiter is not client.rate_limiter
        assert app.events_client.config.qps == client.config.qps == 400
        assert app.allocator.client is client
    finally:
        await app.events_client.close()
        await client.close()
