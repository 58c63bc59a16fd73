"""CPU of the registry's write path on a Fleet's real writes, in-process and without HTTP.

`--record FILE` runs a small Fleet 0 → N Ready → 0 on the local cluster (as `bench_fleet_cpu`) and
writes down every registry write the HTTP handlers make (create, update, patch, delete, with
their bodies, subresources and field managers) and whether it succeeded. Replaying FILE (the
default) makes the same writes again, in order, on a fresh in-process `LocalAPIServer` with the
Agones webhook configurations, whose webhooks are answered by `extensions.webhooks.review`
in-process (the AdmissionReview still goes through JSON both ways, the HTTPS hop does not).
Uids and resourceVersions in the bodies are mapped to the replay's own. Each write is timed
with process_time(); the output is the median µs per write by verb and kind (first-time costs,
as of a CRD's schema, fall out), the best of `ROUNDS` replays, and their sum over the writes.

    python -m bench.registry_replay_cpu --record bench/fixtures/fleet-writes.json.gz
    python -m bench.registry_replay_cpu                          # replay it
    python bench/other_tree.py TREE bench/registry_replay_cpu.py # another tree
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import copy
import gzip
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "fleet-writes.json.gz"
ROUNDS = 5
VERBS = ("create", "update", "patch", "delete")


def _record(path: Path, replicas: int) -> None:
    from agones.localcluster.apiserver import registry as reg_mod

    log: list[dict[str, Any]] = []
    depth: dict[int, int] = collections.defaultdict(int)

    def wrap(verb: str) -> None:
        orig = getattr(reg_mod.Registry, verb)

        async def recorded(self: Any, info: Any, *args: Any, **kwargs: Any) -> Any:
            task = id(asyncio.current_task())
            top = depth[task] == 0
            item = {
                "verb": verb,
                "gvr": [info.group, info.version, info.resource],
                "args": copy.deepcopy([a for a in args if not hasattr(a, "propagation")]),
                "kwargs": copy.deepcopy(kwargs),
            }
            if verb == "delete":
                opts = args[2]
                item["opts"] = {"propagation": opts.propagation, "grace": opts.grace_period}
            depth[task] += 1
            try:
                out = await orig(self, info, *args, **kwargs)
            except Exception as err:
                item["error"] = type(err).__name__
                raise
            finally:
                depth[task] -= 1
                if top and not kwargs.get("system"):
                    log.append(item)
            entry = out[0] if isinstance(out, tuple) else out
            item["uid"] = entry.obj["metadata"].get("uid", "")
            item["name"] = entry.obj["metadata"].get("name", "")
            return out

        setattr(reg_mod.Registry, verb, recorded)

    for verb in VERBS:
        wrap(verb)
    from agones.localcluster.apiserver import handlers

    bind = handlers.ResourceHandler._bind

    async def recorded_bind(self: Any, request: Any, info: Any, ns: str, name: str) -> Any:
        item = {"verb": "bind", "gvr": [info.group, info.version, info.resource]}
        item["args"] = [ns, name, await request.json()]
        item["kwargs"] = {}
        out = await bind(self, request, info, ns, name)
        log.append(item)
        return out

    handlers.ResourceHandler._bind = recorded_bind
    sys.argv = ["bench_fleet_cpu", "--replicas", str(replicas), "--rounds", "1"]
    from bench import bench_fleet_cpu

    bench_fleet_cpu.main()
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt") as f:
        json.dump(log, f)
    print(f"recorded {len(log)} writes in {path}")


def _mapped(value: Any, uids: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {k: _mapped(v, uids) for k, v in value.items()}
    if isinstance(value, list):
        return [_mapped(v, uids) for v in value]
    if isinstance(value, str):
        return uids.get(value, value)
    return value


def _bind(reg: Any, info: Any, ns: str, name: str, body: dict[str, Any]) -> Any:
    """What the pods/binding handler writes (handlers.ResourceHandler._bind)."""
    from agones.localcluster.apiserver.meta import now_rfc3339

    entry = reg.get(info, ns, name)
    node = body["target"]["name"]

    def bind(obj: dict[str, Any]) -> None:
        obj["spec"]["nodeName"] = node
        conds = obj.setdefault("status", {}).setdefault("conditions", [])
        conds[:] = [c for c in conds if c.get("type") != "PodScheduled"]
        scheduled = {"type": "PodScheduled", "status": "True", "lastProbeTime": None}
        conds.append(scheduled | {"lastTransitionTime": now_rfc3339()})

    return reg.force_update(info, entry, bind)


def _in_process_webhooks(admission: Any) -> None:
    """Answer the webhook configurations' calls with `webhooks.review`, JSON both ways."""
    import msgspec

    from agones.extensions.webhooks import review
    from agones.featuregates import FeatureGates

    gates = FeatureGates()

    async def call(hook: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        cfg = hook.get("clientConfig") or {}
        path = (cfg.get("service") or {}).get("path") or "/" + cfg.get("url", "").rsplit("/", 1)[-1]
        answer = review(path, msgspec.json.decode(msgspec.json.encode(body)), gates)
        out: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(answer))["response"]
        return out

    admission._call = call


