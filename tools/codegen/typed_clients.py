"""Generate `src/client/{versioned,listers,informers}`: typed clients, listers and informer accessors.

The layout is client-go's generated one in Python case (`client-gen`, `lister-gen`,
`informer-gen`):

    versioned/clientset.py                      Clientset: .agones_v1().game_servers(ns)
    versioned/resources.py                      the Resource (GVR + scope) of every kind
    versioned/typed/<group>/<v>/<group>_client.py   AgonesV1Client
    versioned/typed/<group>/<v>/<kind>.py       GameServerClient (get, list, watch, create, ...)
    listers/<group>/<v>/<kind>.py               GameServerLister, GameServerNamespaceLister
    informers/externalversions/factory.py       SharedInformerFactory: .agones().v1().game_servers()
    informers/externalversions/<group>/...      group and version interfaces, GameServerInformer

Agones kinds come from the scheme (typed msgspec Structs; GameServerAllocation gets `create` only,
kinds with a status subresource get `update_status`); the core kinds the controllers need (pods,
nodes, events, leases) are plain dicts. The generated modules bind `agones.client.gentype`'s
generic client and lister to each resource. Text is emitted already formatted (ruff's style), so
the output does not depend on the installed ruff. The parts: `typed_resources` (which kinds, and
their names), `pytext` (source text), this module (the clientset), `typed_informers` (listers and
informers).
"""

from __future__ import annotations

from pathlib import Path

from tools.codegen.pytext import (
    Imports,
    module_text,
    package,
    path_of,
    pkg_path,
    wrap,
)
from tools.codegen.typed_informers import informers, listers
from tools.codegen.typed_resources import NAMES_ONLY, Res, group_versions, resources

OUT = "src/client"
OWNED = ("src/client/versioned", "src/client/listers", "src/client/informers")


# -- versioned (client-gen) ------------------------------------------------------------------


def _group_client(pkg: str, version: str) -> str:
    return f"{pkg.capitalize()}{version.capitalize()}Client"


def _by_kind_entry(r: Res) -> str:
    """One `BY_KIND` line, laid out as ruff formats it (the key split when too long)."""
    api_version = f"{r.group}/{r.version}" if r.group else r.version
    line = f'    ("{api_version}", "{r.kind}"): {r.const},\n'
    if len(line) <= 101:
        return line
    return f'    (\n        "{api_version}",\n        "{r.kind}",\n    ): {r.const},\n'


def _resources_module(res: list[Res]) -> str:
    imports = Imports("client.versioned.resources")
    imports.add("client.rest", "Resource")
    lines = []
    every = [*res, *NAMES_ONLY]
    for r in every:
        args = [f'"{r.group}"', f'"{r.version}"', f'"{r.plural}"']
        args += [f"namespaced={r.namespaced}", f'kind="{r.kind}"']
        lines.append(wrap(0, f"{r.const} = Resource(", args, ")"))
    by_kind = "".join(_by_kind_entry(r) for r in every)
    lines.append(
        "BY_KIND: dict[tuple[str, str], Resource] = {\n"
        + by_kind
        + "}\n"
        + '"""(apiVersion, kind) → its Resource, for manifests read from files."""\n'
    )
    return module_text(
        "The one table of where each resource the project's code uses lives in the API (group,"
        "\nversion, plural, scope): the kinds with generated clients, and the built-in kinds read"
        "\nor written as plain objects.\n",
        imports,
        "".join(lines),
    )


def _typed_module(r: Res) -> str:
    module = f"client.versioned.typed.{r.pkg}.{r.version}.{r.file}"
    imports = Imports(module)
    base = "CreateOnlyClient" if r.create_only else "ClientWithStatus" if r.status else "Client"
    imports.add("client.gentype", base)
    imports.add("client.rest", "RESTClient")
    imports.add("client.versioned.resources", r.const)
    if r.type_module:
        imports.add(r.type_module, r.kind)
    else:
        imports.std("typing", "Any")
    if r.create_only:
        verbs = "create"
    else:
        verbs = "get, list, watch, create, update, "
        verbs += "update_status, " if r.status else ""
        verbs += "patch, delete, delete_collection"
    scope = "in one namespace" if r.namespaced else "(cluster-scoped)"
    group = f"{r.group}/{r.version}" if r.group else r.version
    doc = f"The typed client of {r.plural} ({group}):\n{verbs}.\n"
    sig = ["self", "rest: RESTClient"] + (["namespace: str"] if r.namespaced else [])
    ns = "namespace" if r.namespaced else "None"
    body = (
        wrap(0, f"class {r.kind}Client(", [f"{base}[{r.item}]"], "):")
        + f'    """{r.kind}s {scope}, decoded as `{r.item}`."""\n'
        + "\n"
        + wrap(4, "def __init__(", sig, ") -> None:")
        + wrap(8, "super().__init__(", ["rest", r.const, ns, _item_value(r)], ")")
    )
    return module_text(doc, imports, body)


