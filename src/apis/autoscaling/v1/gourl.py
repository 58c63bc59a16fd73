"""Whether Go's `net/url.Parse` accepts a URL: the check behind Agones' `url is not valid`.

Go's parser is lenient (most strings are a valid relative reference); it refuses control
characters, a leading `:` (missing scheme), a colon in the first segment of a scheme-less path,
bad `%` escapes, bad user info, an unclosed IPv6 literal and a non-numeric port. `url_parse_error`
returns Go's error text for those, `None` when Go would accept the URL.
"""

from __future__ import annotations

import re

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+\-.]*")
_HEX = "0123456789abcdefABCDEF"
_USERINFO_OK = re.compile(r"[A-Za-z0-9\-._:~!$&'()*+,;=%@]*")


def _check_escapes(text: str) -> str | None:
    i = 0
    while i < len(text):
        if text[i] == "%":
            chunk = text[i : i + 3]
            if len(chunk) < 3 or chunk[1] not in _HEX or chunk[2] not in _HEX:
                return f'invalid URL escape "{chunk}"'
            i += 3
        else:
            i += 1
    return None


def _parse_host(host: str) -> str | None:
    if host.startswith("["):
        end = host.rfind("]")
        if end < 0:
            return "missing ']' in host"
        port = host[end + 1 :]
        if port and not ((port.startswith(":") and port[1:].isdigit()) or port == ":"):
            return f'invalid port "{port}" after host'
        return None
    colon = host.rfind(":")
    if colon >= 0:
        port = host[colon:]
        if not (port == ":" or (port[1:].isascii() and port[1:].isdigit())):
            return f'invalid port "{port}" after host'
    return _check_escapes(host)


def url_parse_error(raw: str) -> str | None:
    """Go's `url.Parse(raw)` error text (without the `parse "<url>": ` prefix), or None."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in raw):
        return "net/url: invalid control character in URL"
    rest, _, fragment = raw.partition("#")
    if rest == "*":
        return None
    scheme = ""
    m = _SCHEME.match(rest)
    if rest.startswith(":"):
        return "missing protocol scheme"
    if m and rest[m.end() : m.end() + 1] == ":":
        scheme = m.group(0)
        rest = rest[m.end() + 1 :]
    rest, _, query = rest.partition("?")
    del query  # Go keeps the raw query without checking it
    if not rest.startswith("/"):
        if scheme:
            return _check_escapes(fragment)  # opaque URL
        first = rest.split("/", 1)[0]
        if ":" in first:
            return "first path segment in URL cannot contain colon"
    if (scheme or not rest.startswith("///")) and rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        rest = slash + path
        userinfo, at, host = authority.rpartition("@")
        if at:
            if not _USERINFO_OK.fullmatch(userinfo):
                return "net/url: invalid userinfo"
            err = _check_escapes(userinfo)
            if err:
                return err
        err = _parse_host(host)
        if err:
            return err
    return _check_escapes(rest) or _check_escapes(fragment)
