"""The controllers a cluster runs inside kube-controller-manager that clients can observe here:

- `GarbageCollector`: deletes dependents whose owners are gone (ownerReferences), honours the
  `foregroundDeletion` and `orphan` finalizers that Foreground and Orphan propagation add.
- `NamespaceController`: creates (and re-creates) each namespace's `default` ServiceAccount, empties a
  terminating namespace before removing its `kubernetes` finalizer.
- `EventReaper`: deletes Events an hour after their last write, as the apiserver's event TTL does.

The first two learn of changes from registry listeners (synchronous, non-blocking) and do their
writes from a work queue, so a write never waits for them; failed work is retried with back-off.
Their writes skip fault injection.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from datetime import UTC, datetime
from typing import Any

from . import errors
from .deletion import DeleteOptions
from .registry import Registry
from .resources import ResourceInfo
from .workqueue import EmbeddedQueue

log = logging.getLogger(__name__)
Obj = dict[str, Any]
Key = tuple[str, str, str]  # (resource key, namespace, name)


class _Controller:
    """A controller fed by registry listeners through the framework's work queue."""

    def __init__(self, name: str) -> None:
        self.work = EmbeddedQueue(name, self.process)

    def start(self) -> None:
        self.work.start()

    async def stop(self) -> None:
        await self.work.stop()

    async def process(self, item: tuple[str, ...]) -> bool | None:
        raise NotImplementedError


class GarbageCollector(_Controller):
    def __init__(self, registry: Registry) -> None:
        super().__init__("garbage-collector")
        self.registry = registry
        self.dependents: dict[str, set[Key]] = defaultdict(set)
        self.by_uid: dict[str, Key] = {}
        registry.listeners.append(self.observe)

    def observe(self, info: ResourceInfo, old: Obj | None, new: Obj | None) -> None:
        obj = new if new is not None else old
        assert obj is not None
        md = obj["metadata"]
        key: Key = (info.key, md.get("namespace", ""), md["name"])
        old_refs = {
            r.get("uid") for r in ((old or {}).get("metadata", {}).get("ownerReferences") or [])
        }
        new_refs = {
            r.get("uid") for r in ((new or {}).get("metadata", {}).get("ownerReferences") or [])
        }
        for uid in old_refs - new_refs:
            self.dependents[uid].discard(key)
            if not self.dependents[uid]:
                del self.dependents[uid]
        for uid in new_refs - old_refs:
            self.dependents[uid].add(key)
        if new is None:
            self.by_uid.pop(md.get("uid", ""), None)
            if md.get("uid") in self.dependents:
                self.work.add("owner-gone", md["uid"])
            for uid in old_refs:
                if uid in self.by_uid:
                    self.work.add("owner", uid)
            return
        self.by_uid[md["uid"]] = key
        finalizers = md.get("finalizers") or []
        if md.get("deletionTimestamp") and (
            "foregroundDeletion" in finalizers or "orphan" in finalizers
        ):
            self.work.add("owner", md["uid"])
        if old is None and new_refs:
            self.work.add("dangling", *key)

    def _entry(self, key: Key) -> tuple[ResourceInfo, Any] | None:
        info = self.registry.by_key(key[0])
        if info is None:
            return None
        entry = self.registry.store.get(key[0], key[1], key[2])
        return None if entry is None else (info, entry)

    def _owner_exists(self, ref: Obj, namespace: str) -> bool:
        """Whether the referenced owner exists (unknown kinds count as existing)."""
        api_version = ref.get("apiVersion", "")
        group = api_version.split("/")[0] if "/" in api_version else ""
        info = self.registry.by_kind(group, ref.get("kind", ""))
        if info is None:
            return True
        entry = self.registry.store.get(
            info.key, namespace if info.namespaced else "", ref.get("name", "")
        )
        return entry is not None and entry.obj["metadata"].get("uid") == ref.get("uid")

    async def _delete(self, key: Key, propagation: str) -> None:
        found = self._entry(key)
        if found is None:
            return
        info, entry = found
        if entry.obj["metadata"].get("deletionTimestamp"):
            return
        try:
            await self.registry.delete(
                info, key[1], key[2], DeleteOptions(propagation=propagation), system=True
            )
        except errors.StatusError as err:
            if err.code != 404:
                raise

    def _drop_refs(self, key: Key, uid: str) -> None:
        found = self._entry(key)
        if found is None:
            return
        info, entry = found

        def drop(obj: Obj) -> None:
            refs = [r for r in obj["metadata"].get("ownerReferences") or [] if r.get("uid") != uid]
            if refs:
                obj["metadata"]["ownerReferences"] = refs
            else:
                obj["metadata"].pop("ownerReferences", None)

        self.registry.force_update(info, entry, drop)

    async def process(self, item: tuple[str, ...]) -> bool | None:
        what = item[0]
        if what == "owner-gone":
            uid = item[1]
            for key in list(self.dependents.get(uid, ())):
                found = self._entry(key)
                if found is None:
                    continue
                refs = found[1].obj["metadata"].get("ownerReferences") or []
                if any(r.get("uid") != uid and self._owner_exists(r, key[1]) for r in refs):
                    self._drop_refs(key, uid)
                else:
                    await self._delete(key, "Background")
        elif what == "owner":
            uid = item[1]
            owner_key = self.by_uid.get(uid)
            if owner_key is None:
                return None
            found = self._entry(owner_key)
            if found is None:
                return None
            info, entry = found
            finalizers = entry.obj["metadata"].get("finalizers") or []
            if not entry.obj["metadata"].get("deletionTimestamp"):
                return None
            deps = [k for k in self.dependents.get(uid, ()) if self._entry(k) is not None]
            if "orphan" in finalizers:
                for k in deps:
                    self._drop_refs(k, uid)
                self._remove_finalizer(info, owner_key, "orphan")
            elif "foregroundDeletion" in finalizers:
                if deps:
                    for k in deps:
                        await self._delete(k, "Foreground")
                else:
                    self._remove_finalizer(info, owner_key, "foregroundDeletion")
        elif what == "dangling":
            key = (item[1], item[2], item[3])
            found = self._entry(key)
            if found is None:
                return None
            refs = found[1].obj["metadata"].get("ownerReferences") or []
            if refs and not any(self._owner_exists(r, key[1]) for r in refs):
                await self._delete(key, "Background")
        return None

    def _remove_finalizer(self, info: ResourceInfo, key: Key, name: str) -> None:
        entry = self.registry.store.get(*key)
        if entry is None:
            return

        def drop(obj: Obj) -> None:
            fins = [f for f in obj["metadata"].get("finalizers") or [] if f != name]
            if fins:
                obj["metadata"]["finalizers"] = fins
            else:
                obj["metadata"].pop("finalizers", None)

        self.registry.force_update(info, entry, drop)


