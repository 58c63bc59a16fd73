"""The local API server: kube-apiserver's REST semantics on loopback.

The aiohttp application (`server`), the resource handlers and their request plumbing (`handlers`,
`requests`, `limits`, `decoding`), the generic registry over the in-memory store (`registry`, `store`,
`watch`, `watchstream`), the write semantics (`patch`, `apply`, `managedfields`, `deletion`, `meta`),
the controllers embedded in the server (garbage collector, namespaces, event TTL) and its work queue,
CustomResourceDefinitions and their structural schemas (`crd`, `schema`), the built-in kinds' defaults
and checks (`builtins`, `apps`, `podadmission`, `quantities`), admission webhooks and API aggregation
(`admission`, `aggregation`, `services`), discovery, OpenAPI and table printing, and the protobuf codec
Go clients speak (`protobuf`, `protowire`, `protobuf_messages`, `protobuf_special`).
"""
