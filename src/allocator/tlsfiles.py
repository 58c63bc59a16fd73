"""The allocator's TLS material from its mounted directories, hot-reloaded (Agones `readTLSCert`,
`getCACertPool` and the `fswatch` watchers of `cmd/allocator`).

`TLSFiles.load()` reads `tls_dir/tls.crt` + `tls.key` and, with mTLS, every `*.crt`/`*.pem` of
`client_ca_dir` (a file that does not parse is skipped, as Agones logs and skips it) and builds the
server `ssl.SSLContext`: TLS 1.2+, ALPN `http/1.1` then `h2`, and with mTLS a client certificate
required that chains to those CAs with the ClientAuth usage. `context()` is the current one; a
listener takes it for every new handshake, so a reload applies to new connections without a
restart. `watch()` polls the directories (names, sizes, mtimes) every `interval` seconds and
reloads on change; a reload that fails keeps the previous context and logs the error.
"""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path
from typing import Any

import structlog

from .. import pki

# In this order: a client offering HTTP/1.1 (curl, browsers, HTTP libraries) gets it and reaches
# REST; a gRPC client offers only h2 and reaches gRPC (see `mux`).
ALPN_PROTOCOLS = ("http/1.1", "h2")


def _is_ca_file(path: Path) -> bool:
    return path.is_file() and path.suffix in (".crt", ".pem")


def _signature(directory: Path) -> tuple[tuple[str, int, int], ...]:
    if not directory.is_dir():
        return ()
    items = []
    for path in sorted(directory.iterdir()):
        try:
            stat = path.stat()
        except OSError:
            continue
        items.append((path.name, stat.st_size, stat.st_mtime_ns))
    return tuple(items)


def ca_pem_bundle(client_ca_dir: Path, log: Any) -> str:
    """The PEM certificates of every `*.crt`/`*.pem` in the directory that parses."""
    if not client_ca_dir.is_dir():
        raise FileNotFoundError(f"error reading certs from dir {client_ca_dir}: not a directory")
    pems: list[str] = []
    for path in sorted(client_ca_dir.iterdir()):
        if not _is_ca_file(path):
            continue
        text = path.read_text(errors="replace")
        try:
            ssl.create_default_context(cadata=text)
        except (ssl.SSLError, ValueError):
            log.error("client cert cannot be installed", file=str(path))
            continue
        pems.append(text)
    return "\n".join(pems)


class TLSFiles:
    def __init__(
        self, tls_dir: str | Path, client_ca_dir: str | Path, mtls: bool, logger: Any = None
    ) -> None:
        self.tls_dir = Path(tls_dir)
        self.client_ca_dir = Path(client_ca_dir)
        self.mtls = mtls
        self.log = (logger or structlog.get_logger()).bind(component="allocator-tls")
        self._context: ssl.SSLContext | None = None
        self._seen: tuple[Any, ...] = ()
        self.reloads = 0

    def _dirs_signature(self) -> tuple[Any, ...]:
        ca = _signature(self.client_ca_dir) if self.mtls else ()
        return (_signature(self.tls_dir), ca)

    def load(self) -> ssl.SSLContext:
        """Build a context from the files now; raises when they do not make one."""
        seen = self._dirs_signature()
        # not `pki.server_context`: Python's serving defaults would trust the system's CAs for
        # client certificates, and only the client CA directory may sign them
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.num_tickets = pki.SESSION_TICKETS
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.set_alpn_protocols(list(ALPN_PROTOCOLS))
        context.load_cert_chain(self.tls_dir / "tls.crt", self.tls_dir / "tls.key")
        if self.mtls:
            context.verify_mode = ssl.CERT_REQUIRED
            bundle = ca_pem_bundle(self.client_ca_dir, self.log)
            if bundle:
                context.load_verify_locations(cadata=bundle)
        self._context = context
        self._seen = seen
        self.reloads += 1
        return context

    def context(self) -> ssl.SSLContext:
        if self._context is None:
            return self.load()
        return self._context

    def reload_if_changed(self) -> bool:
        """Reload when a watched directory changed; True when a new context is in use."""
        if self._dirs_signature() == self._seen:
            return False
        try:
            self.load()
        except (OSError, ssl.SSLError, ValueError) as err:
            self.log.error("could not load TLS certs; keeping the old ones", error=str(err))
            self._seen = self._dirs_signature()
            return False
        self.log.info("TLS certs updated")
        return True

    async def watch(self, interval: float = 1.0) -> None:
        """Reload on change until cancelled."""
        while True:
            await asyncio.sleep(interval)
            self.reload_if_changed()
