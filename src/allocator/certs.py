"""Certificates for the allocator: a CA, and server and client certificates it signs (what Agones'
Helm chart and `install/yaml` generate for `allocator-tls`, `allocator-tls-ca` and
`allocator-client.default`).

`CertificateAuthority.new(name)` makes a self-signed CA (EC P-256, a year); `issue(name, hosts,
usage)` signs a leaf for DNS names / IPs with the ServerAuth or ClientAuth extended key usage.
`write_pair(dir, pair)` writes `tls.crt` / `tls.key` (key 0600), the layout of a mounted TLS
secret; `write_allocator_certs(root, hosts)` writes a whole set (server, client CA, one client) for
a local allocator.
"""

from __future__ import annotations

import datetime
import enum
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


class Usage(enum.Enum):
    SERVER = ExtendedKeyUsageOID.SERVER_AUTH
    CLIENT = ExtendedKeyUsageOID.CLIENT_AUTH


@dataclass(frozen=True)
class KeyPair:
    cert_pem: bytes
    key_pem: bytes


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _sans(hosts: list[str]) -> list[x509.GeneralName]:
    sans: list[x509.GeneralName] = []
    for host in hosts:
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            sans.append(x509.DNSName(host))
    return sans


def _validity(builder: x509.CertificateBuilder, days: int) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return builder.not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(
        now + datetime.timedelta(days=days)
    )


@dataclass(frozen=True)
class CertificateAuthority:
    cert: x509.Certificate
    key: ec.EllipticCurvePrivateKey

    @classmethod
    def new(cls, name: str, days: int = 365) -> CertificateAuthority:
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        builder = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
        )
        cert = _validity(builder, days).sign(key, hashes.SHA256())
        return cls(cert, key)

    @property
    def cert_pem(self) -> bytes:
        return self.cert.public_bytes(serialization.Encoding.PEM)

    def pair(self) -> KeyPair:
        return KeyPair(self.cert_pem, _key_pem(self.key))

    def issue(self, name: str, hosts: list[str], usage: Usage, days: int = 365) -> KeyPair:
        key = ec.generate_private_key(ec.SECP256R1())
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
            .issuer_name(self.cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([usage.value]), critical=False)
        )
        if hosts:
            builder = builder.add_extension(x509.SubjectAlternativeName(_sans(hosts)), False)
        cert = _validity(builder, days).sign(self.key, hashes.SHA256())
        return KeyPair(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))


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
