"""`agones extensions` serves the allocation API beside the webhooks, from its own informers."""

from __future__ import annotations

import argparse
import asyncio
import ssl

import aiohttp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agones.client.throttle import ClientsetRateLimiters
from agones.clock import FakeClock
from agones.cmd import extensions as cmd
from agones.controllers.gameserverallocations import Partition
from tests.integration.gameserverallocations.harness import harness


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param("", Partition(), id="none"),
        pytest.param("1/3", Partition(1, 3), id="one-of-three"),
    ],
)
def test_partition_flag(text: str, want: Partition) -> None:
    assert Partition.parse(text) == want


@pytest.mark.parametrize("text", ["2", "a/b", "3/3", "-1/2"])
def test_bad_partition_flag_is_a_clear_error(text: str) -> None:
    with pytest.raises(ValueError, match="partition"):
        Partition.parse(text)


@pytest.mark.parametrize(
    ("argv", "env", "want"),
    [
        pytest.param([], {}, (400.0, 500), id="agones-defaults"),
        pytest.param(
            ["--api-server-qps=2000", "--api-server-qps-burst=3000"], {}, (2000.0, 3000), id="flags"
        ),
        pytest.param(
            [], {"API_SERVER_QPS": "50.5", "API_SERVER_QPS_BURST": "60"}, (50.5, 60), id="env"
        ),
    ],
)
def test_client_budget_flags(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], env: dict[str, str], want: tuple[float, int]
) -> None:
    """Agones' `agones.extensions.apiServerQPS` / `apiServerQPSBurst` (the chart's env vars)."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    parser = argparse.ArgumentParser()
    cmd.add_flags(parser)
    settings = cmd.settings_from_args(parser.parse_args(argv))
    assert (settings.api_server_qps, settings.api_server_qps_burst) == want


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["--api-server-qps", "--api-server-qps-burst"]),
    st.one_of(st.text(max_size=12), st.integers().map(str), st.floats().map(str)),
)
def test_any_budget_flag_value_is_a_budget_or_a_usage_error(flag: str, text: str) -> None:
    parser = argparse.ArgumentParser(exit_on_error=False)
    cmd.add_flags(parser)
    try:
        args = parser.parse_args([f"{flag}={text}"])
    except argparse.ArgumentError as err:
        assert flag in str(err)  # argparse's one-line usage error, naming the flag
        return
    try:
        budget = cmd.settings_from_args(args)
    except ValueError as err:  # `agones extensions` prints it as one line and exits 2
        assert "--api-server-qps-burst" in str(err) and "\n" not in str(err)
        return
    ClientsetRateLimiters(budget.api_server_qps, budget.api_server_qps_burst, FakeClock())


def test_a_burst_under_one_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    """Found by the property test above: the client's token buckets refused it at start-up, with
    a traceback."""
    parser = argparse.ArgumentParser()
    cmd.add_flags(parser)
    assert cmd.run(parser.parse_args(["--api-server-qps-burst=0"])) == 2
    out = capsys.readouterr().out
    assert (
        out == "error: --api-server-qps / --api-server-qps-burst: burst must be at least 1, got 0\n"
    )


async def test_extensions_command_serves_the_allocation_api() -> None:
    async with harness() as h:
        await h.create_ready("gs-0")
        settings = cmd.ExtensionsSettings(
            webhook_port=0,
            http_port=0,
            bind="127.0.0.1",
            kubeconfig=h.server.kubeconfig,
            allocation_partition=Partition(0, 1),
        )
        ext = cmd.Extensions(settings)
        await ext.start()
        try:
            assert ext.allocator is not None
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            base = f"https://127.0.0.1:{ext.webhooks.port}/apis/allocation.agones.dev/v1"
            body = {"apiVersion": "allocation.agones.dev/v1", "kind": "GameServerAllocation"}
            async with aiohttp.ClientSession() as session:
                async with session.get(base, ssl=ctx) as r:
                    assert r.status == 200
                    assert (await r.json())["resources"][0]["name"] == "gameserverallocations"
                for _ in range(200):
                    if len(ext.allocator.allocation_cache) == 1:
                        break
                    await asyncio.sleep(0.01)
                url = f"{base}/namespaces/default/gameserverallocations"
                async with session.post(url, json=body, ssl=ctx) as r:
                    assert r.status == 201
                    out = await r.json()
                    assert out["status"]["state"] == "Allocated"
                    assert out["status"]["gameServerName"] == "gs-0"
        finally:
            await ext.stop()
