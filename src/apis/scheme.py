"""A registry of API kinds, like client-go's `runtime.Scheme`, with the admission pipeline.

Each API group package registers its kinds on import (`SCHEME.register(Kind(...))`): the typed
msgspec Struct, `apply_defaults(obj, gates)` (what Agones' mutating webhook plus the CRD schema
defaults give; `None` when the kind has no mutating webhook: then only schema defaults apply),
`validate(obj, gates) -> list[FieldError]` (CRD schema checks plus the validating webhook's rules
on CREATE), optionally `validate_schema(obj, gates)` (the schema part alone) and
`validate_update(old, new, gates)` (the webhook's UPDATE rules; see `Scheme.validate_update`).
`load()` imports every group listed in `GROUPS`: add a group's package there (one line).

`decode` turns JSON (bytes, str or an already-parsed dict) into the registered type after the
apiserver's structural checks (every type or enum error at once, as a `DecodeError` carrying
`FieldError`s); `decode_json(cls, data)` is the fast path for trusted apiserver output. `encode`
gives the JSON-ready dict. `admit(data, gates)` runs the whole create/update pipeline and never
raises: it returns the defaulted object (when decodable; an update gets only the schema defaults)
and every error.
"""

from __future__ import annotations

import copy
import functools
import importlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import msgspec

from ..featuregates import DEFAULT_GATES, FeatureGates
from .field import ErrorType, FieldError, Path, invalid, required
from .meta import schema
from .structural import crds, customresource

# Group packages (relative to this package) imported by `load()`; each registers its kinds.
GROUPS: tuple[str, ...] = (
    ".agones.v1",
    ".autoscaling.v1",
    ".allocation.v1",
    ".multicluster.v1",
)

T = TypeVar("T", bound=msgspec.Struct)

ApplyDefaults = Callable[[Any, FeatureGates], None]
Validate = Callable[[Any, FeatureGates], list[FieldError]]
ValidateUpdate = Callable[[Any, Any, FeatureGates], list[FieldError]]


@dataclass(frozen=True)
class Kind(Generic[T]):
    group: str
    version: str
    kind: str
    plural: str
    type: type[T]
    validate: Validate
    apply_defaults: ApplyDefaults | None = None
    validate_update: ValidateUpdate | None = None
    validate_schema: Validate | None = None
    # Agones' mutating webhook decodes this kind in Go on CREATE: `""` in an enum field reads as
    # unset there (and is then defaulted), so `admit` accepts it for creates.
    mutating_webhook: bool = False
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


class DecodeError(ValueError):
    """The data cannot become a typed object; `errors` says why, field by field."""

    def __init__(self, message: str, errors: list[FieldError]) -> None:
        super().__init__(message)
        self.errors = errors


class UnknownKindError(DecodeError):
    pass


@dataclass
class Admission:
    """Outcome of `Scheme.admit`: the defaulted object (None if undecodable) and all errors."""

    obj: Any
    errors: list[FieldError] = field(default_factory=list)
    kind: Kind[Any] | None = None

    @property
    def allowed(self) -> bool:
        return not self.errors


def _validation_error_to_field(err: msgspec.ValidationError) -> FieldError:
    # msgspec says e.g. "Expected `int`, got `str` - at `$.spec.ports[0].containerPort`".
    text = str(err)
    path = ""
    if " - at `$" in text:
        text, _, where = text.partition(" - at `$")
        path = where.rstrip("`").lstrip(".")
    return FieldError(ErrorType.INVALID, path, text)


