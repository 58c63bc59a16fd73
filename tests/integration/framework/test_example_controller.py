"""The example controller, run in-process against the cluster, annotates ConfigMaps with counts."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from agones.client.errors import NotFoundError
from agones.client.rest import RESTClient
from agones.client.versioned.resources import CONFIG_MAPS as CONFIGMAPS
from agones.controller import Context, ControllerRunner, ControllerSettings
from agones.informers.meta import get_annotations
from tests.waiting import wait_for_async

pytestmark = pytest.mark.cluster

EXAMPLE = Path(__file__).parents[3] / "examples" / "configmap_counter.py"


def load_example() -> Any:
    spec = importlib.util.spec_from_file_location("configmap_counter", EXAMPLE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["configmap_counter"] = module
    spec.loader.exec_module(module)
    return module


async def counts(client: RESTClient, namespace: str, label: str) -> dict[str, str | None]:
    listed = await client.list(CONFIGMAPS, namespace, label_selector=f"test={label}")
    return {
        o["metadata"]["name"]: get_annotations(o).get("example.agones.dev/configmaps-in-namespace")
        for o in listed["items"]
    }


async def eventually(client: RESTClient, namespace: str, label: str, want: dict[str, str]) -> None:
    async def matches() -> bool:
        return await counts(client, namespace, label) == want

    with contextlib.suppress(AssertionError):
        await wait_for_async(matches, 10, what=f"counts {want}")
    assert await counts(client, namespace, label) == want  # shows the difference


async def test_example_controller_counts_and_annotates(
    client: RESTClient, cluster_kubeconfig: str
) -> None:
    example = load_example()
    label = f"ex-{uuid.uuid4().hex[:8]}"
    namespace = "default"
    names = ["one", "two", "three"]
    for name in names:
        await client.create(
            CONFIGMAPS,
            {"metadata": {"name": f"{label}-{name}", "labels": {"test": label}}},
            namespace,
        )

    def build(ctx: Context) -> list[Any]:
        return [example.ConfigMapCounter(ctx, f"test={label}").queue]

    runner = ControllerRunner(
        ControllerSettings(http_host="127.0.0.1", http_port=0, num_workers=2),
        client,
        build,
        registry=CollectorRegistry(),
    )
    task = asyncio.create_task(runner.run())
    try:
        await eventually(client, namespace, label, {f"{label}-{n}": "3" for n in names})
        await client.delete(CONFIGMAPS, f"{label}-one", namespace)
        await eventually(client, namespace, label, {f"{label}-{n}": "2" for n in names[1:]})
    finally:
        runner.stop()
        assert await asyncio.wait_for(task, 30) == 0
        for name in names:
            with contextlib.suppress(NotFoundError):
                await client.delete(CONFIGMAPS, f"{label}-{name}", namespace)
