"""The embedded local cluster: a Kubernetes-compatible API server on loopback (`LocalAPIServer`)."""

from .apiserver.server import FaultHandle, LocalAPIServer, ServerOptions, ThreadedAPIServer

__all__ = ["FaultHandle", "LocalAPIServer", "ServerOptions", "ThreadedAPIServer"]
