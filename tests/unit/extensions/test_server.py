"""The webhook server over HTTPS, and the `agones extensions` command's settings and TLS files."""

from __future__ import annotations

import argparse
import ssl
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from prometheus_client import CollectorRegistry

from agones.cmd import extensions as cmd
from agones.extensions.certs import self_signed, server_ssl_context
from agones.extensions.server import WebhookServer
from agones.featuregates import Feature, FeatureGates

pytestmark = pytest.mark.timeout(30)


def review_body(obj: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u1",
            "kind": {"group": "agones.dev", "version": "v1", "kind": "GameServer"},
            "name": obj["metadata"]["name"],
            "operation": "CREATE",
            "object": obj,
        },
    }


BAD_GS = {
    "apiVersion": "agones.dev/v1",
    "kind": "GameServer",
    "metadata": {"name": "x" * 64, "namespace": "default"},
    "spec": {
        "container": "game",
        "ports": [],
        "template": {"spec": {"containers": [{"name": "game", "image": "i"}]}},
    },
}


async def test_https_round_trip_with_a_generated_certificate() -> None:
    cert, key = self_signed(["localhost", "127.0.0.1"])
    registry = CollectorRegistry()
    server = WebhookServer(FeatureGates(), server_ssl_context(cert, key), registry)
    await server.start("127.0.0.1", 0)
    client_ctx = ssl.create_default_context(cadata=cert.decode())
    try:
        async with aiohttp.ClientSession() as session:
            url = f"https://127.0.0.1:{server.port}"
            async with session.post(
                f"{url}/validate", json=review_body(BAD_GS), ssl=client_ctx
            ) as r:
                assert r.status == 200
                answer = await r.json()
            assert answer["response"]["allowed"] is False
            assert answer["response"]["status"]["code"] == 422
            assert "metadata.name: Too long" in answer["response"]["status"]["message"]
            async with session.post(f"{url}/mutate", data=b"{not json", ssl=client_ctx) as r:
                assert r.status == 400
            async with session.post(f"{url}/other", json={}, ssl=client_ctx) as r:
                assert r.status == 404
        labels = {"path": "/validate", "kind": "GameServer", "allowed": "false"}
        assert registry.get_sample_value("agones_webhook_reviews_total", labels) == 1
    finally:
        await server.stop()


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    cmd.add_flags(parser)
    return parser.parse_args(argv)


def test_settings_from_flags_and_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEBHOOK_PORT", "9443")
    monkeypatch.setenv("READINESS_SHUTDOWN_DURATION", "1500ms")
    settings = cmd.settings_from_args(parse(["--feature-gates", "PlayerTracking=true"]))
    assert settings.webhook_port == 9443
    assert settings.readiness_shutdown_duration == 1.5
    assert settings.gates.enabled(Feature.PLAYER_TRACKING)
    assert cmd.settings_from_args(parse(["--webhook-port", "1"])).webhook_port == 1  # flag wins
    monkeypatch.delenv("WEBHOOK_PORT")
    defaults = cmd.settings_from_args(parse([]))
    assert (defaults.webhook_port, defaults.http_port) == (8081, 8080)


def test_bad_feature_gates_are_a_clear_error() -> None:
    with pytest.raises(ValueError, match="not a valid Feature Gate"):
        cmd.settings_from_args(parse(["--feature-gates", "Nope=true"]))


def test_generated_certificate_is_written_where_asked(tmp_path: Path) -> None:
    settings = cmd.ExtensionsSettings(
        cert_file=str(tmp_path / "certs" / "tls.crt"), key_file=str(tmp_path / "certs" / "tls.key")
    )
    cert, key = cmd.tls_material(settings)
    assert (tmp_path / "certs" / "tls.crt").read_bytes() == cert
    assert cmd.tls_material(settings) == (cert, key)  # read back, not regenerated


async def test_extensions_process_serves_health_and_stops() -> None:
    settings = cmd.ExtensionsSettings(
        webhook_port=0, http_port=0, bind="127.0.0.1", allocation_api=False
    )
    ext = cmd.Extensions(settings)
    await ext.start()
    try:
        async with aiohttp.ClientSession() as session:
            base = f"http://127.0.0.1:{ext.http_port}"
            async with session.get(f"{base}/ready") as r:
                assert r.status == 200
            ext.stopping.set()
            async with session.get(f"{base}/ready") as r:
                assert r.status == 503
            async with session.get(f"{base}/live") as r:
                assert r.status == 200
    finally:
        await ext.stop()


def test_a_port_in_use_is_an_error_exit_not_a_crash(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    # structlog would keep printing to this test's captured stdout after it is closed
    monkeypatch.setattr(cmd, "configure_logging", lambda level: None)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        args = parse(
            [
                "--bind",
                "127.0.0.1",
                "--webhook-port",
                "0",
                "--http-port",
                str(port),
                "--allocation-api=false",
            ]
        )
        assert cmd.run(args) == 1
    assert "could not serve" in capsys.readouterr().out
