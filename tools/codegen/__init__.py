"""Code generation (Go `hack/update-codegen.sh`): CRDs, typed clients and protobuf modules.

Every generator is a function returning `{relative path: file content}`; `python -m tools.codegen`
writes them, `--check` compares them with what is on disk and exits 1 when anything is stale or
missing. Generators register in `tools.codegen.generators.GENERATORS`.
"""
