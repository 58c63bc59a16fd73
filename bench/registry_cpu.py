"""CPU per registry operation, in-process and without HTTP: `Registry.create`, `Registry.update`
and `Registry.patch` (a merge patch of `spec.replicas`) of the bench's 2 KB custom object, 5,000
each, timed with process_time() around each call (steadier than throughput on a shared machine);
the best of `ROUNDS` rounds (each on objects of its own) is printed, as the one least disturbed by
whatever else the machine ran.

    python bench/registry_cpu.py                      # this tree
    python bench/other_tree.py TREE bench/registry_cpu.py
"""

from __future__ import annotations

import asyncio
import copy
import gc
import inspect
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

try:
    from agones.localcluster.apiserver.registry import Registry
    from agones.localcluster.apiserver.server import LocalAPIServer
except ImportError:  # a tree from before the localcluster split (bench/other_tree.py)
    from agones.localcluster.registry import Registry  # type: ignore[no-redef]
    from agones.localcluster.server import LocalAPIServer  # type: ignore[no-redef]
from bench.bench_apiserver import crd_manifest, obj

COUNT = 5000
ROUNDS = 3


async def one_round(
    reg: Registry, info: Any, template: dict[str, Any], prefix: str, kw: dict[str, Any]
) -> dict[str, float]:
    """CPU seconds of COUNT creates, then COUNT updates of one of them, then COUNT patches of
    another."""
    create = update = patch = 0.0
    for i in range(COUNT):
        body = copy.deepcopy(template)
        body["metadata"]["name"] = f"{prefix}o{i}"
        start = time.process_time()
        await reg.create(info, "default", body, **kw)
        create += time.process_time() - start
    current = reg.get(info, "default", f"{prefix}o1").obj
    for _ in range(COUNT):
        body = copy.deepcopy(current)
        body["spec"]["replicas"] += 1
        start = time.process_time()
        current = (await reg.update(info, "default", f"{prefix}o1", body, **kw)).obj
        update += time.process_time() - start
    for i in range(COUNT):
        body = {"spec": {"replicas": i}}
        start = time.process_time()
        await reg.patch(info, "default", f"{prefix}o2", "merge", body, **kw)
        patch += time.process_time() - start
    return {"create": create, "update": update, "patch": patch}


async def main() -> None:
    try:
        from agones.aioloop import GC_THRESHOLDS  # what every agones process sets
    except ImportError:
        try:
            from agones.cmd.localcluster import GC_THRESHOLDS  # older trees: the apiserver's
        except ImportError:
            GC_THRESHOLDS = ()
    if GC_THRESHOLDS:
        gc.set_threshold(*GC_THRESHOLDS)
    # Trees that record managedFields take the writer's name; older ones take none.
    records = "manager" in inspect.signature(Registry.create).parameters
    kw = {"manager": "bench"} if records else {}
    srv = LocalAPIServer()
    await srv.start()
    reg = srv.registry
    crds = reg.lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    assert crds is not None
    manifest = crd_manifest("cpu.bench.example.com")
    await reg.create(crds, "", manifest)
    info = None
    for _ in range(200):
        info = reg.lookup(manifest["spec"]["group"], "v1", manifest["spec"]["names"]["plural"])
        if info is not None:
            break
        await asyncio.sleep(0.02)
    assert info is not None
    template = obj("x")
    template["apiVersion"] = info.api_version
    best: dict[str, float] = {}
    for round_ in range(ROUNDS):
        for verb, spent in (await one_round(reg, info, template, f"r{round_}-", kw)).items():
            best[verb] = min(best.get(verb, spent), spent)
    for verb in ("create", "update", "patch"):
        print(f"{verb}_cpu_us {best[verb] / COUNT * 1e6:.0f}")
    await srv.stop()


if __name__ == "__main__":
    asyncio.run(main())
