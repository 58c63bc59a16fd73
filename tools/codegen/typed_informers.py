"""Generate `src/client/{listers,informers}`: typed listers and informer accessors (client-go
`lister-gen` and `informer-gen`), for the `typed_clients` generator.
"""

from __future__ import annotations

from tools.codegen.pytext import (
    Imports,
    module_text,
    package,
    path_of,
    pkg_path,
    relative,
    wrap,
)
from tools.codegen.typed_resources import Res

# -- listers (lister-gen) --------------------------------------------------------------------


def _list_method(item: str) -> str:
    return (
        wrap(
            4,
            "def list(",
            ["self", "selector: Selector | str | None = None"],
            f") -> list[{item}]:",
        )
        + "        return self._indexer.list(selector)\n"
    )


def _get_method(item: str) -> str:
    return (
        wrap(4, "def get(", ["self", "name: str"], f") -> {item}:")
        + "        return self._indexer.get(name)\n"
    )


def _lister_module(r: Res) -> str:
    module = f"client.listers.{r.pkg}.{r.version}.{r.file}"
    imports = Imports(module)
    imports.add("client.gentype", "ResourceIndexer")
    imports.add("client.versioned.resources", r.const)
    imports.add("informers.labels", "Selector")
    imports.add("informers.thread_safe_store", "Indexer")
    if r.type_module:
        imports.add(r.type_module, r.kind)
    else:
        imports.std("typing", "Any")
    item = r.item
    body = (
        f"class {r.kind}Lister:\n"
        f'    """{r.kind}s from an informer\'s cache (shared objects: never mutate them)."""\n'
        "\n"
        "    def __init__(self, indexer: Indexer) -> None:\n"
        + wrap(8, f"self._indexer = ResourceIndexer[{item}](", ["indexer", r.const], ")")
        + "\n"
        + _list_method(item)
    )
    if r.namespaced:
        imports.add("client.gentype", "NamespaceIndexer")
        ns_lister = f"{r.kind}NamespaceLister"
        body += (
            "\n"
            + wrap(4, f"def {r.accessor}(", ["self", "namespace: str"], f") -> {ns_lister}:")
            + wrap(8, f"return {ns_lister}(", ["self._indexer.namespaced(namespace)"], ")")
            + "\n\n"
            + f"class {ns_lister}:\n"
            + f'    """{r.kind}s of one namespace from the cache."""\n'
            + "\n"
            + wrap(4, "def __init__(", ["self", f"indexer: NamespaceIndexer[{item}]"], ") -> None:")
            + "        self._indexer = indexer\n"
            + "\n"
            + _list_method(item)
            + "\n"
            + _get_method(item)
        )
    else:
        body += "\n" + _get_method(item)
    doc = f"Listers of {r.plural}: list by selector" + (
        ", per namespace, and get by name.\n" if r.namespaced else " and get by name.\n"
    )
    return module_text(doc, imports, body)


# -- informers (informer-gen) ----------------------------------------------------------------


def _informer_module(r: Res) -> str:
    module = f"client.informers.externalversions.{r.pkg}.{r.version}.{r.file}"
    imports = Imports(module)
    imports.add(f"client.listers.{r.pkg}.{r.version}.{r.file}", f"{r.kind}Lister")
    imports.add("client.versioned.resources", r.const)
    imports.add("informers", "SharedIndexInformer")
    imports.add("informers.factory", "GenericInformer", "SharedInformerFactory")
    if r.type_module:
        imports.add(r.type_module, r.kind)
        imports.add("informers.listwatch", "StructDecoder")
        decoder = wrap(0, f"_DECODER = StructDecoder[{r.kind}](", [r.kind], ")")
    else:
        imports.add("informers.listwatch", "RawDecoder")
        decoder = "_DECODER = RawDecoder()\n"
    lister = f"{r.kind}Lister"
    body = (
        "# Decoders are stateless: one per module serves every factory.\n"
        + decoder
        + "\n\n"
        + f"class {r.kind}Informer:\n"
        + f'    """The shared informer of {r.plural} and its lister; created on first use."""\n'
        + "\n"
        + "    def __init__(self, factory: SharedInformerFactory) -> None:\n"
        + "        self._factory = factory\n"
        + "\n"
        + "    def _generic(self) -> GenericInformer:\n"
        + wrap(8, "return self._factory.for_resource(", [r.const, "decoder=_DECODER"], ")")
        + "\n"
        + "    def informer(self) -> SharedIndexInformer:\n"
        + "        return self._generic().informer()\n"
        + "\n"
        + f"    def lister(self) -> {lister}:\n"
        + wrap(8, f"return {lister}(", ["self.informer().indexer"], ")")
    )
    item = f"`{r.kind}`" if r.type_module else "plain dicts"
    return module_text(f"The {r.plural} informer, decoding into {item}.\n", imports, body)


