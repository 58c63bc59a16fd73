"""The generic REST semantics of every resource: create, get, list, update, patch, delete.

This is the Python counterpart of apiserver's `registry/generic/registry.Store`: optimistic
concurrency on resourceVersion, generation on spec change, the main resource versus the status
subresource, finalizers and deletionTimestamp, delete propagation, dry run and admission. HTTP parsing
lives in `handlers.py`; storage in `store.py`; list pages and continue tokens in `listing.py`.
Listeners (the CRD, namespace and garbage-collection controllers) are told of every committed
change, synchronously, and must not block.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Iterable
from typing import Any

from ...apis import field
from ...apis.field import FieldError
from ...apis.meta.labelselector import EVERYTHING
from . import (
    apps,
    deletion,
    errors,
    listing,
    managedfields,
    meta,
    patching,
    podadmission,
    quantities,
    statefulsets,
    storage,
    updates,
)
from .apply import PATCH_RETRIES, apply_patch_meta, apply_request, patch_meta_from_schema
from .builtins import ClusterIPAllocator, create_hooks
from .coredefaults import set_object_defaults
from .decoding import cannot_handle, drop_unknown_fields, guarded
from .deletion import DeleteOptions
from .faults import Faults
from .registryops import Admission, ListResult, Obj
from .resources import ResourceInfo, builtin_resources
from .schema import base64_error, shape_error
from .selectors import FieldSelector, LabelSelector
from .store import Entry, Store, copy_of

Listener = Callable[[ResourceInfo, Obj | None, Obj | None], None]


class Registry:
    def __init__(self, store: Store, faults: Faults) -> None:
        self.store = store
        self.faults = faults
        self.admission: Admission | None = None
        self._by_gvr: dict[tuple[str, str, str], ResourceInfo] = {}
        self._by_kind: dict[tuple[str, str], ResourceInfo] = {}
        self.listeners: list[Listener] = []
        self.cluster_ips = ClusterIPAllocator()
        self.create_hooks = create_hooks(self.cluster_ips)
        self._custom_merge_keys: dict[int, tuple[Any, managedfields.TreeCache]] = {}
        # Checks of a kind's whole object on update (the CRD controller registers its own).
        self.update_validators: dict[tuple[str, str], Callable[[Obj], list[FieldError]]] = {
            ("apps", "Deployment"): apps.validate_deployment,
            ("apps", "ReplicaSet"): apps.validate_replicaset,
        }
        self.create_hooks[("apps", "Deployment")] = apps.create_deployment
        self.create_hooks[("apps", "ReplicaSet")] = apps.create_replicaset
        self.update_validators |= {
            ("apps", "StatefulSet"): statefulsets.validate_statefulset,
            ("apps", "ControllerRevision"): statefulsets.validate_controller_revision,
            ("", "PersistentVolumeClaim"): storage.validate_claim,
            ("", "PersistentVolume"): storage.validate_volume,
            ("storage.k8s.io", "StorageClass"): storage.validate_storage_class,
        }
        self.create_hooks |= {
            ("apps", "StatefulSet"): statefulsets.create_statefulset,
            ("apps", "ControllerRevision"): statefulsets.validate_controller_revision,
            ("", "PersistentVolumeClaim"): storage.create_claim,
            ("", "PersistentVolume"): storage.create_volume,
            ("storage.k8s.io", "StorageClass"): storage.validate_storage_class,
        }
        # Checks of what an update may change, given the stored object.
        self.update_transitions: dict[tuple[str, str], updates.UpdateTransition] = {
            ("apps", "StatefulSet"): statefulsets.validate_statefulset_update,
            ("apps", "ControllerRevision"): statefulsets.validate_controller_revision_update,
            ("", "PersistentVolumeClaim"): storage.validate_claim_update,
            ("storage.k8s.io", "StorageClass"): storage.validate_storage_class_update,
        }
        # Pods on a node are deleted gracefully, waiting for their kubelet to confirm (grace 0).
        self.graceful_pod_deletion = False
        # Set by crd.py: default, prune and validate a custom resource (and the stored one).
        self.custom_default: Callable[[ResourceInfo, Obj], None] | None = None
        self.custom_prepare: (
            Callable[[ResourceInfo, Obj, bool, Obj | None], list[FieldError]] | None
        ) = None
        for info in builtin_resources():
            self.register(info)

    # --- resource table ---

    def register(self, info: ResourceInfo) -> None:
        self._by_gvr[(info.group, info.version, info.resource)] = info
        self._by_kind.setdefault((info.group, info.kind), info)

    def unregister(self, group: str, resource: str) -> None:
        for k in [
            k for k, i in self._by_gvr.items() if i.group == group and i.resource == resource
        ]:
            info = self._by_gvr.pop(k)
            if self._by_kind.get((info.group, info.kind)) is info:
                del self._by_kind[(info.group, info.kind)]

    def lookup(self, group: str, version: str, resource: str) -> ResourceInfo | None:
        return self._by_gvr.get((group, version, resource))

    def by_kind(self, group: str, kind: str) -> ResourceInfo | None:
        return self._by_kind.get((group, kind))

    def resources(self) -> Iterable[ResourceInfo]:
        return self._by_gvr.values()

    def by_key(self, key: str) -> ResourceInfo | None:
        for info in self._by_gvr.values():
            if info.key == key:
                return info
        return None

    # --- reads ---

    def get(self, info: ResourceInfo, ns: str, name: str) -> Entry:
        entry = self.store.get(info.key, ns, name)
        if entry is None:
            raise errors.not_found(info.group, info.resource, name)
        return entry

    def list_entries(
        self,
        info: ResourceInfo,
        ns: str,
        labels: LabelSelector = EVERYTHING,
        fields: FieldSelector = (),
        limit: int = 0,
        continue_token: str = "",
        exact_rv: int | None = None,
    ) -> ListResult:
        """A (page of a) list (listing.py)."""
        return listing.list_entries(
            self.store, info, ns, labels, fields, limit, continue_token, exact_rv
        )

    # --- writes ---

    def commit(self, info: ResourceInfo, prev: Entry | None, obj: Obj) -> Entry:
        entry = self.store.put(info.key, obj, prev)
        for listener in self.listeners:
            listener(info, None if prev is None else prev.obj, entry.obj)
        return entry

    def remove(self, info: ResourceInfo, entry: Entry) -> Entry:
        gone = self.store.delete(info.key, entry)
        for listener in self.listeners:
            listener(info, entry.obj, None)
        return gone

    def check_namespace(self, info: ResourceInfo, ns: str, name: str) -> None:
        """NamespaceLifecycle admission of a create: the namespace exists and is not terminating."""
        if not info.namespaced:
            return
        entry = self.store.get("/namespaces", "", ns)
        if entry is None:
            raise errors.not_found("", "namespaces", ns)
        if entry.obj.get("metadata", {}).get("deletionTimestamp"):
            err = errors.forbidden(
                info.group,
                info.resource,
                name,
                f"unable to create new content in namespace {ns} because it is being terminated",
            )
            assert err.details is not None
            err.details["causes"] = [
                {
                    "reason": "NamespaceTerminating",
                    "message": f"namespace {ns} is being terminated",
                    "field": "metadata.namespace",
                }
            ]
            raise err

    def _validate(
        self, info: ResourceInfo, obj: Obj, strict: bool = False, stored: Obj | None = None
    ) -> None:
        md = obj.get("metadata")
        # A stored custom resource's labels and annotations passed these checks: no controller
        # of the server writes them (a binding's annotations go to pods, unchecked).
        checked = stored["metadata"] if stored is not None and info.custom is not None else None
        errs = (
            meta.validate_object_meta(info.kind, md, info.namespaced, checked)
            if isinstance(md, dict)
            else [field.required("metadata", "")]
        )
        if info.custom is not None and self.custom_prepare is not None:
            errs.extend(self.custom_prepare(info, obj, strict, stored))
        elif info.top_fields is not None:
            drop_unknown_fields(info, obj, strict)
        if errs:
            name = md.get("name", "") if isinstance(md, dict) else ""
            raise errors.invalid(info.group, info.kind, name, errs)

    def coerce(self, info: ResourceInfo, body: Any, ns: str) -> Obj:
        if not isinstance(body, dict):
            raise errors.bad_request("the body of the request is not a JSON object")
        obj = body
        md = obj.get("metadata")
        if md is None:
            md = obj["metadata"] = {}
        if not isinstance(md, dict):
            raise errors.bad_request("metadata must be an object")
        shape = shape_error(obj, info.top_fields is not None)
        if not shape and info.top_fields is not None:
            shape = base64_error(info.kind, obj) or quantities.canonicalize(info.kind, obj)
        if shape:
            raise cannot_handle(info, shape)
        kind = obj.get("kind")
        if kind and kind != info.kind:
            raise errors.bad_request(
                f"the API version in the data ({obj.get('apiVersion', '')}) does not match the expected API version ({info.api_version})"
                if obj.get("apiVersion") != info.api_version
                else f"kind {kind} does not match expected {info.kind}"
            )
        obj["apiVersion"] = info.api_version
        obj["kind"] = info.kind
        if info.namespaced:
            body_ns = md.get("namespace")
            if body_ns and body_ns != ns:
                raise errors.bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            md["namespace"] = ns
        else:
            # Cluster-scoped objects have no namespace: one sent is dropped, as BeforeCreate does.
            md.pop("namespace", None)
        if info.custom is None:
            set_object_defaults(info.group, info.kind, obj)
        if info.to_storage is not None:
            obj = info.to_storage(obj)
        return obj

    async def _mutate(
        self,
        op: str,
        info: ResourceInfo,
        ns: str,
        sub: str,
        obj: Obj,
        old: Obj | None,
        dry_run: bool,
    ) -> Obj:
        """Run mutating admission; a custom resource a webhook is called for is defaulted and
        pruned first, as on decode (else validation's same pass does it)."""
        assert self.admission is not None
        if not self.admission.mutating_configured():
            return obj
        prepare = None
        if info.custom is not None and self.custom_default is not None:
            prepare = functools.partial(self.custom_default, info)
        mutated = await self.admission.mutate(op, info, sub, obj, old, dry_run, prepare)
        return obj if mutated is None else self.coerce(info, mutated, ns)

    async def create(
        self,
        info: ResourceInfo,
        ns: str,
        body: Any,
        dry_run: bool = False,
        sub: str = "",
        system: bool = False,
        strict: bool = False,
        manager: str | None = None,
    ) -> Entry:
        """Create; `manager` (None for the server's own writes and applies) records its fields
        in managedFields as an Update."""
        obj = self.coerce(info, body, ns)
        md = obj["metadata"]
        if manager is not None:
            empty = managedfields.empty_object(
                info.custom is None, "spec" in (info.top_fields or ()), info.has_status
            )
            ignored = ("status",) if info.has_status else ()
            self._record(info, manager, sub, empty, obj, ignored)
        if not system:
            await self.faults.before_write(
                info.group, info.resource, md.get("name") or md.get("generateName", "")
            )
        rv = md.get("resourceVersion") or ""
        if rv.isascii() and rv.isdigit() and int(rv) != 0:
            # etcd3's store refuses only a version that parses and is not 0 (a 500, as there)
            raise errors.internal("resourceVersion should not be set on objects to be created")
        self.check_namespace(info, ns, md.get("name", ""))
        if (info.group, info.kind, sub) == ("", "Pod", "") and not system:
            await podadmission.admit_service_account(self.store, ns, obj)
        if self.admission is not None:
            obj = await self._mutate("CREATE", info, ns, sub, obj, None, dry_run)
            md = obj["metadata"]
        if not md.get("name") and md.get("generateName"):
            md["name"] = meta.generate_name(md["generateName"])
        meta.prepare_create(md, info.generation)
        if info.custom is not None and info.has_status:
            obj.pop("status", None)
        if (info.group, info.kind) == ("", "PersistentVolumeClaim"):
            classes = self.store.list("storage.k8s.io/storageclasses")
            storage.default_storage_class(obj, (e.obj for e in classes))
        hook = self.create_hooks.get((info.group, info.kind))
        errs = guarded(info, hook, obj) if hook is not None else []
        if errs:
            raise errors.invalid(info.group, info.kind, md.get("name", ""), errs)
        self._validate(info, obj, strict)
        if self.admission is not None:
            await self.admission.validate("CREATE", info, sub, obj, None, dry_run)
        name = md["name"]
        if self.store.get(info.key, md.get("namespace", ""), name) is not None:
            raise errors.already_exists(info.group, info.resource, name)
        if dry_run:
            return Entry(obj, b"", self.store.rv)
        return self.commit(info, None, obj)

    async def update(
        self,
        info: ResourceInfo,
        ns: str,
        name: str,
        body: Any,
        sub: str = "",
        dry_run: bool = False,
        strict: bool = False,
        manager: str | None = None,
    ) -> Entry:
        await self.faults.before_write(info.group, info.resource, name)
        obj = self.coerce(info, body, ns)
        body_name = obj["metadata"].get("name")
        if body_name != name:
            raise errors.bad_request(
                f"the name of the object ({body_name}) does not match the name on the URL ({name})"
                if body_name
                else "name is required"
            )
        if obj["metadata"].get("resourceVersion"):
            return await self.update_checked(
                info, ns, name, obj, sub, dry_run, strict=strict, manager=manager
            )
        # An unconditional update is retried against the latest object, like a patch.
        for attempt in range(PATCH_RETRIES):
            try:
                return await self.update_checked(
                    info, ns, name, copy.deepcopy(obj), sub, dry_run, strict=strict, manager=manager
                )
            except errors.StatusError as err:
                if err.reason != "Conflict" or attempt == PATCH_RETRIES - 1:
                    raise
        raise AssertionError("unreachable")

    async def update_checked(
        self,
        info: ResourceInfo,
        ns: str,
        name: str,
        obj: Obj,
        sub: str,
        dry_run: bool,
        op: str = "UPDATE",
        strict: bool = False,
        manager: str | None = None,
    ) -> Entry:
        """Update `obj` over the stored object: preconditions, managedFields, mutating admission,
        the kind's update rules, validation, generation, validating admission, then the write."""
        current = self.get(info, ns, name)
        old = current.obj
        updates.check_preconditions(info, name, obj["metadata"], old["metadata"])
        merged = manager is not None  # merging the subresource again changes nothing
        if manager is not None:
            obj = updates.merge_subresource(info, sub, obj, current)
            served = info.from_storage(copy_of(current)) if info.from_storage else old
            self._record(info, manager, sub, served, obj, (), old["metadata"])
        if self.admission is not None and self.admission.mutating_configured():
            obj = await self._mutate(op, info, ns, sub, obj, old, dry_run)
            merged = False
        if not merged:
            obj = updates.merge_subresource(info, sub, obj, current)
        md = obj["metadata"]
        meta.keep_immutable(md, old["metadata"])
        updates.check_update_rules(
            info, name, sub, obj, old, self.update_validators, self.update_transitions
        )
        self._validate(info, obj, strict, old)
        # After defaulting and pruning, so an update that only omits defaulted fields is no change.
        if info.generation and updates.spec_changed(info, obj, old):
            md["generation"] = old["metadata"].get("generation", 0) + 1
        if self.admission is not None:
            await self.admission.validate(op, info, sub, obj, old, dry_run)
        md["resourceVersion"] = old["metadata"]["resourceVersion"]
        return self._store_update(info, ns, name, current, obj, dry_run)

    def _store_update(
        self, info: ResourceInfo, ns: str, name: str, current: Entry, obj: Obj, dry_run: bool
    ) -> Entry:
        """Write an admitted update (none when nothing changed); an object whose last finalizer
        went while it was being deleted is removed."""
        if obj == current.obj:
            return current
        if dry_run:
            return Entry(obj, b"", self.store.rv)
        if self.store.get(info.key, ns, name) is not current:
            raise errors.conflict(info.group, info.resource, name, errors.OBJECT_MODIFIED)
        md = obj["metadata"]
        if md.get("deletionTimestamp") and not md.get("finalizers"):
            self.commit(info, current, obj)
            entry = self.store.get(info.key, ns, name)
            assert entry is not None
            return self.remove(info, entry)
        return self.commit(info, current, obj)

    def _record(
        self,
        info: ResourceInfo,
        manager: str,
        sub: str,
        before: Obj,
        obj: Obj,
        ignored: tuple[str, ...],
        old_md: Obj | None = None,
    ) -> None:
        """Record `manager`'s Update of `before` into `obj` in obj's managedFields: those the
        request sent, unless it sent none or writes a subresource, then the stored ones (as
        FieldManager.Update keeps them from clients that do not know managedFields)."""
        md = obj["metadata"]
        base = md.get("managedFields")
        if not base or sub:
            base = (old_md or {}).get("managedFields") or []
        if not isinstance(base, list):
            return  # malformed: refused by validation, as the real decoder refuses it
        for item in base:
            if not isinstance(item, dict):
                return
        trees = self._merge_keys(info)
        meta_keys = trees.meta
        now = meta.now_rfc3339()
        api = info.api_version
        managed: list[Obj] | None
        if not base and old_md is None:
            fields = managedfields.created_fields(before, obj, meta_keys, ignored, trees)
            managed = [managedfields.entry(manager, api, sub, now, fields)]
        else:
            # The common update first (only its own leaves changed), else the general path.
            managed = managedfields.update_in_place(
                base, before, obj, meta_keys, ignored, manager, api, sub, now
            )
            if managed is None:
                change = managedfields.compare(before, obj, meta_keys, ignored)
                managed = managedfields.record_update(base, change, manager, api, sub, now)
        if managed:
            md["managedFields"] = managed
        else:
            md.pop("managedFields", None)

    def _merge_keys(self, info: ResourceInfo) -> managedfields.TreeCache:
        """The list keys field ownership is tracked by (structured-merge-diff's list-map keys, as
        server-side apply's): a built-in kind's, or a custom resource's read from its schema, once;
        with the memo of the field trees creates record under them."""
        source: Any = info.patch_meta if info.patch_meta is not None else info.custom
        cached = self._custom_merge_keys.get(id(source))
        if cached is None or cached[0] is not source:
            if info.patch_meta is not None:
                keys = apply_patch_meta(info.patch_meta)
            else:
                keys = patch_meta_from_schema(source.schema if source else None)
            cached = (source, managedfields.TreeCache(keys))
            self._custom_merge_keys[id(source)] = cached
        return cached[1]

    async def patch(
        self,
        info: ResourceInfo,
        ns: str,
        name: str,
        patch_type: str,
        patch: Any,
        sub: str = "",
        dry_run: bool = False,
        strict: bool = False,
        manager: str | None = None,
    ) -> Entry:
        await self.faults.before_write(info.group, info.resource, name)
        # Without a resourceVersion precondition a patch is re-applied to the latest object when a
        # concurrent write wins the race, as the apiserver's update loop does.
        precondition = patching.patch_sets_resource_version(patch_type, patch)
        for attempt in range(PATCH_RETRIES):
            current = self.get(info, ns, name)
            obj = self._patched(info, ns, name, current, patch_type, patch)
            try:
                return await self.update_checked(
                    info, ns, name, obj, sub, dry_run, "UPDATE", strict, manager
                )
            except errors.StatusError as err:
                if err.reason != "Conflict" or precondition or attempt == PATCH_RETRIES - 1:
                    raise
        raise AssertionError("unreachable")

    def _patched(
        self, info: ResourceInfo, ns: str, name: str, current: Entry, patch_type: str, patch: Any
    ) -> Obj:
        patched = patching.patched_object(info, current.obj, patch_type, patch, copy_of(current))
        obj = self.coerce(info, patched, ns)
        if obj["metadata"].get("name") != name:
            raise errors.bad_request(
                f"the name of the object ({obj['metadata'].get('name')}) does not match the name on the URL ({name})"
            )
        return obj

    async def apply(
        self,
        info: ResourceInfo,
        ns: str,
        name: str,
        config: Obj,
        manager: str,
        sub: str = "",
        dry_run: bool = False,
        strict: bool = False,
        force: bool = False,
    ) -> tuple[Entry, bool]:
        """Server-side apply (apply.py): create when absent, else merge with field ownership.
        Returns (object, whether it was created)."""
        return await apply_request(
            self, info, ns, name, config, manager, sub, dry_run, strict, force
        )

    # --- deletion (deletion.py) ---

    async def delete(
        self, info: ResourceInfo, ns: str, name: str, opts: DeleteOptions, system: bool = False
    ) -> tuple[Entry, bool]:
        """Delete or start deleting; returns (object, whether it is gone now).

        `system` deletions (the garbage collector's, the namespace controller's) skip fault injection.
        """
        return await deletion.delete(self, info, ns, name, opts, system)

    async def delete_collection(
        self,
        info: ResourceInfo,
        ns: str,
        labels: LabelSelector,
        fields: FieldSelector,
        opts: DeleteOptions,
    ) -> list[Entry]:
        return await deletion.delete_collection(self, info, ns, labels, fields, opts)

    # --- helpers for controllers (no admission, no fault injection) ---

    def force_update(
        self, info: ResourceInfo, entry: Entry, change: Callable[[Obj], None]
    ) -> Entry:
        """Apply `change` to a copy of the stored object and commit it (controllers' writes)."""
        obj = copy_of(entry)
        change(obj)
        md = obj["metadata"]
        if (
            md.get("deletionTimestamp")
            and not md.get("finalizers")
            and not (info.kind == "Namespace" and (obj.get("spec") or {}).get("finalizers"))
        ):
            self.commit(info, entry, obj)
            latest = self.store.get(info.key, md.get("namespace", ""), md["name"])
            assert latest is not None
            return self.remove(info, latest)
        if obj == entry.obj:
            return entry
        return self.commit(info, entry, obj)

    def force_remove(self, info: ResourceInfo, entry: Entry) -> Entry:
        return self.remove(info, entry)
