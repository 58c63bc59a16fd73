"""Kubernetes building blocks shared by every API group (Go `k8s.io/apimachinery`).

`intstr` (int-or-string values), `quantity` (resource quantities), `validation` (label, annotation,
name and DNS rules with Kubernetes' exact messages), `objectmeta` (typed `metadata` and RFC 3339 times)
and `schema` (CRD-style field metadata on msgspec types: structural checks, schema defaults, Go JSON
round-trip). Pure functions and values, no I/O.
"""
