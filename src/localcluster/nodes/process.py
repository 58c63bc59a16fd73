"""The simulated nodes (scheduler, kubelets and their simulated sidecars) as a process of their own.

They talk to the API server over HTTP only, so the local stack can run them in a child process
and leave its own event loop to the API server: `python -m agones.localcluster.nodes.process
CONFIG.json`. The config is `NodesConfig` as JSON (what `KubeletConfig` holds, the feature gates
as a string, the in-cluster CA as PEM text, and `ready_file`). The process builds one informer
factory, the `Scheduler` and the `Kubelet` with the User-Agents the in-process stack gives them
(`agones-local-kubelet`, `-scheduler`, `-sdkserver`, so the stack's write counter tells them
apart), creates `ready_file` once its caches synced, and on SIGTERM or SIGINT stops every pod
process it started (the kubelet's `stop`), then exits 0. A config it cannot read is one line on
stderr and exit 2.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from ... import aioloop
from ...client.config import load_config
from ...client.rest import RESTClient
from ...featuregates import FeatureGates
from ...informers import SharedInformerFactory
from ...logging import configure_logging
from .imagemap import ImageProgram
from .kubelet import Kubelet
from .podfiles import InCluster
from .podmesh import PodMesh
from .podrunner import KubeletConfig
from .scheduler import Scheduler

USER_AGENT = "agones-local"
"""The User-Agent prefix: `-kubelet`, `-scheduler`, `-sdkserver` follow it."""


class ConfigError(ValueError):
    """The nodes config is not what `NodesConfig` describes."""


@dataclass
class NodesConfig:
    kubeconfig: str
    api_port: int
    ready_file: str
    """Created once the caches synced (the parent waits for it)."""
    node_addresses: dict[str, str] = field(default_factory=dict)
    gates: str = ""
    use_netns: bool | None = None
    use_mountns: bool | None = None
    log_dir: str | None = None
    simulate_all: bool = False
    images: list[list[str]] = field(default_factory=list)
    """The user's image map entries, each `[image, *command]` (`imagemap.ImageProgram`)."""
    kubelet_client_token: str | None = None
    dns_server: str | None = None
    dns_target: list[Any] | None = None
    """`[host, port]` of the cluster DNS server."""
    in_cluster_host: str = ""
    in_cluster_port: int = 0
    in_cluster_ca_pem: str = ""
    in_cluster_token: str = ""
    sync_timeout: float = 30.0
    """How long to wait for the caches (a bare cluster has no GameServers to sync: short)."""

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> NodesConfig:
        try:
            raw = json.loads(text)
        except ValueError as err:
            raise ConfigError(f"nodes config is not JSON: {err}") from None
        if not isinstance(raw, dict):
            raise ConfigError("nodes config must be a JSON object")
        known = {f.name: f for f in fields(cls)}
        unknown = sorted(set(raw) - set(known))
        if unknown:
            raise ConfigError(f"nodes config: unknown field {unknown[0]!r}")
        try:
            config = cls(**raw)
        except TypeError as err:
            raise ConfigError(f"nodes config: {err}") from None
        config._check()
        return config

    def _check(self) -> None:
        kinds: dict[str, tuple[type, ...]] = {
            "kubeconfig": (str,),
            "ready_file": (str,),
            "gates": (str,),
            "in_cluster_host": (str,),
            "in_cluster_ca_pem": (str,),
            "in_cluster_token": (str,),
            "api_port": (int,),
            "in_cluster_port": (int,),
            "simulate_all": (bool,),
            "sync_timeout": (int, float),
            "use_netns": (bool, type(None)),
            "use_mountns": (bool, type(None)),
            "log_dir": (str, type(None)),
            "kubelet_client_token": (str, type(None)),
            "dns_server": (str, type(None)),
        }
        for name, allowed in kinds.items():
            value = getattr(self, name)
            if not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed):
                raise ConfigError(f"nodes config: {name} has the wrong type")
        addresses = self.node_addresses
        if not isinstance(addresses, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in addresses.items()
        ):
            raise ConfigError("nodes config: node_addresses must map names to addresses")
        if not isinstance(self.images, list) or not all(
            isinstance(i, list) and len(i) >= 2 and all(isinstance(x, str) for x in i)
            for i in self.images
        ):
            raise ConfigError("nodes config: images must be lists of [image, command...]")
        target = self.dns_target
        if target is not None and not (
            isinstance(target, list)
            and len(target) == 2
            and isinstance(target[0], str)
            and isinstance(target[1], int)
            and not isinstance(target[1], bool)
        ):
            raise ConfigError("nodes config: dns_target must be [host, port]")
        try:
            FeatureGates.parse(self.gates)
        except ValueError as err:
            raise ConfigError(f"nodes config: gates: {err}") from None

    def kubelet_config(self) -> KubeletConfig:
        in_cluster = None
        if self.in_cluster_port:
            in_cluster = InCluster(
                self.in_cluster_host,
                self.in_cluster_port,
                self.in_cluster_ca_pem.encode(),
                self.in_cluster_token,
            )
        return KubeletConfig(
            kubeconfig=self.kubeconfig,
            api_port=self.api_port,
            node_addresses=dict(self.node_addresses),
            gates=FeatureGates.parse(self.gates),
            use_netns=self.use_netns,
            use_mountns=self.use_mountns,
            log_dir=self.log_dir,
            simulate_all=self.simulate_all,
            images=[ImageProgram(i[0], tuple(i[1:])) for i in self.images],
            kubelet_client_token=self.kubelet_client_token,
            in_cluster=in_cluster,
            dns_server=self.dns_server,
            dns_target=(self.dns_target[0], self.dns_target[1]) if self.dns_target else None,
        )


