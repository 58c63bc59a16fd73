"""Refresh `tools/codegen/data/k8s-schemas.json`: the core/v1 PodTemplateSpec and meta/v1 ObjectMeta
shapes that CRDs embed, read once from the installed `kubernetes` client's model classes.

    python -m tools.codegen.k8s_schemas          # rewrite the data file
    python -m tools.codegen.k8s_schemas --check  # exit 1 if the installed client disagrees

The CRD generator reads only the committed data file, so `python -m tools.codegen --check` gives the
same answer whatever `kubernetes` version is installed; run this command deliberately (and commit its
output) to follow a newer Kubernetes API.

What the model classes carry: each property's JSON name (`attribute_map`), its type
(`openapi_types`: `str`, `int`, `bool`, `float`, `datetime`, `object`, `List[...]`, `Dict[str, ...]`
or another model) and, for the pydantic-based clients, which properties are required. What they lose,
and this module restores from the short tables below:
* `object` is used for int-or-string ports and for `FieldsV1` (arbitrary JSON);
* quantities (`resources.limits`, `emptyDir.sizeLimit`, ...) are plain `str` in the models;
* `creationTimestamp` is nullable in Agones' embedded ObjectMeta (Go writes `null` for a zero time).
An `object` property not named in the tables stops the refresh: teach it what the field is.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

DATA_FILE = Path(__file__).resolve().parent / "data" / "k8s-schemas.json"
ROOTS = ("V1PodTemplateSpec", "V1ObjectMeta")

# `object`-typed properties that are int-or-string on the wire.
INT_OR_STRING = frozenset({("V1HTTPGetAction", "port"), ("V1TCPSocketAction", "port")})
# `object`-typed properties holding arbitrary JSON.
FREE_FORM = frozenset({("V1ManagedFieldsEntry", "fields_v1")})
# `str` (or `Dict[str, str]` values) that are `resource.Quantity`.
QUANTITY = frozenset(
    {
        ("V1ResourceRequirements", "limits"),
        ("V1ResourceRequirements", "requests"),
        ("V1VolumeResourceRequirements", "limits"),
        ("V1VolumeResourceRequirements", "requests"),
        ("V1EmptyDirVolumeSource", "size_limit"),
        ("V1PodSpec", "overhead"),
        ("V1ResourceFieldSelector", "divisor"),
    }
)
NULLABLE = frozenset({("V1ObjectMeta", "creation_timestamp")})

_MODEL = re.compile(r"^[A-Z][A-Za-z0-9]*V\d\w*$|^V\d\w+$")


def _models() -> Any:
    import kubernetes.client.models as models  # deferred: only this command needs the client

    return models


def _resolve(models: Any, name: str) -> str:
    # Newer clients prefix clashing core/v1 names (`CoreV1ResourceClaim`).
    for candidate in (name, "CoreV1" + name[2:] if name.startswith("V1") else name):
        if hasattr(models, candidate):
            return candidate
    raise KeyError(f"no model class {name}")


def _split_generic(text: str) -> list[str]:
    depth, start, parts = 0, 0, []
    for i, ch in enumerate(text):
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def _type(models: Any, owner: str, attr: str, text: str, todo: list[str]) -> dict[str, Any]:
    """The data form of one `openapi_types` string."""
    key = (owner, attr)
    for prefix in ("List[", "list["):
        if text.startswith(prefix):
            return {
                "type": "array",
                "items": _type(models, owner, attr, text[len(prefix) : -1], todo),
            }
    for prefix in ("Dict[", "dict("):
        if text.startswith(prefix):
            _, value = _split_generic(text[len(prefix) : -1])
            return {
                "type": "object",
                "additionalProperties": _type(models, owner, attr, value, todo),
            }
    if key in QUANTITY and text == "str":
        return {"quantity": True}
    if text == "str":
        return {"type": "string"}
    if text == "int":
        return {"type": "integer"}
    if text == "float":
        return {"type": "number"}
    if text == "bool":
        return {"type": "boolean"}
    if text == "datetime":
        return {"type": "string", "format": "date-time"}
    if text == "object":
        if key in INT_OR_STRING:
            return {"intOrString": True}
        if key in FREE_FORM:
            return {"type": "object", "preserveUnknown": True}
        raise ValueError(
            f"{owner}.{attr} is an untyped object: add it to INT_OR_STRING or FREE_FORM"
        )
    if _MODEL.match(text):
        name = _resolve(models, text)
        todo.append(name)
        return {"ref": name}
    raise ValueError(f"{owner}.{attr}: unknown type {text!r}")


def _required(cls: Any, attr: str, json_name: str) -> bool:
    fields = getattr(cls, "model_fields", None)
    if fields is not None:  # pydantic models: match the field by its JSON alias
        for name, info in fields.items():
            if (info.serialization_alias or info.alias or name) == json_name:
                return bool(info.is_required())
        raise KeyError(f"{cls.__name__} has no field serialised as {json_name}")
    # Older, non-pydantic clients: a required property's setter refuses None.
    from kubernetes.client.configuration import Configuration

    obj = cls.__new__(cls)
    config = Configuration()
    config.client_side_validation = True
    obj.local_vars_configuration = config
    try:
        setattr(obj, attr, None)
    except ValueError:
        return True
    return False


def collect() -> dict[str, Any]:
    """Every model reachable from `ROOTS`, as sorted, JSON-ready data."""
    import kubernetes

    models = _models()
    definitions: dict[str, Any] = {}
    todo = list(ROOTS)
    while todo:
        name = todo.pop()
        if name in definitions:
            continue
        cls = getattr(models, name)
        props: dict[str, Any] = {}
        required: list[str] = []
        for attr, text in cls.openapi_types.items():
            json_name = cls.attribute_map[attr]
            prop = _type(models, name, attr, text, todo)
            if (name, attr) in NULLABLE:
                prop["nullable"] = True
            props[json_name] = prop
            if _required(cls, attr, json_name):
                required.append(json_name)
        definitions[name] = {
            "properties": dict(sorted(props.items())),
            "required": sorted(required),
        }
    return {
        "source": f"kubernetes Python client {kubernetes.__version__} model classes",
        "roots": list(ROOTS),
        "definitions": dict(sorted(definitions.items())),
    }


def render(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=1, sort_keys=False) + "\n"


def load() -> dict[str, Any]:
    """The committed data (what the CRD generator uses)."""
    data: dict[str, Any] = json.loads(DATA_FILE.read_text())
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.codegen.k8s_schemas")
    parser.add_argument("--check", action="store_true", help="fail if the data file differs")
    args = parser.parse_args(argv)
    text = render(collect())
    current = DATA_FILE.read_text() if DATA_FILE.exists() else None
    if args.check:
        if current != text:
            print(f"{DATA_FILE} differs from the installed kubernetes client", file=sys.stderr)
            return 1
        return 0
    if current != text:
        DATA_FILE.parent.mkdir(parents=True, exist_ok=True)
        DATA_FILE.write_text(text)
        print(f"wrote {DATA_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
