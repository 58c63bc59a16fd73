"""OpenAPI v3 documents, as much as kubectl needs from them.

kubectl (1.27+) reads `/openapi/v3` to learn whether the server validates fields itself (the PATCH
operation of each kind lists a `fieldValidation` parameter) and, for built-in kinds, the strategic
merge keys it uses to compute `kubectl apply` patches. Custom resources carry their CRD schema.
Documents are per group-version; the root lists them with a content hash so clients cache them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import msgspec

from .discovery import KUBERNETES_VERSION
from .patch import PRIMITIVE_MERGE
from .resources import ResourceInfo

# kube-openapi answers the protobuf v2 document as plain octets (the Accept type does not parse as a
# Content-Type in Go).
V2_PROTOBUF = "application/octet-stream"
_QUERY = ("dryRun", "fieldManager", "fieldValidation", "force", "pretty")


def _gv_path(info: ResourceInfo) -> str:
    return f"apis/{info.group}/{info.version}" if info.group else f"api/{info.version}"


def _schema_name(info: ResourceInfo) -> str:
    group = ".".join(reversed(info.group.split("."))) if info.group else "io.k8s.api.core"
    return f"{group}.{info.version}.{info.kind}"


def _gvk(info: ResourceInfo) -> dict[str, str]:
    return {"group": info.group, "version": info.version, "kind": info.kind}


def _builtin_schema(info: ResourceInfo) -> dict[str, Any]:
    """An open object schema carrying the kind's strategic-merge metadata."""
    root: dict[str, Any] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    for path, key in sorted((info.patch_meta or {}).items(), key=lambda kv: len(kv[0])):
        node = root
        for name in path[:-1]:
            child = node.setdefault("properties", {}).setdefault(
                name, {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
            )
            if child.get("type") == "array":
                child = child.setdefault(
                    "items", {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                )
            node = child
        leaf: dict[str, Any] = {"type": "array", "x-kubernetes-patch-strategy": "merge"}
        if key == PRIMITIVE_MERGE:
            leaf["items"] = {"type": "string"}
        else:
            leaf["x-kubernetes-patch-merge-key"] = key
            leaf["items"] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        existing = node.setdefault("properties", {}).get(path[-1])
        if existing is not None and "items" in existing:
            leaf["items"] = existing["items"]
        node["properties"][path[-1]] = leaf
    return root


def gv_document(infos: Iterable[ResourceInfo]) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {}
    for info in infos:
        name = _schema_name(info)
        if info.custom is not None and info.custom.schema is not None:
            schema = dict(info.custom.schema)
        else:
            schema = _builtin_schema(info)
        schema["x-kubernetes-group-version-kind"] = [_gvk(info)]
        schemas[name] = schema
        prefix = f"/{_gv_path(info)}"
        if info.namespaced:
            prefix += "/namespaces/{namespace}"
        ref = {"$ref": f"#/components/schemas/{name}"}
        params = [{"name": q, "in": "query", "schema": {"type": "string"}} for q in _QUERY]
        op = {
            "operationId": f"patch{info.kind}",
            "parameters": params,
            "requestBody": {
                "content": {"application/merge-patch+json": {"schema": {"type": "object"}}}
            },
            "responses": {
                "200": {"description": "OK", "content": {"application/json": {"schema": ref}}}
            },
            "x-kubernetes-action": "patch",
            "x-kubernetes-group-version-kind": _gvk(info),
        }
        paths[f"{prefix}/{info.resource}/{{name}}"] = {
            "get": {
                "operationId": f"read{info.kind}",
                "responses": {
                    "200": {"description": "OK", "content": {"application/json": {"schema": ref}}}
                },
                "x-kubernetes-action": "get",
                "x-kubernetes-group-version-kind": _gvk(info),
            },
            "patch": op,
        }
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": KUBERNETES_VERSION},
        "paths": paths,
        "components": {"schemas": schemas},
    }


def encode_document(infos: Iterable[ResourceInfo]) -> tuple[bytes, str]:
    body = msgspec.json.encode(gv_document(infos))
    return body, hashlib.sha512(body).hexdigest().upper()[:128]


def root_document(hashes: dict[str, str]) -> dict[str, Any]:
    return {
        "paths": {
            gv: {"serverRelativeURL": f"/openapi/v3/{gv}?hash={h}"}
            for gv, h in sorted(hashes.items())
        }
    }


def group_versions(infos: Iterable[ResourceInfo]) -> dict[str, list[ResourceInfo]]:
    out: dict[str, list[ResourceInfo]] = {}
    for info in infos:
        out.setdefault(_gv_path(info), []).append(info)
    return out
