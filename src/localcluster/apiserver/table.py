"""Server-side printing: the `meta.k8s.io/v1` Table kubectl asks for with
`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`.

Custom resources print their CRD's additionalPrinterColumns (Name first, and Age when none are
declared); built-in kinds print Name and Age. Values are read with the small JSONPath subset CRDs
use (`.a.b`, `[n]`, `[?(@.k=="v")]`).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

NAME_COLUMN = {
    "name": "Name",
    "type": "string",
    "format": "name",
    "description": "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
    "priority": 0,
}

AGE_COLUMN = {
    "name": "Age",
    "type": "date",
    "jsonPath": ".metadata.creationTimestamp",
    "description": "CreationTimestamp is a timestamp representing the server time when this object was created.",
}

_STEP = re.compile(
    r"\.([A-Za-z0-9_\-$]+)|\[(\d+)\]|\[\?\(@\.([A-Za-z0-9_.\-]+)\s*==\s*[\"']([^\"']*)[\"']\)\]|\['([^']+)'\]"
)


def jsonpath(obj: Any, path: str) -> Any:
    """Evaluate a CRD printer-column JSONPath; None when a step is missing."""
    path = path.strip()
    if path.startswith("{") and path.endswith("}"):
        path = path[1:-1]
    pos = 0
    cur = obj
    while pos < len(path):
        m = _STEP.match(path, pos)
        if m is None:
            return None
        pos = m.end()
        key, idx, fkey, fval, quoted = m.groups()
        if key is not None or quoted is not None:
            name = key if key is not None else quoted
            cur = cur.get(name) if isinstance(cur, dict) else None
        elif idx is not None:
            cur = cur[int(idx)] if isinstance(cur, list) and int(idx) < len(cur) else None
        else:
            found = None
            if isinstance(cur, list):
                for item in cur:
                    if str(jsonpath(item, "." + fkey)) == fval:
                        found = item
                        break
            cur = found
        if cur is None:
            return None
    return cur


def human_duration(seconds: float) -> str:
    """apimachinery's `duration.HumanDuration`."""
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    s = int(seconds)
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m" if s % 60 == 0 else f"{minutes}m{s % 60}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        return f"{hours}h" if minutes % 60 == 0 else f"{hours}h{minutes % 60}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d" if hours % 24 == 0 else f"{hours // 24}d{hours % 24}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def _age(ts: Any) -> str:
    if not isinstance(ts, str):
        return "<unknown>"
    try:
        when = datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return "<unknown>"
    return human_duration((datetime.now(UTC) - when).total_seconds())


def _cell(col: dict[str, Any], obj: dict[str, Any]) -> Any:
    if "fn" in col:
        return col["fn"](obj)
    value = jsonpath(obj, col.get("jsonPath", ""))
    kind = col.get("type", "string")
    if kind == "date":
        return _age(value) if value is not None else "<unknown>"
    if value is None:
        return None
    if kind == "integer" and isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    if kind == "number" and isinstance(value, int | float) and not isinstance(value, bool):
        return value
    if kind == "boolean" and isinstance(value, bool):
        return value
    if isinstance(value, dict | list):
        import json

        return json.dumps(value, separators=(",", ":"))
    if isinstance(value, bool):
        return "true" if value else "false"
    return (
        value
        if kind == "string" and isinstance(value, str)
        else str(value)
        if kind == "string"
        else value
    )


def columns_for(printer_columns: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """Column definitions as served: Name first, then the declared (or the default Age) columns."""
    cols = printer_columns if printer_columns else [AGE_COLUMN]
    out = [NAME_COLUMN]
    for c in cols:
        out.append(
            {
                "name": c["name"],
                "type": c.get("type", "string"),
                "format": c.get("format", ""),
                "description": c.get("description", ""),
                "priority": c.get("priority", 0),
            }
        )
    return out


def to_table(
    objs: list[dict[str, Any]],
    printer_columns: list[dict[str, Any]] | None,
    list_meta: dict[str, Any],
    include_object: str = "Metadata",
) -> dict[str, Any]:
    cols = printer_columns if printer_columns else [AGE_COLUMN]
    rows = []
    for obj in objs:
        cells = [obj.get("metadata", {}).get("name", "")]
        cells.extend(_cell(c, obj) for c in cols)
        row: dict[str, Any] = {"cells": cells}
        if include_object == "Object":
            row["object"] = obj
        elif include_object != "None":
            row["object"] = {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": obj.get("metadata", {}),
            }
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta,
        "columnDefinitions": columns_for(printer_columns),
        "rows": rows,
    }