def _version_interface_module(pkg: str, version: str, rs: list[Res]) -> str:
    module = f"client.informers.externalversions.{pkg}.{version}.interface"
    imports = Imports(module)
    imports.add("informers.factory", "SharedInformerFactory")
    methods = []
    for r in rs:
        imports.add(
            f"client.informers.externalversions.{pkg}.{version}.{r.file}", f"{r.kind}Informer"
        )
        methods.append(
            wrap(4, f"def {r.accessor}(", ["self"], f") -> {r.kind}Informer:")
            + wrap(8, f"return {r.kind}Informer(", ["self._factory"], ")")
        )
    group = rs[0].group or "core"
    body = (
        "class Interface:\n"
        f'    """Informers of the {group}/{version} resources."""\n'
        "\n"
        "    def __init__(self, factory: SharedInformerFactory) -> None:\n"
        "        self._factory = factory\n"
        "\n" + "\n".join(methods)
    )
    return module_text(f"Informer accessors of {group}/{version}.\n", imports, body)


def _group_interface_module(pkg: str, versions: list[str], group: str) -> str:
    module = f"client.informers.externalversions.{pkg}.interface"
    imports = Imports(module)
    imports.add("informers.factory", "SharedInformerFactory")
    methods = []
    for v in versions:
        alias = f"{v.capitalize()}Interface"
        imports.local.setdefault(
            relative(module, f"client.informers.externalversions.{pkg}.{v}.interface"), set()
        ).add(f"Interface as {alias}")
        methods.append(f"    def {v}(self) -> {alias}:\n        return {alias}(self._factory)\n")
    body = (
        "class Interface:\n"
        f'    """Versions of the {group or "core"} group."""\n'
        "\n"
        "    def __init__(self, factory: SharedInformerFactory) -> None:\n"
        "        self._factory = factory\n"
        "\n" + "\n".join(methods)
    )
    return module_text(f"Informer accessors of the {group or 'core'} group.\n", imports, body)


def _factory_module(pkgs: list[str]) -> str:
    module = "client.informers.externalversions.factory"
    imports = Imports(module)
    imports.add("clock", "Clock")
    imports.add("informers", "SharedIndexInformer")
    imports.add("informers.factory", "SharedInformerFactory as GenericSharedInformerFactory")
    imports.add("informers.listwatch", "RawClient")
    methods = []
    for pkg in pkgs:
        alias = f"{pkg.capitalize()}Interface"
        imports.local.setdefault(
            relative(module, f"client.informers.externalversions.{pkg}.interface"), set()
        ).add(f"Interface as {alias}")
        methods.append(f"    def {pkg}(self) -> {alias}:\n        return {alias}(self.generic)\n")
    body = (
        "class SharedInformerFactory:\n"
        '    """Typed informer accessors over one generic factory (one informer per resource)."""\n'
        "\n"
        "    def __init__(\n"
        "        self,\n"
        "        client: RawClient,\n"
        "        default_resync: float = 30.0,\n"
        "        *,\n"
        "        namespace: str | None = None,\n"
        "        clock: Clock | None = None,\n"
        "    ) -> None:\n"
        "        self.generic = GenericSharedInformerFactory(\n"
        "            client, default_resync, namespace=namespace, clock=clock\n"
        "        )\n"
        "\n"
        "    @classmethod\n"
        "    def from_generic(cls, generic: GenericSharedInformerFactory) -> SharedInformerFactory:\n"
        '        """Share informers with code that uses the generic factory directly."""\n'
        "        factory = cls.__new__(cls)\n"
        "        factory.generic = generic\n"
        "        return factory\n"
        "\n"
        "    def start(self) -> None:\n"
        "        self.generic.start()\n"
        "\n"
        "    async def wait_for_cache_sync(self, timeout: float | None = None) -> dict[str, bool]:\n"
        "        return await self.generic.wait_for_cache_sync(timeout)\n"
        "\n"
        "    async def shutdown(self) -> None:\n"
        "        await self.generic.shutdown()\n"
        "\n"
        "    def informers(self) -> list[SharedIndexInformer]:\n"
        "        return self.generic.informers()\n"
        "\n" + "\n".join(methods)
    )
    doc = (
        "The typed shared informer factory (client-go `externalversions.NewSharedInformerFactory`):\n"
        "`factory.agones().v1().game_servers().informer()` / `.lister()`; `start()` runs every\n"
        "informer asked for so far.\n"
    )
    return module_text(doc, imports, body)


