"""Name, label and annotation rules with Kubernetes' exact messages.

The `is_*` functions mirror apimachinery's `pkg/util/validation` and return a list of message strings
(empty when valid). The `validate_*` functions mirror `pkg/api/validation` / `apis/meta/v1/validation`
and return `FieldError`s. Map keys are visited in sorted order, so error lists are deterministic (Go
iterates maps randomly; compare error lists as sets where order is not the point).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..field import FieldError, Path, invalid, required, too_long

DNS1123_LABEL_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
LABEL_VALUE_MAX_LENGTH = 63
QUALIFIED_NAME_MAX_LENGTH = 63
TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * (1 << 10)
IS_NEGATIVE_ERROR_MSG = "must be greater than or equal to 0"

_QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QUALIFIED_NAME_ERR = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)
_LABEL_VALUE_FMT = f"({_QUALIFIED_NAME_FMT})?"
_LABEL_VALUE_ERR = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_ERR = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_FMT = f"{_DNS1123_LABEL_FMT}(\\.{_DNS1123_LABEL_FMT})*"
_DNS1123_SUBDOMAIN_ERR = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)

_QUALIFIED_NAME = re.compile(_QUALIFIED_NAME_FMT)
_LABEL_VALUE = re.compile(_LABEL_VALUE_FMT)
_DNS1123_LABEL = re.compile(_DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN = re.compile(_DNS1123_SUBDOMAIN_FMT)


def _full(pattern: re.Pattern[str], value: str) -> bool:
    # Go's regexp `$` never matches before a trailing newline; `fullmatch` agrees.
    return pattern.fullmatch(value) is not None


def max_len_error(length: int) -> str:
    return f"must be no more than {length} bytes"


def empty_error() -> str:
    return "must be non-empty"


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """Go's `RegexError`: the message, examples in quotes, then the regex used."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def is_dns1123_label(value: str) -> list[str]:
    errs: list[str] = []
    if len(value.encode()) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _full(_DNS1123_LABEL, value):
        if _full(_DNS1123_SUBDOMAIN, value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_DNS1123_LABEL_ERR, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    errs: list[str] = []
    if len(value.encode()) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _full(_DNS1123_SUBDOMAIN, value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_ERR, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_qualified_name(value: str) -> list[str]:
    """A label key / annotation key: optional DNS-subdomain prefix and `/`, then a name."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part " + empty_error())
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return [
            "a qualified name "
            + regex_error(_QUALIFIED_NAME_ERR, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part " + empty_error())
    elif len(name.encode()) > QUALIFIED_NAME_MAX_LENGTH:
        errs.append("name part " + max_len_error(QUALIFIED_NAME_MAX_LENGTH))
    if not _full(_QUALIFIED_NAME, name):
        errs.append(
            "name part "
            + regex_error(_QUALIFIED_NAME_ERR, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
        )
    return errs


def is_valid_label_value(value: str) -> list[str]:
    errs: list[str] = []
    if len(value.encode()) > LABEL_VALUE_MAX_LENGTH:
        errs.append(max_len_error(LABEL_VALUE_MAX_LENGTH))
    if not _full(_LABEL_VALUE, value):
        errs.append(regex_error(_LABEL_VALUE_ERR, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def validate_label_name(name: str, path: Path) -> list[FieldError]:
    return [invalid(path, name, msg) for msg in is_qualified_name(name)]


def validate_labels(labels: Mapping[str, str] | None, path: Path) -> list[FieldError]:
    """`ValidateLabels`: every key a qualified name, every value a label value (errors at `path`)."""
    errs: list[FieldError] = []
    labels = labels or {}
    for key in sorted(labels):
        errs.extend(validate_label_name(key, path))
        errs.extend(invalid(path, labels[key], msg) for msg in is_valid_label_value(labels[key]))
    return errs


def annotations_size(annotations: Mapping[str, str]) -> int:
    return sum(len(k.encode()) + len(v.encode()) for k, v in annotations.items())


def validate_annotations(annotations: Mapping[str, str] | None, path: Path) -> list[FieldError]:
    """`ValidateAnnotations`: keys are qualified names (case-insensitive), total size ≤ 256 KiB."""
    errs: list[FieldError] = []
    annotations = annotations or {}
    for key in sorted(annotations):
        errs.extend(invalid(path, key, msg) for msg in is_qualified_name(key.lower()))
    if annotations_size(annotations) > TOTAL_ANNOTATION_SIZE_LIMIT_B:
        errs.append(too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT_B))
    return errs


def validate_object_meta_name(
    name: str | None, generate_name: str | None, path: Path
) -> list[FieldError]:
    """The apiserver's create-time name rules for a namespaced custom resource (DNS-1123 subdomain)."""
    if not name:
        if not generate_name:
            return [required(path.child("name"), "name or generateName is required")]
        # A prefix may end in '-': Go masks that dash before checking (`maskTrailingDash`).
        masked = generate_name[:-1] + "a" if generate_name.endswith("-") else generate_name
        return [
            invalid(path.child("generateName"), generate_name, m)
            for m in is_dns1123_subdomain(masked)
        ]
    return [invalid(path.child("name"), name, m) for m in is_dns1123_subdomain(name)]
