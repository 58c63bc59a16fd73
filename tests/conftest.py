"""Fixtures shared by every test package.

`cluster` (session): the local API server by default, or the cluster KUBECONFIG points at.
`namespace`: a fresh namespace per test module, deleted afterwards.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.cluster import Cluster, start_cluster


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    c, runner = start_cluster()
    try:
        yield c
    finally:
        if runner is not None:
            runner.stop()


@pytest.fixture(scope="module")
def namespace(cluster: Cluster) -> Iterator[str]:
    name = cluster.create_namespace()
    try:
        yield name
    finally:
        cluster.delete_namespace(name)


@pytest.fixture
def local_only(cluster: Cluster) -> Cluster:
    """Skip on a real cluster (fault injection and local-only knobs)."""
    if not cluster.local:
        pytest.skip("needs the local API server (fault injection)")
    return cluster
