"""Kubernetes Events (client-go `tools/record`)."""

from .event import EventBroadcaster, EventRecorder, EventType, object_reference

__all__ = ["EventBroadcaster", "EventRecorder", "EventType", "object_reference"]