async def serve(config: NodesConfig, stop: asyncio.Event) -> None:
    """Run the scheduler and kubelets until `stop` is set, then stop their pods."""
    base = load_config(config.kubeconfig)
    base.qps = 0
    clients = {
        who: RESTClient(replace(base, user_agent=f"{USER_AGENT}-{who}"))
        for who in ("kubelet", "scheduler", "sdkserver")
    }
    # No resync: the kubelet, kube-scheduler and Agones' sidecar (DisableResyncOnSDKServer) run
    # their informers without one, and a resync would replay every pod and GameServer to them.
    factory = SharedInformerFactory(clients["kubelet"], 0.0)
    scheduler = Scheduler(clients["scheduler"], factory)
    kubelet = Kubelet(
        clients["kubelet"], factory, config.kubelet_config(), sdk_client=clients["sdkserver"]
    )
    # Made before the factory starts, so that its Service informer runs too. With every pod
    # simulated no pod has a network namespace of its own, and the mesh has nothing to relay.
    mesh = None if config.simulate_all else PodMesh(kubelet.runners, factory)
    tasks: list[asyncio.Task[Any]] = []
    try:
        factory.start()
        await factory.wait_for_cache_sync(config.sync_timeout)
        tasks.append(asyncio.create_task(scheduler.run()))
        if mesh is not None:
            tasks.append(asyncio.create_task(mesh.run()))
        await kubelet.serve()
        Path(config.ready_file).touch()
        await stop.wait()
    finally:
        await kubelet.stop()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await factory.shutdown()
        for client in clients.values():
            await client.close()


async def _main(config: NodesConfig) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await serve(config, stop)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m agones.localcluster.nodes.process CONFIG.json", file=sys.stderr)
        return 2
    try:
        text = Path(args[0]).read_text()
        config = NodesConfig.from_json(text)
    except (OSError, UnicodeDecodeError, ConfigError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    configure_logging("info")
    with contextlib.suppress(KeyboardInterrupt):
        aioloop.run(_main(config))
    return 0


if __name__ == "__main__":
    sys.exit(main())
