"""CustomResourceDefinitions: validating them, serving their resources, establishing them.

When a CRD is created or updated, `CRDController.observe` (a registry listener) registers one
`ResourceInfo` per served version at once, so its resources are served and discoverable as soon as
the create returns; a worker then marks it NamesAccepted and Established in its status. Deleting a
CRD waits on the `customresourcecleanup.apiextensions.k8s.io` finalizer: its custom resources are
deleted first, then its routes are removed. Custom resources are defaulted, pruned and validated
against the version's structural schema (`schema.py`); scale subresource requests are served here.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from dataclasses import dataclass, field
from typing import Any

import msgspec
from aiohttp import web

from ...apis import field as fielderr
from ...apis.field import FieldError
from ...apis.structural import customresource
from ...apis.structural.defaulting import prune_object_meta
from ...informers.labels import label_selector_as_selector
from . import crdschema, errors, limits
from .deletion import DeleteOptions
from .handlers import ResourceHandler
from .meta import now_rfc3339
from .registry import Registry
from .requests import is_dry_run, json_response, read_body
from .resources import ResourceInfo
from .selectors import COMMON_FIELDS
from .workqueue import EmbeddedQueue

log = logging.getLogger(__name__)
Obj = dict[str, Any]
CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
_encode = msgspec.json.Encoder().encode


@dataclass
class CustomResourceVersion:
    """What serving one version of a CRD needs beyond ResourceInfo."""

    schema: dict[str, Any] | None
    printer_columns: list[dict[str, Any]] = field(default_factory=list)
    scale: dict[str, Any] | None = None
    storage_version: str = ""
    status_subresource: bool = False

    @functools.cached_property
    def structural(self) -> customresource.Version:
        """The schema passes' view of this version (the one `agones.apis.scheme.admit` runs)."""
        return customresource.Version(self.schema, self.scale, self.status_subresource)


