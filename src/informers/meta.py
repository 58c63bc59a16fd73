"""Object metadata access for both raw JSON dicts and typed objects (apimachinery `meta.Accessor`).

Cached objects are either plain dicts decoded from JSON (`obj["metadata"]["name"]`) or typed structs
with a `metadata` attribute (`obj.metadata.name`, snake_case fields, e.g. msgspec Structs). These
functions read either shape, never mutate, and return "" / {} for missing fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _metadata(obj: Any) -> Any:
    if isinstance(obj, Mapping):
        return obj.get("metadata") or {}
    return getattr(obj, "metadata", None) or {}


def _field(meta: Any, json_name: str, attr_name: str) -> Any:
    if isinstance(meta, Mapping):
        return meta.get(json_name)
    return getattr(meta, attr_name, None)


def get_name(obj: Any) -> str:
    return _field(_metadata(obj), "name", "name") or ""


def get_namespace(obj: Any) -> str:
    return _field(_metadata(obj), "namespace", "namespace") or ""


def get_resource_version(obj: Any) -> str:
    return _field(_metadata(obj), "resourceVersion", "resource_version") or ""


def get_uid(obj: Any) -> str:
    return _field(_metadata(obj), "uid", "uid") or ""


def get_labels(obj: Any) -> Mapping[str, str]:
    return _field(_metadata(obj), "labels", "labels") or {}


def get_annotations(obj: Any) -> Mapping[str, str]:
    return _field(_metadata(obj), "annotations", "annotations") or {}


def get_kind(obj: Any) -> str:
    if isinstance(obj, Mapping):
        return obj.get("kind") or ""
    return getattr(obj, "kind", None) or ""


def get_api_version(obj: Any) -> str:
    if isinstance(obj, Mapping):
        return obj.get("apiVersion") or ""
    return getattr(obj, "api_version", None) or ""
