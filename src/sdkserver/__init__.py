"""The SDK sidecar (Agones `pkg/sdkserver`): gRPC services, REST gateway, health, local and test modes.

Two backends implement the SDK (`backend.SDKBackend`): `LocalSDKServer` (local development and the
conformance test mode, no Kubernetes) and `SDKServer` (cluster mode, over a `GameServerStore`).
`serve.serve_sdk` exposes a backend over gRPC and the grpc-gateway-compatible REST gateway.
"""