def validate_crd(obj: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return [fielderr.required("spec", "")]
    group = spec.get("group", "")
    names = spec.get("names") or {}
    plural = names.get("plural", "")
    if not group:
        errs.append(fielderr.required("spec.group", ""))
    elif "." not in group:
        errs.append(
            fielderr.invalid("spec.group", group, "should be a domain with at least one dot")
        )
    if not plural:
        errs.append(fielderr.required("spec.names.plural", ""))
    if not names.get("kind"):
        errs.append(fielderr.required("spec.names.kind", ""))
    name = obj.get("metadata", {}).get("name", "")
    if plural and group and name != f"{plural}.{group}":
        errs.append(
            fielderr.invalid("metadata.name", name, 'must be spec.names.plural+"."+spec.group')
        )
    if spec.get("scope") not in ("Namespaced", "Cluster"):
        errs.append(
            fielderr.not_supported("spec.scope", spec.get("scope", ""), ["Cluster", "Namespaced"])
        )
    versions = spec.get("versions") or []
    if not versions or sum(1 for v in versions if isinstance(v, dict) and v.get("storage")) != 1:
        errs.append(
            fielderr.invalid(
                "spec.versions", versions, "must have exactly one version marked as storage version"
            )
        )
    lifted = _lifted_fields(versions)
    for i, v in enumerate(versions):
        if not isinstance(v, dict) or not v.get("name"):
            errs.append(fielderr.required(f"spec.versions[{i}].name", ""))
            continue
        at = f"spec.versions[{i}]"
        if "additionalPrinterColumns" not in lifted:
            errs.extend(_column_errors(v, f"{at}.additionalPrinterColumns"))
        if "subresources" not in lifted:
            errs.extend(_scale_errors(v, f"{at}.subresources.scale"))
        if "schema" not in lifted:
            errs.extend(_schema_errors(v, f"{at}.schema.openAPIV3Schema", f"{at}.schema"))
    if lifted:
        first = versions[0]
        if "additionalPrinterColumns" in lifted:
            errs.extend(_column_errors(first, "spec.additionalPrinterColumns"))
        if "subresources" in lifted:
            errs.extend(_scale_errors(first, "spec.subresources.scale"))
        if "schema" in lifted:
            errs.extend(_schema_errors(first, "spec.validation.openAPIV3Schema", ""))
    return errs


def _lifted_fields(versions: list[Any]) -> set[str]:
    """The per-version fields conversion to the internal CRD lifts to the spec because every
    version has the same (schema → spec.validation, subresources, additionalPrinterColumns): their
    errors are then reported at the spec, once."""
    if not versions or not all(isinstance(v, dict) and v.get("name") for v in versions):
        return set()
    out = set()
    for key in ("schema", "subresources", "additionalPrinterColumns"):
        first = versions[0].get(key)
        if first is not None and all(v.get(key) == first for v in versions):
            out.add(key)
    return out


def _schema_errors(version: Obj, path: str, required_at: str) -> list[FieldError]:
    """The root type and structural checks of a version's schema, reported under `path`;
    `required_at` names the version (empty when the schema was lifted, so present)."""
    raw = version.get("schema")
    s = raw.get("openAPIV3Schema") if isinstance(raw, dict) else None
    if s is None:
        return [fielderr.required(f"{required_at}.openAPIV3Schema", "schemas are required")]
    if isinstance(s, dict) and s.get("type") != "object":
        return [fielderr.invalid(f"{path}.type", s.get("type", ""), "must be object at the root")]
    return crdschema.structural_errors(s, path)


_COLUMN_TYPES = ["boolean", "date", "integer", "number", "string"]


def _simple_json_path_errors(value: Any, path: str) -> list[FieldError]:
    if not value:
        return [fielderr.invalid(path, value or "", "must not be empty")]
    if not isinstance(value, str) or not value.startswith("."):
        return [fielderr.invalid(path, value, "must be a simple json path starting with .")]
    return []


def _column_errors(version: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for j, col in enumerate(version.get("additionalPrinterColumns") or []):
        col_path = f"{path}[{j}]"
        if not col.get("name"):
            errs.append(fielderr.required(f"{col_path}.name", ""))
        kind = col.get("type")
        if not kind:
            errs.append(
                fielderr.required(f"{col_path}.type", f"must be one of {','.join(_COLUMN_TYPES)}")
            )
        elif kind not in _COLUMN_TYPES:
            errs.append(fielderr.not_supported(f"{col_path}.type", kind, _COLUMN_TYPES))
        if not col.get("jsonPath"):
            errs.append(fielderr.required(f"{col_path}.jsonPath", ""))
        else:
            errs.extend(_simple_json_path_errors(col["jsonPath"], f"{col_path}.jsonPath"))
    return errs


def _scale_errors(version: Obj, path: str) -> list[FieldError]:
    """The scale subresource's replica paths lie under .spec and .status, its selector under
    either."""
    scale = (version.get("subresources") or {}).get("scale")
    if not isinstance(scale, dict):
        return []
    errs: list[FieldError] = []
    for key, prefixes, detail in (
        ("specReplicasPath", (".spec.",), "should be a json path under .spec"),
        ("statusReplicasPath", (".status.",), "should be a json path under .status"),
        (
            "labelSelectorPath",
            (".spec.", ".status."),
            "should be a json path under either .spec or .status",
        ),
    ):
        value = scale.get(key)
        key_path = f"{path}.{key}"
        if not value:
            if key != "labelSelectorPath":
                errs.append(fielderr.required(key_path, ""))
            continue
        bad_path = _simple_json_path_errors(value, key_path)
        if bad_path:
            errs.extend(bad_path)
        elif not value.startswith(prefixes):
            errs.append(fielderr.invalid(key_path, value, detail))
    return errs


def _go_json_type(value: Any) -> str:
    """The JSON type Go's decoder names in "cannot unmarshal X into ..."."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    names: dict[type, str] = {dict: "object", list: "array", str: "string"}
    return names.get(type(value), "value")


def _scale_shape_error(body: Any) -> str:
    """Why a body cannot decode as an autoscaling/v1 Scale (empty when it can)."""
    if body is None:
        return ""
    if not isinstance(body, dict):
        return f"json: cannot unmarshal {_go_json_type(body)} into Go value of type v1.Scale"
    for key in ("metadata", "spec", "status"):
        if body.get(key) is not None and not isinstance(body[key], dict):
            return (
                f"json: cannot unmarshal {_go_json_type(body[key])} into Go struct field "
                f"Scale.{key} of type v1.Scale{key.capitalize()}"
            )
    rv = (body.get("metadata") or {}).get("resourceVersion")
    if rv is not None and not isinstance(rv, str):
        return (
            f"json: cannot unmarshal {_go_json_type(rv)} into Go struct field "
            "ObjectMeta.metadata.resourceVersion of type string"
        )
    return ""


def infos_for(crd: Obj) -> list[ResourceInfo]:
    spec = crd["spec"]
    names = spec["names"]
    storage = next(v["name"] for v in spec["versions"] if v.get("storage"))
    out = []
    for v in spec["versions"]:
        if not v.get("served", True):
            continue
        sub = v.get("subresources") or {}
        subresources = frozenset(k for k in ("status", "scale") if k in sub)
        custom = CustomResourceVersion(
            schema=(v.get("schema") or {}).get("openAPIV3Schema"),
            printer_columns=list(v.get("additionalPrinterColumns") or []),
            scale=sub.get("scale"),
            storage_version=storage,
            status_subresource="status" in sub,
        )
        out.append(
            ResourceInfo(
                group=spec["group"],
                version=v["name"],
                resource=names["plural"],
                kind=names["kind"],
                namespaced=spec.get("scope") == "Namespaced",
                short_names=tuple(names.get("shortNames") or ()),
                categories=tuple(names.get("categories") or ()),
                subresources=subresources,
                fields=dict(COMMON_FIELDS),
                patch_meta=None,
                generation=True,
                return_deleted=True,
                custom=custom,
            )
        )
    return out


class CRDController:
    def __init__(self, registry: Registry, handler: ResourceHandler) -> None:
        self.registry = registry
        self.handler = handler
        self.preferred: dict[str, str] = {}
        self._served: dict[str, tuple[str, str]] = {}  # CRD name -> (group, plural)
        self._terminating: set[str] = set()
        self._admitted = customresource.Admitted()
        self.work = EmbeddedQueue("crd-controller", self._sync)
        registry.listeners.append(self.observe)
        registry.custom_prepare = self.prepare_custom
        registry.custom_default = self.default_custom
        registry.create_hooks[("apiextensions.k8s.io", "CustomResourceDefinition")] = (
            self._on_create
        )
        registry.update_validators[("apiextensions.k8s.io", "CustomResourceDefinition")] = (
            validate_crd
        )
        handler.scale = self.scale

    def _on_create(self, obj: Obj) -> list[FieldError]:
        errs = validate_crd(obj)
        if not errs:
            fins = obj["metadata"].setdefault("finalizers", [])
            if CLEANUP_FINALIZER not in fins:
                fins.append(CLEANUP_FINALIZER)
            obj["status"] = {
                "conditions": [],
                "acceptedNames": {"plural": "", "kind": ""},
                "storedVersions": [],
            }
        return errs

    # --- serving ---

    def observe(self, info: ResourceInfo, old: Obj | None, new: Obj | None) -> None:
        if info.custom is not None and new is None:
            # A custom resource went away: its CRD may be waiting for that to finish deleting.
            for crd_name, (group, plural) in self._served.items():
                if f"{group}/{plural}" == info.key and crd_name in self._terminating:
                    self.work.add(crd_name)
            return
        if info.kind != "CustomResourceDefinition" or info.group != "apiextensions.k8s.io":
            return
        crd_name = (new or old or {}).get("metadata", {}).get("name", "")
        if new is not None and new["metadata"].get("deletionTimestamp"):
            self._terminating.add(crd_name)
        elif new is None:
            self._terminating.discard(crd_name)
        name = (new or old or {}).get("metadata", {}).get("name", "")
        if new is None:
            served = self._served.pop(name, None)
            if served is not None:
                self.registry.unregister(*served)
                self.preferred.pop(served[0], None)
            return
        if validate_crd(new):
            return
        served = self._served.get(name)
        if served is not None:
            self.registry.unregister(*served)
        infos = infos_for(new)
        for i in infos:
            self.registry.register(i)
        self._served[name] = (new["spec"]["group"], new["spec"]["names"]["plural"])
        if infos:
            versions = [v["name"] for v in new["spec"]["versions"] if v.get("served", True)]
            from .discovery import _version_key

            self.preferred[new["spec"]["group"]] = sorted(versions, key=_version_key, reverse=True)[
                0
            ]
        self.work.add(name)

    def start(self) -> None:
        self.work.start()

    async def stop(self) -> None:
        await self.work.stop()

    async def _sync(self, item: tuple[str, ...]) -> bool | None:
        (name,) = item
        crd_info = self.registry.lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        assert crd_info is not None
        entry = self.registry.store.get(crd_info.key, "", name)
        if entry is None:
            return None
        crd = entry.obj
        if crd["metadata"].get("deletionTimestamp"):
            await self._cleanup(crd_info, entry)
            return None
        spec = crd["spec"]
        storage = next(v["name"] for v in spec["versions"] if v.get("storage"))

        def establish(obj: Obj) -> None:
            status = obj.setdefault("status", {})
            status["acceptedNames"] = dict(spec["names"])
            status["acceptedNames"].setdefault("singular", spec["names"]["kind"].lower())
            status["acceptedNames"].setdefault("listKind", spec["names"]["kind"] + "List")
            stored = status.setdefault("storedVersions", [])
            if storage not in stored:
                stored.append(storage)
            conds = {c["type"]: c for c in status.get("conditions") or []}
            now = now_rfc3339()
            for typ, reason, msg in (
                ("NamesAccepted", "NoConflicts", "no conflicts found"),
                ("Established", "InitialNamesAccepted", "the initial names have been accepted"),
            ):
                if conds.get(typ, {}).get("status") != "True":
                    conds[typ] = {
                        "type": typ,
                        "status": "True",
                        "lastTransitionTime": now,
                        "reason": reason,
                        "message": msg,
                    }
            status["conditions"] = list(conds.values())

        self.registry.force_update(crd_info, entry, establish)
        return None

    async def _cleanup(self, crd_info: ResourceInfo, entry: Any) -> None:
        spec = entry.obj["spec"]
        key = f"{spec['group']}/{spec['names']['plural']}"
        info = self.registry.by_key(key)
        if info is not None:
            remaining = list(self.registry.store.list(key))
            for obj_entry in remaining:
                md = obj_entry.obj["metadata"]
                if not md.get("deletionTimestamp"):
                    try:
                        await self.registry.delete(
                            info, md.get("namespace", ""), md["name"], DeleteOptions(), system=True
                        )
                    except errors.StatusError as err:
                        if err.code != 404:
                            raise
            if any(True for _ in self.registry.store.list(key)):
                # Custom resources with finalizers: wait until they are gone (observe re-queues).
                return
        latest = self.registry.store.get(crd_info.key, "", entry.obj["metadata"]["name"])
        if latest is None:
            return

        def drop(obj: Obj) -> None:
            fins = [f for f in obj["metadata"].get("finalizers") or [] if f != CLEANUP_FINALIZER]
            if fins:
                obj["metadata"]["finalizers"] = fins
            else:
                obj["metadata"].pop("finalizers", None)

        self.registry.force_update(crd_info, latest, drop)

    # --- custom resources ---

    def default_custom(self, info: ResourceInfo, obj: Obj) -> None:
        """Schema defaults and pruning alone (what decoding does before mutating admission)."""
        customresource.decode(obj, info.custom.structural)

    def prepare_custom(
        self, info: ResourceInfo, obj: Obj, strict: bool, stored: Obj | None = None
    ) -> list[FieldError]:
        """Default, prune and validate a custom resource against its version's schema; `stored`
        is the object an update replaces.

        With `strict` (fieldValidation=Strict), unknown fields are an error instead of being pruned.
        """
        custom: CustomResourceVersion = info.custom
        version = custom.structural
        old = self._admitted.take(stored, version)
        dropped = prune_object_meta(obj.setdefault("metadata", {}))
        dropped += customresource.decode(obj, version, old)
        if strict and dropped:
            unknown = ", ".join(f'unknown field "{p}"' for p in dropped)
            raise errors.bad_request(
                f'{info.kind} in version "{info.version}" cannot be handled as a {info.kind}: '
                f"strict decoding error: {unknown}"
            )
        if custom.storage_version and custom.storage_version != info.version:
            obj["apiVersion"] = f"{info.group}/{custom.storage_version}"
        errs = customresource.validate(obj, version, old)
        if not errs:
            self._admitted.put(obj, version)
        return errs

    async def scale(
        self, request: web.Request, info: ResourceInfo, ns: str, name: str
    ) -> web.StreamResponse:
        paths = (info.custom.scale if info.custom is not None else None) or {}
        view = ScaleView(
            paths.get("specReplicasPath", ".spec.replicas"),
            paths.get("statusReplicasPath", ".status.replicas"),
            paths.get("labelSelectorPath"),
            builtin=info.custom is None,  # apps/v1 Deployments and ReplicaSets
        )
        method = request.method
        if method == "GET":
            return json_response(_encode(view.of(self.registry.get(info, ns, name).obj)))
        if method not in ("PUT", "PATCH"):
            raise errors.method_not_supported(info.group, f"{info.resource}/scale", method.lower())
        accepted = None if method == "PATCH" else limits.BUILTIN_MEDIA_TYPES  # patches: below
        raw_body = await read_body(request, accepted=accepted)
        ctype = request.headers.get("Content-Type", "").split(";")[0].strip()
        # A patch that names no resourceVersion is applied again to the stored object when another
        # write got in first, as the apiserver's patcher retries its GuaranteedUpdate.
        retries = 5 if method == "PATCH" and not _names_resource_version(raw_body) else 0
        for attempt in range(retries + 1):
            entry = self.registry.get(info, ns, name)
            body = (
                raw_body if method == "PUT" else _patched_scale(ctype, view.of(entry.obj), raw_body)
            )
            obj = _scaled(entry.obj, view.spec_path, name, body)
            try:
                updated = await self.registry.update_checked(
                    info, ns, name, obj, "", is_dry_run(request.query)
                )
            except errors.StatusError as err:
                if err.code == 409 and attempt < retries:
                    continue
                raise
            return json_response(_encode(view.of(updated.obj)))
        raise AssertionError("unreachable: the last attempt returns or raises")


@dataclass(frozen=True)
class ScaleView:
    """Where a resource keeps what its scale subresource shows (the CRD's scale paths)."""

    spec_path: str
    status_path: str
    selector_path: str | None
    builtin: bool

    def of(self, obj: Obj) -> Obj:
        """The autoscaling/v1 Scale of `obj`."""
        from .table import jsonpath

        md = obj["metadata"]
        scale_md = {
            k: md[k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in md
        }
        status: Obj = {"replicas": jsonpath(obj, self.status_path) or 0}
        if self.selector_path:
            sel = jsonpath(obj, self.selector_path)
            if sel:
                status["selector"] = sel
        elif self.builtin:
            with contextlib.suppress(ValueError):
                sel = (obj.get("spec") or {}).get("selector")
                status["selector"] = str(label_selector_as_selector(sel))
        return {
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": scale_md,
            "spec": {"replicas": jsonpath(obj, self.spec_path) or 0},
            "status": status,
        }


def _scaled(stored: Obj, spec_path: str, name: str, body: Any) -> Obj:
    """The stored object with the replicas a Scale body asks for, under the body's
    resourceVersion (or the stored one); a 400 or 422 for a body that is no valid Scale."""
    shape = _scale_shape_error(body)
    if shape:
        raise errors.bad_request(f'Scale in version "v1" cannot be handled as a Scale: {shape}')
    replicas = ((body or {}).get("spec") or {}).get("replicas")
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        raise errors.invalid(
            "autoscaling",
            "Scale",
            name,
            [fielderr.invalid("spec.replicas", replicas, "must be greater than or equal to 0")],
        )
    obj: Obj = msgspec.json.decode(_encode(stored))
    want_rv = ((body or {}).get("metadata") or {}).get("resourceVersion")
    obj["metadata"]["resourceVersion"] = want_rv or stored["metadata"]["resourceVersion"]
    cur: Any = obj
    steps = spec_path.lstrip(".").split(".")
    for step in steps[:-1]:
        cur = cur.setdefault(step, {})
    cur[steps[-1]] = replicas
    return obj


def _names_resource_version(patch: Any) -> bool:
    """Whether a scale patch carries a resourceVersion precondition."""
    if isinstance(patch, dict):
        metadata = patch.get("metadata")
        return isinstance(metadata, dict) and bool(metadata.get("resourceVersion"))
    if isinstance(patch, list):
        return any(
            isinstance(op, dict) and op.get("path") == "/metadata/resourceVersion" for op in patch
        )
    return False


def _patched_scale(ctype: str, current: Obj, patch: Any) -> Any:
    """The Scale after a JSON or merge patch (strategic and apply patches merge as merge patches)."""
    from ...jsonpatch import PatchError
    from ...jsonpatch import apply_patch as apply_json_patch
    from .patch import apply_merge_patch

    try:
        if ctype == "application/json-patch+json":
            return apply_json_patch(current, patch)
        if ctype in (
            "application/merge-patch+json",
            "application/strategic-merge-patch+json",
            "application/apply-patch+yaml",
        ):
            return apply_merge_patch(current, patch)
    except PatchError as err:
        raise errors.StatusError(422, "Invalid", str(err)) from None
    raise errors.unsupported_media_type(ctype)
