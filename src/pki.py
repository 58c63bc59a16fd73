"""Keys and X.509 certificates, the one place the project makes them (EC P-256, SHA-256).

`CertificateAuthority.new(name)` makes a self-signed CA valid `days` (a year by default) from five
minutes ago; `issue(name, hosts, usage)` signs a leaf for DNS names and IP addresses with the
ServerAuth or ClientAuth extended key usage; `self_signed(hosts)` is a lone serving certificate that
is its own CA. `KeyPair` holds PEM bytes (the key as unencrypted PKCS#8). The local API server, the
admission webhooks and the allocator all build their certificates here, and their TLS server
contexts send `SESSION_TICKETS` (`server_context(cert, key)` for those without client
certificates).
"""

from __future__ import annotations

import datetime
import enum
import ipaddress
import ssl
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


def key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def subject_alt_names(hosts: list[str]) -> list[x509.GeneralName]:
    sans: list[x509.GeneralName] = []
    for host in hosts:
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            sans.append(x509.DNSName(host))
    return sans


def with_validity(builder: x509.CertificateBuilder, days: int) -> x509.CertificateBuilder:
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
        cert = with_validity(builder, days).sign(key, hashes.SHA256())
        return cls(cert, key)

    @property
    def cert_pem(self) -> bytes:
        return self.cert.public_bytes(serialization.Encoding.PEM)

    def pair(self) -> KeyPair:
        return KeyPair(self.cert_pem, key_pem(self.key))

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
            builder = builder.add_extension(
                x509.SubjectAlternativeName(subject_alt_names(hosts)), False
            )
        cert = with_validity(builder, days).sign(self.key, hashes.SHA256())
        return KeyPair(cert.public_bytes(serialization.Encoding.PEM), key_pem(key))


def self_signed(hosts: list[str], days: int = 365) -> KeyPair:
    """A serving certificate for `hosts` (DNS names and/or IP addresses) that is its own CA."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0] if hosts else "agones")])
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
    )
    if hosts:
        builder = builder.add_extension(
            x509.SubjectAlternativeName(subject_alt_names(hosts)), False
        )
    cert = with_validity(builder, days).sign(key, hashes.SHA256())
    return KeyPair(cert.public_bytes(serialization.Encoding.PEM), key_pem(key))


SESSION_TICKETS = 1
"""TLS 1.3 session tickets a server sends after each handshake: one, as Go's crypto/tls does,
not OpenSSL's two. Clients on asyncio (this project's) never resume a session. The second ticket
costs little: 0.66 against 0.70 ms of server CPU per new connection (`bench_tls_handshake`)."""


def server_context(cert_file: str | Path, key_file: str | Path) -> ssl.SSLContext:
    """A TLS server context (Python's defaults for serving, no client certificate asked) for
    the certificate chain and key in these PEM files, sending `SESSION_TICKETS`."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.num_tickets = SESSION_TICKETS
    context.load_cert_chain(cert_file, key_file)
    return context
