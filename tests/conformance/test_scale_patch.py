"""A scale-subresource PATCH names no resourceVersion, so it never fails with 409 when another client
writes the object at the same time (the apiserver re-applies the patch): what `kubectl scale` relies
on while a controller keeps writing the status."""

from __future__ import annotations

import threading

from tests.cluster import Api, Cluster
from tests.conformance.conftest import CRD


def test_scale_patch_never_conflicts_with_concurrent_status_writes(
    cluster: Cluster, namespace: str, widgets: CRD
) -> None:
    cluster.api.post(widgets.path(namespace), widgets.obj("busy", {"replicas": 1}))
    stop = threading.Event()
    writer = Api(cluster.kubeconfig)  # its own connection pool, as a controller would have

    def write_status() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            writer.patch(widgets.path(namespace, "busy", "status"), {"status": {"replicas": n}})

    thread = threading.Thread(target=write_status, daemon=True)
    thread.start()
    try:
        statuses = [
            cluster.api.patch(
                widgets.path(namespace, "busy", "scale"), {"spec": {"replicas": r}}
            ).status
            for r in range(2, 42)
        ]
    finally:
        stop.set()
        thread.join(10)
    assert statuses == [200] * 40
    assert cluster.api.get(widgets.path(namespace, "busy")).body["spec"]["replicas"] == 41
