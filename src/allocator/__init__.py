"""The allocator service (Agones `cmd/allocator` and `pkg/allocation`): `allocation.AllocationService`
over gRPC and REST on (m)TLS, in front of the allocation core of `controllers.gameserverallocations`.
"""
