"""The structural-schema engine of custom resources, shared by every admission path.

apiextensions-apiserver treats a custom resource in three steps, each a module here: decoding
defaults and prunes it against its version's openAPIV3Schema (`defaulting`), validation checks it
against the schema (`validation`) and the scale subresource's replica paths (`scale`).
`customresource` runs those steps as the API server does; `crds` holds the schemas of the
repository's CRDs (`crdschemas.json`, generated with `crds/*.yaml` by `tools.codegen`), so that
`agones.apis.scheme.admit` (the webhooks' `agones validate`) answers what the local API server
answers for the same object. Pure: no I/O beyond reading the package's own schema file.
"""
