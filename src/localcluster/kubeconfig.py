"""Serving certificates and the kubeconfig clients use to reach the local API server.

`make_ca_and_cert` creates a throwaway CA and a server certificate for 127.0.0.1/localhost
(`agones.pki`: ECDSA P-256, valid one year). `write_kubeconfig` writes a kubeconfig that kubectl and both Python clients
accept: one cluster, one user (bearer token when set), one current context.
"""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..pki import CertificateAuthority, Usage

CONTEXT = "agones-local"


@dataclass(frozen=True)
class ServingCert:
    ca_pem: bytes
    cert_pem: bytes
    key_pem: bytes


def make_ca_and_cert(hosts: tuple[str, ...] = ("127.0.0.1", "localhost")) -> ServingCert:
    ca = CertificateAuthority.new("agones-local-ca")
    serving = ca.issue("kube-apiserver", list(hosts), Usage.SERVER)
    return ServingCert(ca.cert_pem, serving.cert_pem, serving.key_pem)


def write_kubeconfig(
    path: str | os.PathLike[str], server: str, ca_pem: bytes | None = None, token: str | None = None
) -> Path:
    """Write the kubeconfig (the CA inline, so the file stands alone) and return its path."""
    cluster: dict[str, object] = {"server": server}
    if ca_pem:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    user: dict[str, object] = {"token": token} if token else {}
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": CONTEXT, "cluster": cluster}],
        "users": [{"name": CONTEXT, "user": user}],
        "contexts": [
            {
                "name": CONTEXT,
                "context": {"cluster": CONTEXT, "user": CONTEXT, "namespace": "default"},
            }
        ],
        "current-context": CONTEXT,
        "preferences": {},
    }
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(yaml.safe_dump(doc, sort_keys=False))
    return out
