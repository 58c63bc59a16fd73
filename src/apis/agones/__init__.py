"""The `agones.dev` API group."""
