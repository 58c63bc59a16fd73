"""TLS material for the webhook server: from files, or a generated self-signed pair.

Agones' Helm chart generates a CA and serving certificate; out of a cluster (or in tests) we
generate one ourselves: `self_signed(hosts)` returns PEM certificate and key for the given DNS names
and IPs, valid for a year. The certificate is its own CA, so its PEM is also the `caBundle` a
webhook configuration needs.
"""

from __future__ import annotations

import ssl
import tempfile
from pathlib import Path

from .. import pki


def self_signed(hosts: list[str], days: int = 365) -> tuple[bytes, bytes]:
    """(certificate PEM, key PEM) for `hosts` (DNS names and/or IP addresses), from `agones.pki`."""
    pair = pki.self_signed(hosts, days)
    return pair.cert_pem, pair.key_pem


def server_ssl_context(cert_pem: bytes, key_pem: bytes) -> ssl.SSLContext:
    with tempfile.TemporaryDirectory() as tmp:
        cert_path, key_path = Path(tmp, "tls.crt"), Path(tmp, "tls.key")
        cert_path.write_bytes(cert_pem)
        key_path.write_bytes(key_pem)
        key_path.chmod(0o600)
        return pki.server_context(cert_path, key_path)


def load_or_generate(
    cert_file: str | None, key_file: str | None, hosts: list[str]
) -> tuple[bytes, bytes]:
    """Read the pair from files when both exist, else generate one for `hosts`."""
    if cert_file and key_file and Path(cert_file).is_file() and Path(key_file).is_file():
        return Path(cert_file).read_bytes(), Path(key_file).read_bytes()
    return self_signed(hosts)