async def _replay(log: list[dict[str, Any]]) -> dict[tuple[str, str, str], list[float]]:
    try:
        from agones.localcluster.apiserver.deletion import DeleteOptions
        from agones.localcluster.apiserver.server import LocalAPIServer
    except ImportError:  # a tree from before the localcluster split
        from agones.localcluster.deletion import DeleteOptions  # type: ignore[no-redef]
        from agones.localcluster.server import LocalAPIServer  # type: ignore[no-redef]
    from agones.localcluster.apiserver import errors

    failed: collections.Counter[tuple[str, str, str]] = collections.Counter()
    srv = LocalAPIServer()
    await srv.start()
    reg = srv.registry
    reg.graceful_pod_deletion = True  # as the local cluster's kubelets confirm deletions
    _in_process_webhooks(srv.admission)
    uids: dict[str, str] = {}
    times: dict[tuple[str, str, str], list[float]] = collections.defaultdict(list)
    try:
        for item in log:
            if item.get("error"):
                continue
            info = reg.lookup(*item["gvr"])
            for _ in range(100):
                if info is not None:
                    break
                await asyncio.sleep(0.02)  # a CRD just created: served once Established
                info = reg.lookup(*item["gvr"])
            assert info is not None, item["gvr"]
            args = _mapped(item["args"], uids)
            kwargs = _mapped(item["kwargs"], uids)
            verb = item["verb"]
            if verb == "create" and isinstance(args[1], dict):
                md = args[1].setdefault("metadata", {})
                md["name"] = item["name"]  # the recorded (maybe generated) name
            if verb == "update" and isinstance(args[2], dict):
                stored = reg.store.get(info.key, args[0], args[1])
                md = args[2].get("metadata") or {}
                if stored is not None and md.get("resourceVersion"):
                    md["resourceVersion"] = stored.obj["metadata"]["resourceVersion"]
            if verb == "patch" and args[2] == "json":
                stored = reg.store.get(info.key, args[0], args[1])
                for op in args[3]:
                    if stored is not None and op.get("path") == "/metadata/resourceVersion":
                        op["value"] = stored.obj["metadata"]["resourceVersion"]
            if verb == "delete":
                opts = item["opts"]
                args.insert(2, DeleteOptions(opts["propagation"], grace_period=opts["grace"]))
            sub = kwargs.get("sub", "")
            if verb == "patch" and len(args) > 4:
                sub = args[4]
            elif verb == "update" and len(args) > 3:
                sub = args[3]
            start = time.process_time()
            try:
                if verb == "bind":
                    out = _bind(reg, info, *args)
                else:
                    out = await getattr(reg, verb)(info, *args, **kwargs)
            except errors.StatusError as err:
                if not failed[(verb, info.kind, sub)]:
                    print(f"{verb} {info.kind} {sub}: {err}", file=sys.stderr)
                failed[(verb, info.kind, sub)] += 1
                continue
            times[(verb, info.kind, sub)].append(time.process_time() - start)
            if verb == "create" and item.get("uid"):
                uids[item["uid"]] = out.obj["metadata"]["uid"]
    finally:
        await srv.stop()
    if failed:
        print(f"failed: {dict(failed)}", file=sys.stderr)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", type=Path, default=None)
    parser.add_argument("--replicas", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("file", nargs="?", type=Path, default=FIXTURE)
    args = parser.parse_args()
    if args.record is not None:
        _record(args.record, args.replicas)
        return
    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40))
    with gzip.open(args.file, "rt") as f:
        log = json.load(f)
    best: dict[tuple[str, str, str], float] = {}
    counts: dict[tuple[str, str, str], int] = {}
    for _ in range(args.rounds):
        for key, spent in asyncio.run(_replay(log)).items():
            middle = statistics.median(spent)
            best[key] = min(best.get(key, middle), middle)
            counts[key] = len(spent)
    total = 0.0
    for key in sorted(best, key=lambda k: -best[k] * counts[k]):
        total += best[key] * counts[key]
        if counts[key] >= 5:
            print(
                f"{'/'.join(k for k in key if k):32s} n={counts[key]:5d} {best[key] * 1e6:7.0f} us"
            )
    print(f"total_ms {total * 1e3:.1f}")


if __name__ == "__main__":
    main()
