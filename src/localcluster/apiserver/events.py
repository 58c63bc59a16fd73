"""The two Event APIs: events.k8s.io/v1 Events are served over the stored core/v1 Events.

`event_to_core` / `event_from_core` convert between the two forms field by field (as the
apiserver's events.k8s.io conversion does), and `event_from_core` writes what Go's encoding of an
events.k8s.io/v1 Event always writes. `EVENT_FIELDS` and `EVENTS_V1_FIELDS` are the field labels
of each API's field selectors, both read from the stored form.
"""

from __future__ import annotations

from typing import Any

from .selectors import COMMON_FIELDS, field_path

EVENT_FIELDS = {
    **COMMON_FIELDS,
    "involvedObject.kind": field_path("involvedObject", "kind"),
    "involvedObject.namespace": field_path("involvedObject", "namespace"),
    "involvedObject.name": field_path("involvedObject", "name"),
    "involvedObject.uid": field_path("involvedObject", "uid"),
    "involvedObject.apiVersion": field_path("involvedObject", "apiVersion"),
    "involvedObject.resourceVersion": field_path("involvedObject", "resourceVersion"),
    "involvedObject.fieldPath": field_path("involvedObject", "fieldPath"),
    "reason": field_path("reason"),
    "reportingComponent": field_path("reportingComponent"),
    "source": lambda o: (
        (o.get("source") or {}).get("component") or o.get("reportingComponent") or ""
    ),
    "type": field_path("type"),
}

# events.k8s.io/v1 events are stored as core/v1 events: its field labels read the stored form.
EVENTS_V1_FIELDS = {
    **COMMON_FIELDS,
    **{
        f"regarding.{f}": EVENT_FIELDS[f"involvedObject.{f}"]
        for f in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")
    },
    "reason": EVENT_FIELDS["reason"],
    "reportingController": EVENT_FIELDS["reportingComponent"],
    "deprecatedSource": EVENT_FIELDS["source"],
    "type": EVENT_FIELDS["type"],
}

# (core/v1 field, events.k8s.io/v1 field) pairs of the Event conversion.
_EVENT_FIELD_PAIRS = (
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("related", "related"),
    ("reportingComponent", "reportingController"),
    ("reportingInstance", "reportingInstance"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
    ("eventTime", "eventTime"),
    ("action", "action"),
    ("reason", "reason"),
    ("type", "type"),
    ("series", "series"),
)


def event_to_core(obj: dict[str, Any]) -> dict[str, Any]:
    """An events.k8s.io/v1 Event in its stored core/v1 form."""
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "Event", "metadata": obj.get("metadata", {})}
    for core, v1 in _EVENT_FIELD_PAIRS:
        if v1 in obj:
            out[core] = obj[v1]
    return out


def event_from_core(obj: dict[str, Any]) -> dict[str, Any]:
    """A stored core/v1 Event as events.k8s.io/v1 serves it."""
    out: dict[str, Any] = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": obj.get("metadata", {}),
    }
    for core, v1 in _EVENT_FIELD_PAIRS:
        if core in obj:
            out[v1] = obj[core]
    # What Go's encoding of events.k8s.io/v1 Event always writes: struct fields (never omitted)
    # and timestamps without omitempty, null when unset.
    out.setdefault("eventTime", None)
    out.setdefault("regarding", {})
    out.setdefault("deprecatedSource", {})
    out.setdefault("deprecatedFirstTimestamp", None)
    out.setdefault("deprecatedLastTimestamp", None)
    return out
