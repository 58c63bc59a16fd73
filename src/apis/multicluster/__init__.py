"""The `multicluster.agones.dev` API group (Go `pkg/apis/multicluster`)."""
