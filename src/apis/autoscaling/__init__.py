"""The `autoscaling.agones.dev` API group (Go `pkg/apis/autoscaling`)."""
