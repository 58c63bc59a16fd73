"""Fault injection (local server only) and the guarantee that a slow or stopped watch consumer never
blocks writers."""

from __future__ import annotations

import socket
import threading
import urllib.parse

import pytest

from tests.cluster import Cluster
from tests.conformance.watching import WatchCollector, is_event
from tests.waiting import wait_for


def _cm(name: str, size: int = 2048) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name},
        "data": {"blob": "x" * size},
    }


@pytest.mark.parametrize(
    ("code", "reason"), [(409, "Conflict"), (429, "TooManyRequests"), (500, "InternalError")]
)
def test_fail_next_writes(local_only: Cluster, namespace: str, code: int, reason: str) -> None:
    cluster = local_only
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    cluster.fault("fail-writes", count=2, code=code)
    first = cluster.api.post(path, _cm(f"f{code}"))
    second = cluster.api.post(path, _cm(f"f{code}"))
    assert (first.status, second.status) == (code, code)
    assert first.body["reason"] == reason
    assert cluster.api.post(path, _cm(f"f{code}")).status == 201


def test_close_watches_ends_streams(local_only: Cluster, namespace: str) -> None:
    cluster = local_only
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    start = cluster.api.get(path).body["metadata"]["resourceVersion"]
    watch = WatchCollector(cluster.api, path, resourceVersion=start, timeoutSeconds=60)
    cluster.api.post(path, _cm("cw"))
    watch.wait_for(is_event("ADDED", "cw"))
    assert cluster.fault("close-watches")["closed"] >= 1
    assert watch.ended.wait(10)


def test_write_latency(local_only: Cluster, namespace: str) -> None:
    cluster = local_only
    cluster.fault("latency", seconds=0.2)
    try:
        assert (
            cluster.api.post(f"/api/v1/namespaces/{namespace}/configmaps", _cm("slow")).status
            == 201
        )
    finally:
        cluster.fault("clear")


def _stalled_watch(cluster: Cluster, path: str, rv: str) -> socket.socket:
    """Open a watch over a raw socket and never read from it (a stopped consumer)."""
    url = urllib.parse.urlsplit(cluster.url)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((url.hostname, url.port))
    ctx = cluster.ssl_context()
    if ctx is not None:
        sock = ctx.wrap_socket(sock, server_hostname=url.hostname)
    auth = f"Authorization: Bearer {cluster.token}\r\n" if cluster.token else ""
    request = f"GET {path}?watch=true&resourceVersion={rv} HTTP/1.1\r\nHost: {url.hostname}\r\n{auth}Accept: application/json\r\n\r\n"
    sock.sendall(request.encode())
    return sock


def test_stopped_watch_consumer_never_blocks_writes(local_only: Cluster, namespace: str) -> None:
    cluster = local_only
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    rv = cluster.api.get(path).body["metadata"]["resourceVersion"]
    live = WatchCollector(cluster.api, path, resourceVersion=rv, timeoutSeconds=120)
    stalled = [_stalled_watch(cluster, path, rv) for _ in range(3)]
    wait_for(lambda: cluster.fault("stats")["watchers"] >= 4, what="watches registered")
    before = cluster.fault("stats")["watchers"]
    try:
        done = threading.Event()
        errors: list[object] = []

        def writer() -> None:
            # 25 MB: far more than the stalled consumers' socket buffers and watcher queues hold.
            try:
                for i in range(400):
                    resp = cluster.api.post(path, _cm(f"flood-{i}", size=64 * 1024))
                    if resp.status != 201:
                        errors.append(resp)
            except Exception as err:
                errors.append(err)
            finally:
                done.set()

        thread = threading.Thread(target=writer, daemon=True)
        thread.start()
        assert done.wait(120), "writes stalled behind stopped watch consumers"
        assert errors == []
        live.wait_for(is_event("ADDED", "flood-399"), timeout=60)
        # The stopped consumers fell behind and were cut off; the live one was not.
        assert cluster.fault("stats")["watchers"] <= before - 3
        assert not live.ended.is_set()
    finally:
        for s in stalled:
            s.close()


def test_rewatch_from_last_version_after_watches_close(local_only: Cluster, namespace: str) -> None:
    # What an informer does when its watch drops: nothing written meanwhile is lost.
    cluster = local_only
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    start = cluster.api.get(path).body["metadata"]["resourceVersion"]
    first = WatchCollector(cluster.api, path, resourceVersion=start, timeoutSeconds=60)
    cluster.api.post(path, _cm("rw-1"))
    seen = first.wait_for(is_event("ADDED", "rw-1"))
    cluster.fault("close-watches")
    assert first.ended.wait(10)
    cluster.api.post(path, _cm("rw-2"))
    cluster.api.delete(f"{path}/rw-1")
    resumed = WatchCollector(
        cluster.api,
        path,
        resourceVersion=seen["object"]["metadata"]["resourceVersion"],
        timeoutSeconds=60,
    )
    resumed.wait_for(is_event("ADDED", "rw-2"))
    resumed.wait_for(is_event("DELETED", "rw-1"))
    assert not any(is_event("ADDED", "rw-1")(e) for e in resumed.seen)