def _is_default_service_account(info: ResourceInfo, obj: Obj) -> bool:
    return (info.group, info.kind) == ("", "ServiceAccount") and obj["metadata"].get(
        "name"
    ) == "default"


class NamespaceController(_Controller):
    def __init__(self, registry: Registry) -> None:
        super().__init__("namespace-controller")
        self.registry = registry
        registry.listeners.append(self.observe)

    def observe(self, info: ResourceInfo, old: Obj | None, new: Obj | None) -> None:
        if info.kind == "Namespace" and not info.group:
            if new is not None and old is None:
                self.work.add("created", new["metadata"]["name"])
            if new is not None and new["metadata"].get("deletionTimestamp"):
                self.work.add("terminating", new["metadata"]["name"])
            return
        if new is None and info.namespaced and old is not None:
            ns = old["metadata"].get("namespace", "")
            entry = self.registry.store.get("/namespaces", "", ns)
            if entry is not None and entry.obj["metadata"].get("deletionTimestamp"):
                self.work.add("terminating", ns)
            elif entry is not None and _is_default_service_account(info, old):
                # As the serviceaccounts controller does: every active namespace has one.
                self.work.add("created", ns)

    async def process(self, item: tuple[str, ...]) -> bool | None:
        what, ns = item
        if what == "created":
            sa = self.registry.lookup("", "v1", "serviceaccounts")
            assert sa is not None
            if self.registry.store.get(sa.key, ns, "default") is None:
                try:
                    await self.registry.create(
                        sa, ns, {"metadata": {"name": "default"}}, system=True
                    )
                except errors.StatusError as err:
                    if err.code not in (403, 404, 409):
                        raise
            return None
        entry = self.registry.store.get("/namespaces", "", ns)
        if entry is None or not entry.obj["metadata"].get("deletionTimestamp"):
            return None
        remaining = 0
        seen: set[str] = set()
        for info in list(self.registry.resources()):
            if not info.namespaced or info.key in seen:
                continue
            seen.add(info.key)
            for obj_entry in list(self.registry.store.list(info.key, ns)):
                remaining += 1
                if not obj_entry.obj["metadata"].get("deletionTimestamp"):
                    try:
                        await self.registry.delete(
                            info,
                            ns,
                            obj_entry.obj["metadata"]["name"],
                            DeleteOptions(),
                            system=True,
                        )
                    except errors.StatusError as err:
                        if err.code != 404:
                            raise
        if remaining:
            left = sum(1 for key in seen for _ in self.registry.store.list(key, ns))
            if left:
                return None
        ns_info = self.registry.lookup("", "v1", "namespaces")
        assert ns_info is not None
        entry = self.registry.store.get("/namespaces", "", ns)
        if entry is None:
            return None

        def finalize(obj: Obj) -> None:
            obj.setdefault("spec", {})["finalizers"] = [
                f for f in (obj.get("spec") or {}).get("finalizers") or [] if f != "kubernetes"
            ]
            if not obj["spec"]["finalizers"]:
                del obj["spec"]["finalizers"]

        self.registry.force_update(ns_info, entry, finalize)
        return None


def _event_last_seen(event: Obj) -> datetime | None:
    """When an event was last written: the latest of its timestamps (an event's TTL restarts with
    each update, as etcd's lease does)."""
    stamps = [
        event.get("metadata", {}).get("creationTimestamp"),
        event.get("lastTimestamp"),
        event.get("eventTime"),
        (event.get("series") or {}).get("lastObservedTime"),
    ]
    seen = None
    for stamp in stamps:
        if not isinstance(stamp, str):
            continue
        try:
            when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        except ValueError:
            continue
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seen = when if seen is None or when > seen else seen
    return seen


class EventReaper:
    """Deletes events not written for `ttl` seconds (kube-apiserver's --event-ttl, default 1h),
    so a long-running local cluster does not fill up with them."""

    def __init__(self, registry: Registry, ttl: float = 3600.0, interval: float = 60.0) -> None:
        self.registry = registry
        self.ttl = ttl
        self.interval = interval
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._loop(), name="event-reaper")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def reap(self, now: datetime | None = None) -> int:
        info = self.registry.lookup("", "v1", "events")
        assert info is not None
        now = now or datetime.now(UTC)
        expired = [
            e
            for e in self.registry.store.list(info.key)
            if (seen := _event_last_seen(e.obj)) is not None
            and (now - seen).total_seconds() > self.ttl
        ]
        for entry in expired:
            self.registry.force_remove(info, entry)
        return len(expired)

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                self.reap()
            except Exception:
                log.exception("event reaper failed")
