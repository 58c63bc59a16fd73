"""Cluster mode of `agones sdkserver`: the sidecar of one GameServer on a kube-apiserver.

Waits until the API answers (a list every 4 s, as Agones' WaitForConnection), runs the SDKServer on
the GameServer's informer (`kubestore`; resync 30 s unless the DisableResyncOnSDKServer gate is on,
as in Agones), serves gRPC, the REST gateway and /healthz + /gshealthz, and on SIGTERM keeps
serving until the GameServer reaches Shutdown (graceful termination) unless `--graceful-termination=false` or the
SidecarContainers gate makes the sidecar's lifecycle independent.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal

import aiohttp
import structlog

from ..client.config import in_cluster_config, load_kube_config
from ..client.errors import ApiError
from ..featuregates import Feature, FeatureGates
from .kubestore import KubeGameServerStore
from .sdkserver import SDKServer, SDKServerOptions
from .serve import serve_sdk
from .settings import SDKServerSettings

log = structlog.get_logger("agones.sdkserver.cluster")


async def wait_for_connection(store: KubeGameServerStore, interval: float = 4.0) -> None:
    attempt = 0
    while True:
        try:
            await store.connect()
        except (ApiError, aiohttp.ClientError, OSError) as err:
            log.info("Connection to Kubernetes service failed", attempt=attempt, error=str(err))
            attempt += 1
            await asyncio.sleep(interval)
            continue
        log.info("Connection to Kubernetes service established", attempt=attempt)
        return


async def run_cluster(settings: SDKServerSettings, gates: FeatureGates) -> int:
    if not settings.gameserver_name or not settings.pod_namespace:
        log.error("cluster mode needs --gameserver-name and --pod-namespace")
        return 1
    try:
        config = (
            load_kube_config(settings.kubeconfig) if settings.kubeconfig else in_cluster_config()
        )
    except (OSError, KeyError, ValueError) as err:
        log.error("Could not create in cluster config", error=str(err))
        return 1
    resync = 0.0 if gates.enabled(Feature.DISABLE_RESYNC_ON_SDK_SERVER) else 30.0
    store = KubeGameServerStore(
        config, settings.pod_namespace, settings.gameserver_name, resync_period=resync
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    server: SDKServer | None = None
    try:
        connect = asyncio.create_task(wait_for_connection(store))
        stopping = asyncio.create_task(stop.wait())
        await asyncio.wait({connect, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if not connect.done():
            connect.cancel()
            return 0
        stopping.cancel()
        options = SDKServerOptions(
            request_rate_limit=settings.request_rate_limit,
            first_write_immediately=settings.first_write_immediately,
            health_autostart=settings.health_autostart,
        )
        server = SDKServer(store, gates, options=options, recorder=store)
        try:
            await server.run()
            serving = await serve_sdk(
                server,
                address=settings.address,
                grpc_port=settings.grpc_port,
                http_port=settings.http_port,
                health=server,
                health_port=settings.health_port,
            )
        except (ApiError, aiohttp.ClientError, OSError) as err:
            log.error("Could not start SDK server", error=str(err))
            return 1
        log.info(
            "SDK server running",
            gameserver=f"{settings.pod_namespace}/{settings.gameserver_name}",
            grpc_port=serving.grpc_port,
            http_port=serving.http_port,
            health_port=serving.health_port,
        )
        await stop.wait()
        if settings.graceful_termination and not gates.enabled(Feature.SIDECAR_CONTAINERS):
            await server.wait_for_shutdown()
        log.info("Shutting down SDK server")
        await serving.stop(0)
        return 0
    finally:
        if server is not None:
            await server.stop()
        await store.close()
