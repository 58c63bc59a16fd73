"""kubeconfig and in-cluster loading; the QPS token bucket."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
import yaml

from agones.client.config import ConfigError, in_cluster_config, load_config, load_kube_config
from agones.clock import FakeClock
from agones.flowcontrol import Limiter, TokenBucketRateLimiter

from ..leaderelection.test_leaderelection import SteppedWallClock


def write_kubeconfig(tmp: Path, cluster: dict[str, object], user: dict[str, object]) -> Path:
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "local",
        "contexts": [
            {"name": "local", "context": {"cluster": "c", "user": "u"}},
            {"name": "other", "context": {"cluster": "c2"}},
        ],
        "clusters": [
            {"name": "c", "cluster": cluster},
            {"name": "c2", "cluster": {"server": "http://127.0.0.1:1"}},
        ],
        "users": [{"name": "u", "user": user}],
    }
    path = tmp / "kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_kubeconfig_with_inline_data_and_token(tmp_path: Path) -> None:
    ca = b"-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n"
    path = write_kubeconfig(
        tmp_path,
        {
            "server": "https://127.0.0.1:6443/",
            "certificate-authority-data": base64.b64encode(ca).decode(),
        },
        {"token": "t0k", "client-key-data": base64.b64encode(b"KEY").decode()},
    )
    config = load_kube_config(path)
    assert config.host == "https://127.0.0.1:6443"
    assert config.ca_data == ca
    assert config.key_data == b"KEY"
    assert config.bearer_token() == "t0k"
    assert (config.qps, config.burst) == (400.0, 500)


def test_kubeconfig_relative_files_insecure_and_context(tmp_path: Path) -> None:
    (tmp_path / "client.crt").write_bytes(b"CERT")
    path = write_kubeconfig(
        tmp_path,
        {"server": "https://h:1", "insecure-skip-tls-verify": True},
        {"client-certificate": "client.crt", "username": "admin", "password": "pw"},
    )
    config = load_kube_config(path)
    assert config.insecure and config.cert_data == b"CERT"
    assert (config.username, config.password) == ("admin", "pw")
    assert load_kube_config(path, "other").host == "http://127.0.0.1:1"
    assert load_config(str(path)).host == "https://h:1"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param("- a list", "not a mapping", id="not-mapping"),
        pytest.param("{}", "no current-context", id="no-context"),
        pytest.param(
            "current-context: x\ncontexts: []", "no context named 'x'", id="unknown-context"
        ),
        pytest.param(": :", "cannot load", id="bad-yaml"),
    ],
)
def test_kubeconfig_errors_are_clear(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "kc"
    path.write_text(content)
    with pytest.raises(ConfigError, match=message):
        load_kube_config(path)


def test_in_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(ConfigError, match="not in a cluster"):
        in_cluster_config(tmp_path)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    (tmp_path / "token").write_text("sa-token\n")
    config = in_cluster_config(tmp_path)
    clock = FakeClock()
    config.now = clock.now
    assert config.host == "https://10.0.0.1:443"
    assert config.bearer_token() == "sa-token"
    (tmp_path / "token").write_text("rotated")
    assert config.bearer_token() == "sa-token", "read at most once a minute"
    clock.step(60)
    assert config.bearer_token() == "rotated"
    (tmp_path / "token").unlink()
    clock.step(60)
    assert config.bearer_token() == "rotated", "a failed re-read keeps the last token"


def test_limiter_refills_at_qps_up_to_burst() -> None:
    clock = FakeClock()
    limiter = Limiter(10, 2, clock)
    assert [limiter.reserve() for _ in range(3)] == [0, 0, pytest.approx(0.1)]
    clock.step(0.1)
    assert limiter.tokens() == pytest.approx(0, abs=1e-6)
    clock.step(100)
    assert limiter.tokens() == 2


async def test_token_bucket_wait_blocks_on_the_clock() -> None:
    import asyncio

    clock = FakeClock()
    bucket = TokenBucketRateLimiter(1, 1, clock)
    await bucket.wait()
    assert not bucket.try_accept()
    waiter = asyncio.create_task(bucket.wait())
    await clock.wait_for_timers(1)
    assert not waiter.done()
    clock.step(1)
    await asyncio.wait_for(waiter, 1)


def _self_signed() -> tuple[bytes, bytes]:
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "agones-test")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    pem_key = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return cert.public_bytes(serialization.Encoding.PEM), pem_key


def test_ssl_context_loads_ca_and_client_certificate(tmp_path: Path) -> None:
    import ssl

    cert, key = _self_signed()
    path = write_kubeconfig(
        tmp_path,
        {
            "server": "https://127.0.0.1:6443",
            "certificate-authority-data": base64.b64encode(cert).decode(),
        },
        {
            "client-certificate-data": base64.b64encode(cert).decode(),
            "client-key-data": base64.b64encode(key).decode(),
        },
    )
    ctx = load_kube_config(path).ssl_context()
    assert ctx is not None and ctx.verify_mode == ssl.CERT_REQUIRED
    assert len(ctx.get_ca_certs()) == 1
    insecure = load_kube_config(path)
    insecure.insecure = True
    ctx2 = insecure.ssl_context()
    assert ctx2 is not None and ctx2.verify_mode == ssl.CERT_NONE


def test_exec_credentials_are_refused_clearly(tmp_path: Path) -> None:
    path = write_kubeconfig(
        tmp_path, {"server": "https://h:1"}, {"exec": {"command": "gke-gcloud-auth-plugin"}}
    )
    with pytest.raises(ConfigError, match="'exec' credentials"):
        load_kube_config(path)


def test_limiter_refills_by_monotonic_time_across_a_wall_clock_step() -> None:
    clock = SteppedWallClock()
    limiter = Limiter(10, 1, clock)
    assert limiter.reserve() == 0
    clock.wall_offset = -3600.0  # NTP steps the wall clock back an hour
    clock.step(0.2)
    assert limiter.reserve() == 0, "the token spent 0.2 s ago is back"