def _item_value(r: Res) -> str:
    return r.kind if r.type_module else "dict[str, Any]"


def _group_client_module(pkg: str, version: str, rs: list[Res]) -> str:
    module = f"client.versioned.typed.{pkg}.{version}.{pkg}_client"
    imports = Imports(module)
    imports.add("client.rest", "RESTClient")
    cls = _group_client(pkg, version)
    methods = []
    for r in rs:
        imports.add(f"client.versioned.typed.{pkg}.{version}.{r.file}", f"{r.kind}Client")
        if r.namespaced:
            methods.append(
                wrap(4, f"def {r.accessor}(", ["self", "namespace: str"], f") -> {r.kind}Client:")
                + wrap(8, f"return {r.kind}Client(", ["self.rest", "namespace"], ")")
            )
        else:
            methods.append(
                wrap(4, f"def {r.accessor}(", ["self"], f") -> {r.kind}Client:")
                + wrap(8, f"return {r.kind}Client(", ["self.rest"], ")")
            )
    group = rs[0].group or "core"
    body = (
        f"class {cls}:\n"
        f'    """Clients of the {group}/{version} resources, sharing one REST client."""\n'
        "\n"
        "    def __init__(self, rest: RESTClient) -> None:\n"
        "        self.rest = rest\n"
        "\n" + "\n".join(methods)
    )
    return module_text(f"The {group}/{version} group client.\n", imports, body)


def _clientset_module(groups: dict[tuple[str, str], list[Res]]) -> str:
    imports = Imports("client.versioned.clientset")
    imports.add("client.config", "Config")
    imports.add("client.rest", "RESTClient")
    attrs, methods = [], []
    for pkg, version in groups:
        cls = _group_client(pkg, version)
        imports.add(f"client.versioned.typed.{pkg}.{version}.{pkg}_client", cls)
        attrs.append(f"        self._{pkg}_{version} = {cls}(rest)\n")
        methods.append(
            f"    def {pkg}_{version}(self) -> {cls}:\n        return self._{pkg}_{version}\n"
        )
    body = (
        "class Clientset:\n"
        '    """Typed clients of every group, over one REST client (rate limit, session)."""\n'
        "\n"
        "    def __init__(self, rest: RESTClient) -> None:\n"
        "        self.rest = rest\n" + "".join(attrs) + "\n"
        "    @classmethod\n"
        "    def for_config(cls, config: Config) -> Clientset:\n"
        "        return cls(RESTClient(config))\n"
        "\n"
        "    async def close(self) -> None:\n"
        "        await self.rest.close()\n"
        "\n" + "\n".join(methods)
    )
    doc = (
        "The versioned clientset (client-go `NewForConfig`): one accessor per group and version,\n"
        'e.g. `Clientset.for_config(config).agones_v1().game_servers("default")`.\n'
    )
    return module_text(doc, imports, body)


# -- packages ----------------------------------------------------------------------------------


def _versioned(groups: dict[tuple[str, str], list[Res]], res: list[Res]) -> dict[str, str]:
    out = {
        pkg_path("client.versioned"): package(
            "client.versioned",
            "Typed clients (client-go `client-gen` output).\n",
            {"client.versioned.clientset": ["Clientset"]},
        ),
        path_of("client.versioned.resources"): _resources_module(res),
        path_of("client.versioned.clientset"): _clientset_module(groups),
        pkg_path("client.versioned.typed"): package(
            "client.versioned.typed", "Typed clients per group and version.\n"
        ),
    }
    for pkg in sorted({p for p, _ in groups}):
        out[pkg_path(f"client.versioned.typed.{pkg}")] = package(
            f"client.versioned.typed.{pkg}", f"Typed clients of the {pkg} group.\n"
        )
    for (pkg, version), rs in groups.items():
        base = f"client.versioned.typed.{pkg}.{version}"
        exports = {f"{base}.{pkg}_client": [_group_client(pkg, version)]}
        exports.update({f"{base}.{r.file}": [f"{r.kind}Client"] for r in rs})
        out[pkg_path(base)] = package(
            base, f"Typed clients of {rs[0].group or 'core'}/{version}.\n", exports
        )
        out[path_of(f"{base}.{pkg}_client")] = _group_client_module(pkg, version, rs)
        for r in rs:
            out[path_of(f"{base}.{r.file}")] = _typed_module(r)
    return out


def generate(root: Path) -> dict[str, str]:
    res = resources()
    # A create-only kind (GameServerAllocation) cannot be listed: no lister, no informer.
    listable = group_versions([r for r in res if not r.create_only])
    out = _versioned(group_versions(res), res)
    out.update(listers(listable))
    out.update(informers(listable))
    return dict(sorted(out.items()))
