"""Kubernetes Events (client-go `tools/record`)."""

from .event import EVENTS, EventBroadcaster, EventRecorder, EventType, object_reference

__all__ = ["EVENTS", "EventBroadcaster", "EventRecorder", "EventType", "object_reference"]
