"""The `allocation.agones.dev` API group (Go `pkg/apis/allocation`)."""
