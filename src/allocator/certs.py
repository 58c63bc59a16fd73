"""Certificates for the allocator: a CA, and server and client certificates it signs (what Agones'
Helm chart and `install/yaml` generate for `allocator-tls`, `allocator-tls-ca` and
`allocator-client.default`), made by `agones.pki`.

`write_pair(dir, pair)` writes `tls.crt` / `tls.key` (key 0600), the layout of a mounted TLS
secret; `write_allocator_certs(root, hosts)` writes a whole set (server, client CA, one client) for
a local allocator.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..pki import CertificateAuthority, KeyPair, Usage


def write_pair(directory: Path, pair: KeyPair) -> None:
    """`tls.crt` and `tls.key` in `directory` (created), each replaced atomically."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, data, mode in (("tls.key", pair.key_pem, 0o600), ("tls.crt", pair.cert_pem, 0o644)):
        tmp = directory / f".{name}.tmp"
        tmp.write_bytes(data)
        tmp.chmod(mode)
        tmp.replace(directory / name)


@dataclass(frozen=True)
class AllocatorCertDirs:
    """Where `write_allocator_certs` put things: the allocator's `tls/` and `client-ca/`
    directories (its `--tls-dir` and `--client-ca-dir`) and a client's `tls.crt`, `tls.key` and
    `ca.crt` (the CA that signed the server, to trust it) in `client/`."""

    root: Path

    @property
    def tls(self) -> Path:
        return self.root / "tls"

    @property
    def client_ca(self) -> Path:
        return self.root / "client-ca"

    @property
    def client(self) -> Path:
        return self.root / "client"


def write_allocator_certs(root: Path, hosts: list[str]) -> AllocatorCertDirs:
    """A new CA, the allocator's serving pair for `hosts` and one client pair, under `root`."""
    dirs = AllocatorCertDirs(root)
    ca = CertificateAuthority.new("agones-allocator-ca")
    write_pair(dirs.tls, ca.issue("agones-allocator", hosts, Usage.SERVER))
    dirs.client_ca.mkdir(parents=True, exist_ok=True)
    (dirs.client_ca / "ca.crt").write_bytes(ca.cert_pem)
    write_pair(dirs.client, ca.issue("agones-allocator-client", [], Usage.CLIENT))
    (dirs.client / "ca.crt").write_bytes(ca.cert_pem)
    return dirs
