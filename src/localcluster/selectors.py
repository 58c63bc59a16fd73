"""Label and field selectors, parsed and matched as apimachinery's `labels` and `fields` packages do.

Label selectors support every operator (`=`, `==`, `!=`, `in`, `notin`, exists, `!` not-exists, `>`,
`<`); field selectors support `=`, `==` and `!=` over the fields a resource declares. Parse errors raise
`ValueError` with a message fit for a 400 BadRequest.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

_KEY_RE = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
)
_VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


@dataclass(frozen=True)
class Requirement:
    key: str
    op: str  # "=", "!=", "in", "notin", "exists", "!", "gt", "lt"
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.op
        if op == "exists":
            return self.key in labels
        if op == "!":
            return self.key not in labels
        if op in ("=", "in"):
            return self.key in labels and labels[self.key] in self.values
        if op in ("!=", "notin"):
            return self.key not in labels or labels[self.key] not in self.values
        if self.key not in labels:
            return False
        try:
            have = int(labels[self.key])
        except ValueError:
            return False
        want = int(self.values[0])
        return have > want if op == "gt" else have < want


LabelSelector = tuple[Requirement, ...]

_TOKEN_RE = re.compile(r"\s*(!=|==|=|\(|\)|,|!|>|<|[^\s!=(),<>]+)")


def _tokens(text: str) -> list[str]:
    out = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN_RE.match(text, pos)
        if m is None or not m.group(1):
            break
        out.append(m.group(1))
        pos = m.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return out


def _check_key(key: str) -> None:
    if not _KEY_RE.match(key):
        raise ValueError(
            f'unable to parse requirement: key: Invalid value: "{key}": name part must consist of '
            "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
            "character"
        )


def _check_value(value: str) -> None:
    if len(value) > 63 or not _VALUE_RE.match(value):
        raise ValueError(
            f'unable to parse requirement: values[0][key]: Invalid value: "{value}": a valid label '
            "must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
            "must start and end with an alphanumeric character"
        )


def parse_label_selector(text: str) -> LabelSelector:
    """Parse `app=x,tier in (a,b),!canary` into requirements; '' selects everything."""
    toks = _tokens(text)
    reqs: list[Requirement] = []
    i = 0

    def take() -> str:
        nonlocal i
        if i >= len(toks):
            raise ValueError(f"found '', expected: identifier after '{toks[-1] if toks else ''}'")
        i += 1
        return toks[i - 1]

    while i < len(toks):
        tok = take()
        if tok == "!":
            key = take()
            _check_key(key)
            reqs.append(Requirement(key, "!"))
        else:
            key = tok
            _check_key(key)
            if i >= len(toks) or toks[i] == ",":
                reqs.append(Requirement(key, "exists"))
            else:
                op = take()
                if op in ("=", "==", "!="):
                    value = toks[i] if i < len(toks) and toks[i] != "," else ""
                    if value:
                        i += 1
                    _check_value(value)
                    reqs.append(Requirement(key, "!=" if op == "!=" else "=", (value,)))
                elif op in ("in", "notin"):
                    if take() != "(":
                        raise ValueError(f"found '{toks[i - 1]}', expected: '('")
                    values: list[str] = []
                    while True:
                        t = take()
                        if t == ")":
                            break
                        if t == ",":
                            if not values or toks[i - 2] == ",":
                                values.append("")
                            continue
                        _check_value(t)
                        values.append(t)
                    reqs.append(Requirement(key, op, tuple(values)))
                elif op in (">", "<"):
                    value = take()
                    try:
                        int(value)
                    except ValueError:
                        raise ValueError(
                            f"unable to parse requirement: for 'Gt', 'Lt' operators, the value must "
                            f"be an integer: {value!r}"
                        ) from None
                    reqs.append(Requirement(key, "gt" if op == ">" else "lt", (value,)))
                else:
                    raise ValueError(f"found '{op}', expected: '=', '!=', '==', 'in', notin'")
        if i < len(toks):
            if toks[i] != ",":
                raise ValueError(f"found '{toks[i]}', expected: ',' or 'end of string'")
            i += 1
    return tuple(reqs)


def labels_match(selector: LabelSelector, labels: Mapping[str, str] | None) -> bool:
    labels = labels or {}
    return all(r.matches(labels) for r in selector)


def selector_from_label_selector(sel: Mapping[str, Any] | None) -> LabelSelector:
    """A metav1.LabelSelector (matchLabels/matchExpressions) as requirements."""
    if not sel:
        return ()
    reqs = [Requirement(k, "=", (v,)) for k, v in (sel.get("matchLabels") or {}).items()]
    ops = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}
    for expr in sel.get("matchExpressions") or []:
        reqs.append(
            Requirement(expr["key"], ops[expr["operator"]], tuple(expr.get("values") or ()))
        )
    return tuple(reqs)


# --- field selectors ---

FieldSelector = tuple[tuple[str, str, str], ...]  # (field, "=" | "!=", value)


def _split_unescaped(text: str, sep: str) -> list[str]:
    parts, cur, esc = [], [], False
    for ch in text:
        if esc:
            cur.append(ch)
            esc = False
        elif ch == "\\":
            cur.append(ch)
            esc = True
        elif ch == sep:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


def parse_field_selector(text: str) -> FieldSelector:
    """Parse `metadata.name=x,status.phase!=Running`; raises ValueError when malformed."""
    out = []
    for part in _split_unescaped(text, ","):
        if not part:
            continue
        for op in ("!=", "==", "="):
            idx = part.find(op)
            if idx > 0:
                field_name, value = part[:idx], part[idx + len(op) :]
                out.append((field_name.strip(), "!=" if op == "!=" else "=", _unescape(value)))
                break
        else:
            raise ValueError(f"invalid selector: '{text}'; can't understand '{part}'")
    return tuple(out)


FieldGetter = Callable[[Mapping[str, Any]], str]


def fields_match(
    selector: FieldSelector, getters: Mapping[str, FieldGetter], obj: Mapping[str, Any]
) -> bool:
    for name, op, value in selector:
        have = getters[name](obj)
        if (have == value) != (op == "="):
            return False
    return True
