"""Example controller: annotate every ConfigMap with the number of ConfigMaps in its namespace.

A sync handler on the agones-py controller framework, the way Agones' controllers are built: an
informer feeds a rate-limited WorkerQueue; the handler reads the lister (never the event), writes
only when something changed, and returns (errors re-queue with back-off). Run it against any cluster:

    python examples/configmap_counter.py --kubeconfig ~/.kube/config --http-port 8080
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from agones.client.config import ConfigError, load_config
from agones.client.errors import NotFoundError
from agones.client.rest import Resource, RESTClient
from agones.controller import Context, ControllerRunner, ControllerSettings
from agones.informers import ResourceEventHandlerFuncs, split_meta_namespace_key
from agones.informers.meta import get_annotations, get_namespace
from agones.logging import configure_logging
from agones.workqueue import WorkerQueue

CONFIGMAPS = Resource("", "v1", "configmaps", kind="ConfigMap")
ANNOTATION = "example.agones.dev/configmaps-in-namespace"


class ConfigMapCounter:
    def __init__(self, ctx: Context, label_selector: str | None = None) -> None:
        informer = ctx.informer_factory.for_resource(CONFIGMAPS, label_selector=label_selector)
        self.lister = informer.lister()
        self.client = ctx.client
        self.recorder = ctx.event_broadcaster.new_recorder("configmap-counter")
        self.queue = WorkerQueue(self.sync_config_map, ctx.logger, "configmap", "configmap-counter")
        informer.informer().add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self.enqueue_namespace,
                update_func=lambda old, new: self.queue.enqueue(new),
                delete_func=self.enqueue_namespace,
            )
        )

    def enqueue_namespace(self, obj: Any) -> None:
        """A ConfigMap came or went: every ConfigMap in its namespace has a new count."""
        namespace = get_namespace(getattr(obj, "obj", None) or obj)
        for config_map in self.lister.by_namespace(namespace).list():
            self.queue.enqueue(config_map)

    async def sync_config_map(self, key: str) -> None:
        namespace, name = split_meta_namespace_key(key)
        try:
            config_map = self.lister.by_namespace(namespace).get(name)
        except NotFoundError:
            return  # deleted since it was queued: nothing to do
        count = str(len(self.lister.by_namespace(namespace).list()))
        if get_annotations(config_map).get(ANNOTATION) == count:
            return
        patch = {"metadata": {"annotations": {ANNOTATION: count}}}
        await self.client.patch(CONFIGMAPS, name, patch, namespace=namespace)
        self.recorder.event(config_map, "Normal", "Counted", f"{count} ConfigMaps in {namespace}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kubeconfig", default=None)
    parser.add_argument("--http-port", type=int, default=8080)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--label-selector", default=None, help="only count matching ConfigMaps")
    args = parser.parse_args(argv)
    configure_logging("info")
    settings = ControllerSettings(http_port=args.http_port, num_workers=args.workers)

    try:
        config = load_config(args.kubeconfig)
    except ConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1

    async def run() -> int:
        async with RESTClient(config) as client:

            def build(ctx: Context) -> list[WorkerQueue]:
                return [ConfigMapCounter(ctx, args.label_selector).queue]

            return await ControllerRunner(settings, client, build).run()

    return asyncio.run(run())


if __name__ == "__main__":
    sys.exit(main())
