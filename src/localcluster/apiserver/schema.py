"""The JSON shapes any object must have to be decoded at all (`shape_error`, `base64_error`),
answered 400 as Go's decoder does. The structural schema engine of custom resources is
`agones.apis.structural`; the checks of a CRD's own schema are in `crdschema.py`.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

# --- JSON shapes every decoder insists on ---

_META_TYPES: dict[str, type] = {
    "name": str,
    "generateName": str,
    "namespace": str,
    "uid": str,
    "resourceVersion": str,
    "labels": dict,
    "annotations": dict,
    "finalizers": list,
    "ownerReferences": list,
    "managedFields": list,
}
# Top-level fields of built-in kinds and their JSON type.
_BUILTIN_TYPES: dict[str, type] = {
    "spec": dict,
    "status": dict,
    "data": dict,
    "stringData": dict,
    "binaryData": dict,
    "roleRef": dict,
    "involvedObject": dict,
    "source": dict,
    "series": dict,
    "aggregationRule": dict,
    "webhooks": list,
    "subsets": list,
    "secrets": list,
    "imagePullSecrets": list,
    "rules": list,
    "subjects": list,
    "type": str,
}
_JSON_NAMES: dict[type, str] = {dict: "object", list: "array", str: "string"}


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return _JSON_NAMES.get(type(value), "value")


def shape_error(obj: dict[str, Any], builtin: bool) -> str:
    """Why `obj` could not be decoded into a Kubernetes object ('' when it could), in the words of
    Go's JSON decoder: metadata fields, and a built-in kind's top-level fields, of the wrong type."""
    md = obj.get("metadata") or {}
    for key, typ in _META_TYPES.items():
        value = md.get(key)
        if value is not None and not isinstance(value, typ):
            return f"json: cannot unmarshal {_json_type(value)} into Go struct field ObjectMeta.metadata.{key} of type {_JSON_NAMES.get(typ, typ.__name__)}"
    for i, ref in enumerate(md.get("ownerReferences") or []):
        if not isinstance(ref, dict):
            return f"json: cannot unmarshal {_json_type(ref)} into Go struct field ObjectMeta.metadata.ownerReferences[{i}] of type object"
    for i, entry in enumerate(md.get("managedFields") or []):
        if not isinstance(entry, dict):
            return f"json: cannot unmarshal {_json_type(entry)} into Go struct field ObjectMeta.metadata.managedFields[{i}] of type object"
    for i, fin in enumerate(md.get("finalizers") or []):
        if not isinstance(fin, str):
            return f"json: cannot unmarshal {_json_type(fin)} into Go struct field ObjectMeta.metadata.finalizers[{i}] of type string"
    if builtin:
        for key, typ in _BUILTIN_TYPES.items():
            value = obj.get(key)
            if value is not None and not isinstance(value, typ):
                return f"json: cannot unmarshal {_json_type(value)} into Go struct field .{key} of type {_JSON_NAMES[typ]}"
    return ""


_BASE64_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")


def _base64_values(kind: str, obj: dict[str, Any]) -> list[Any]:
    """The values a built-in kind holds as Go `[]byte` (base64 in JSON), Secrets aside (their
    registry strategy reports them as 422)."""
    if kind == "ConfigMap":
        data = obj.get("binaryData")
        return list(data.values()) if isinstance(data, dict) else []
    configs: list[Any] = []
    spec = obj.get("spec")
    if kind == "APIService" and isinstance(spec, dict):
        configs = [spec]
    elif kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
        hooks = obj.get("webhooks")
        configs = (
            [h.get("clientConfig") for h in hooks if isinstance(h, dict)]
            if isinstance(hooks, list)
            else []
        )
    elif kind == "CustomResourceDefinition" and isinstance(spec, dict):
        conversion = spec.get("conversion")
        webhook = conversion.get("webhook") if isinstance(conversion, dict) else None
        configs = [webhook.get("clientConfig")] if isinstance(webhook, dict) else []
    return [c["caBundle"] for c in configs if isinstance(c, dict) and c.get("caBundle")]


def base64_error(kind: str, obj: dict[str, Any]) -> str:
    """Why a `[]byte` field of a built-in kind does not decode ('' when they all do), in the words
    of Go's base64 decoder."""
    for value in _base64_values(kind, obj):
        if not isinstance(value, str):
            return f"json: cannot unmarshal {_json_type(value)} into Go value of type []uint8"
        try:
            base64.b64decode(value, validate=True)
        except binascii.Error:
            bad = next((i for i, c in enumerate(value) if c not in _BASE64_ALPHABET), None)
            return (
                f"illegal base64 data at input byte {len(value) // 4 * 4 if bad is None else bad}"
            )
    return ""