class Scheme:
    def __init__(self) -> None:
        self._by_gvk: dict[tuple[str, str], Kind[Any]] = {}
        self._by_type: dict[type, Kind[Any]] = {}

    def register(self, kind: Kind[Any]) -> None:
        key = (kind.api_version, kind.kind)
        existing = self._by_gvk.get(key)
        if existing is not None and existing != kind:
            raise ValueError(f"{kind.kind} in {kind.api_version} is already registered")
        self._by_gvk[key] = kind
        self._by_type[kind.type] = kind

    def kinds(self) -> list[Kind[Any]]:
        return list(self._by_gvk.values())

    def lookup(self, api_version: str, kind: str) -> Kind[Any]:
        try:
            return self._by_gvk[(api_version, kind)]
        except KeyError:
            raise UnknownKindError(
                f'no kind "{kind}" is registered for version "{api_version}"', []
            ) from None

    def kind_of(self, obj: Any) -> Kind[Any]:
        try:
            return self._by_type[type(obj)]
        except KeyError:
            raise UnknownKindError(f"{type(obj).__name__} is not a registered kind", []) from None

    # -- codec --------------------------------------------------------------------------------

    @staticmethod
    def _parse(data: bytes | str | dict[str, Any]) -> dict[str, Any]:
        if isinstance(data, dict):
            return data
        if not isinstance(data, bytes | str):
            raise DecodeError("the object must be a JSON object", [])
        try:
            parsed = json.loads(data)
        except (ValueError, UnicodeDecodeError) as err:
            raise DecodeError(f"couldn't decode JSON: {err}", []) from None
        if not isinstance(parsed, dict):
            raise DecodeError("the object must be a JSON object", [])
        return parsed

    def decode(self, data: bytes | str | dict[str, Any], *, for_create: bool = False) -> Any:
        """Decode any registered kind, chosen by its `apiVersion` and `kind`.

        `for_create`: read the object as the kind's mutating webhook would on CREATE.
        """
        raw = self._parse(data)
        errs: list[FieldError] = []
        api_version, kind_name = raw.get("apiVersion"), raw.get("kind")
        if not isinstance(api_version, str) or not api_version:
            errs.append(required(Path("apiVersion")))
        if not isinstance(kind_name, str) or not kind_name:
            errs.append(required(Path("kind")))
        if errs:
            raise DecodeError("Object 'apiVersion' and 'kind' must be set", errs)
        kind = self.lookup(str(api_version), str(kind_name))
        if for_create:
            return self.decode_for_mutation(kind, raw)
        return self.decode_as(kind.type, raw)

    def decode_for_mutation(self, kind: Kind[T], data: bytes | str | dict[str, Any]) -> T:
        """Read `data` as Agones' mutating webhook does: Go's enums are string types, so
        encoding/json takes any string. `""` is the zero value, which the defaults then replace
        (Go clients always send `status.state: ""`); a string outside the enum is kept as given,
        and the defaults copy it on (`spec.eviction` → `status.eviction`) for the CRD schema to
        reject in both places. The one decoder of both `admit` and the webhook's `/mutate`."""
        return self.decode_as(kind.type, data, go_enums=kind.mutating_webhook)

    def decode_as(
        self,
        cls: type[T],
        data: bytes | str | dict[str, Any],
        *,
        go_enums: bool = False,
    ) -> T:
        """Decode into `cls` after the structural checks; `DecodeError` lists every problem."""
        raw = self._parse(data)
        cleaned, errs = schema.check_types(raw, cls, go_enums=go_enums)
        if errs:
            raise DecodeError("the object does not match its schema", errs)
        try:
            obj = msgspec.convert(cleaned, cls)
        except msgspec.ValidationError as err:
            raise DecodeError(str(err), [_validation_error_to_field(err)]) from None
        if go_enums:
            schema.keep_go_enums(obj, raw)
        return obj

    @staticmethod
    def decode_json(cls: type[T], data: bytes | str) -> T:
        """Fast path for trusted JSON (apiserver responses): no structural pass."""
        result: T = _decoder(cls).decode(data)
        return result

    @staticmethod
    def encode(obj: msgspec.Struct) -> dict[str, Any]:
        out: dict[str, Any] = msgspec.to_builtins(obj)
        return out

    @staticmethod
    def encode_json(obj: msgspec.Struct) -> bytes:
        return _ENCODER.encode(obj)

    # -- defaults and validation -------------------------------------------------------------

    def apply_defaults(self, obj: Any, gates: FeatureGates = DEFAULT_GATES) -> None:
        kind = self.kind_of(obj)
        if kind.apply_defaults is not None:
            kind.apply_defaults(obj, gates)
        else:
            schema.apply_schema_defaults(obj)

    def validate(self, obj: Any, gates: FeatureGates = DEFAULT_GATES) -> list[FieldError]:
        return self.kind_of(obj).validate(obj, gates)

    def validate_update(
        self, old: Any, new: Any, gates: FeatureGates = DEFAULT_GATES
    ) -> list[FieldError]:
        """Errors for updating `old` to `new`.

        With `validate_schema` registered: the schema errors of `new`, else the webhook's UPDATE
        rules (`validate_update`; none when the webhook does not handle UPDATE). Without it: all of
        `validate(new)` plus `validate_update`.
        """
        kind = self.kind_of(new)
        if kind.validate_schema is not None:
            errs = kind.validate_schema(new, gates)
            if errs or kind.validate_update is None:
                return errs
            return kind.validate_update(old, new, gates)
        errs = kind.validate(new, gates)
        if kind.validate_update is not None:
            errs += kind.validate_update(old, new, gates)
        return errs

    def admit(
        self,
        data: bytes | str | dict[str, Any],
        gates: FeatureGates = DEFAULT_GATES,
        old: Any = None,
    ) -> Admission:
        """Decode, default and validate as a create (or, with `old`, an update); never raises.

        A kind stored as a CRD goes through the API server's steps with the CRD's structural
        schema (`structural.customresource`), the ones the local API server runs: decoding
        defaults and prunes the raw object; the mutating webhook's defaults follow; the schema
        and scale checks of the result come next, and when they fail the validating webhook is
        never asked, so their errors are the answer.
        """
        try:
            raw = self._parse(data)
            version = _crd_version(raw)
            if version is not None:
                raw = copy.deepcopy(raw)
                customresource.decode(raw, version)
        except DecodeError as err:
            return Admission(None, err.errors or [invalid(Path(), "", str(err))])
        try:
            obj = self.decode(raw, for_create=old is None)
        except DecodeError as err:
            # The mutating webhook lets what it cannot decode through; the schema then speaks.
            schema_errors = [] if version is None else customresource.validate(raw, version)
            return Admission(None, schema_errors or err.errors or [invalid(Path(), "", str(err))])
        except Exception as err:  # a malformed object must never crash admission
            return Admission(None, [FieldError(ErrorType.INTERNAL, "", detail=repr(err))])
        kind = self.kind_of(obj)
        try:
            errors = self._mutate_and_validate(obj, gates, old, version)
        except Exception as err:  # a bug in a rule is reported, not raised
            errors = [FieldError(ErrorType.INTERNAL, "", detail=f"{type(err).__name__}: {err}")]
        return Admission(obj, errors, kind)

    def _mutate_and_validate(
        self, obj: Any, gates: FeatureGates, old: Any, version: customresource.Version | None
    ) -> list[FieldError]:
        """The mutating webhook's defaults (on create), the CRD schema's checks, then the
        validating webhook's rules."""
        if old is None:
            self.apply_defaults(obj, gates)
        else:
            # An update gets the CRD schema's defaults too, but no mutating webhook (Agones'
            # mutate only on CREATE); the stored object is read with those defaults as well.
            schema.apply_schema_defaults(obj)
        if version is not None:
            stored = self.encode(obj)
            customresource.with_stored_status(
                stored, version, None if old is None else self.encode(old)
            )
            customresource.decode(stored, version)
            schema_errors = customresource.validate(stored, version)
            if schema_errors:
                return schema_errors
        if old is None:
            return self.validate(obj, gates)
        current = copy.deepcopy(old)
        schema.apply_schema_defaults(current)
        return self.validate_update(current, obj, gates)


def _crd_version(raw: dict[str, Any]) -> customresource.Version | None:
    api_version, kind = raw.get("apiVersion"), raw.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return None
    return crds.version_of(api_version, kind)


@functools.cache
def _decoder(cls: type[T]) -> msgspec.json.Decoder[T]:
    return msgspec.json.Decoder(cls)


_ENCODER = msgspec.json.Encoder()

SCHEME = Scheme()


def load() -> Scheme:
    """Import every group in `GROUPS` (registering its kinds) and return the scheme."""
    for name in GROUPS:
        importlib.import_module(name, __package__)
    return SCHEME
