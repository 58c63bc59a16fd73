"""Typed Agones resources, their defaults and validation: pure functions, no I/O (Go `pkg/apis`)."""
