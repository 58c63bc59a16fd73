"""Prometheus metrics under Agones' names (`pkg/metrics`)."""
