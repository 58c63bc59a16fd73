"""Kubernetes Events (client-go `tools/record`)."""

from .event import EVENTS, EventBroadcaster, EventRecorder, EventType

__all__ = ["EVENTS", "EventBroadcaster", "EventRecorder", "EventType"]
