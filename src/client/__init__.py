"""Kubernetes API access: config loading, the raw-JSON REST client, typed errors."""