# -- packages ----------------------------------------------------------------------------------


def listers(groups: dict[tuple[str, str], list[Res]]) -> dict[str, str]:
    out = {
        pkg_path("client.listers"): package(
            "client.listers",
            "Typed listers over informer caches (client-go `lister-gen` output).\n",
        )
    }
    for pkg in sorted({p for p, _ in groups}):
        out[pkg_path(f"client.listers.{pkg}")] = package(
            f"client.listers.{pkg}", f"Listers of the {pkg} group.\n"
        )
    for (pkg, version), rs in groups.items():
        base = f"client.listers.{pkg}.{version}"
        exports: dict[str, list[str]] = {}
        for r in rs:
            out[path_of(f"{base}.{r.file}")] = _lister_module(r)
            names = [f"{r.kind}Lister"] + ([f"{r.kind}NamespaceLister"] if r.namespaced else [])
            exports[f"{base}.{r.file}"] = names
        out[pkg_path(base)] = package(
            base, f"Listers of {rs[0].group or 'core'}/{version}.\n", exports
        )
    return out


def informers(groups: dict[tuple[str, str], list[Res]]) -> dict[str, str]:
    ibase = "client.informers.externalversions"
    out = {
        pkg_path("client.informers"): package(
            "client.informers", "Typed informers (client-go `informer-gen` output).\n"
        ),
        pkg_path(ibase): package(
            ibase,
            "The typed shared informer factory and its group interfaces.\n",
            {f"{ibase}.factory": ["SharedInformerFactory"]},
        ),
        path_of(f"{ibase}.factory"): _factory_module(sorted({p for p, _ in groups})),
    }
    versions_of: dict[str, list[str]] = {}
    group_of: dict[str, str] = {}
    for (pkg, version), rs in groups.items():
        versions_of.setdefault(pkg, []).append(version)
        group_of[pkg] = rs[0].group
        vbase = f"{ibase}.{pkg}.{version}"
        exports = {f"{vbase}.interface": ["Interface"]}
        exports.update({f"{vbase}.{r.file}": [f"{r.kind}Informer"] for r in rs})
        out[pkg_path(vbase)] = package(
            vbase, f"Informers of {rs[0].group or 'core'}/{version}.\n", exports
        )
        out[path_of(f"{vbase}.interface")] = _version_interface_module(pkg, version, rs)
        for r in rs:
            out[path_of(f"{vbase}.{r.file}")] = _informer_module(r)
    for pkg, versions in versions_of.items():
        gbase = f"{ibase}.{pkg}"
        group = group_of[pkg] or "core"
        out[pkg_path(gbase)] = package(
            gbase, f"Informers of the {group} group.\n", {f"{gbase}.interface": ["Interface"]}
        )
        out[path_of(f"{gbase}.interface")] = _group_interface_module(
            pkg, sorted(versions), group_of[pkg]
        )
    return out
