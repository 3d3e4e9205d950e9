"""What is secret, and how secrets are masked: option and librdkafka setting names that
hold secrets (`is_secret`), settings with their secret values masked, URIs and URLs with
their credentials masked (`mask_uri`, `redact_url`).

Secrets never appear in `repr`, `str`, errors or logs: the config fields' `repr`, the
option errors (`ticdc_sink.options`), the producer's and the claim-check store's logs all
mask through here. Knows no option beyond the secret ones' names; imports nothing of the
sink, so every layer may use it.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping

__all__ = [
    "MASK",
    "is_secret",
    "mask_uri",
    "masked",
    "masked_repr",
    "masked_uri_repr",
    "redact_url",
]

#: What a secret is shown as.
MASK = "***"

_SECRET_OPTIONS = frozenset({"sasl-password", "sasl-oauth-client-secret", "sasl-gssapi-password"})
_SECRET_MARKERS = ("password", "secret", "jaas", "key.pem", "oauthbearer.config")


def is_secret(name: str) -> bool:
    """Whether an option or librdkafka setting holds a secret (masked everywhere)."""
    name = name.lower()
    return name in _SECRET_OPTIONS or any(marker in name for marker in _SECRET_MARKERS)


def masked(mapping: Mapping[str, str]) -> dict[str, str]:
    """`mapping` with the values of its secret names masked."""
    return {k: (MASK if is_secret(k) else v) for k, v in mapping.items()}


def masked_repr(mapping: Mapping[str, str]) -> str:
    """The `repr` of a settings field: its secret values masked."""
    return repr(masked(mapping))


def mask_uri(uri: str) -> str:
    """`uri` with its user info and query values masked (TiCDC `MaskSensitiveDataInURI`):
    storage URIs may carry access keys there."""
    try:
        parts = urllib.parse.urlsplit(uri)
    except ValueError:
        return "(unparseable URI)"
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rsplit('@', 1)[1]}"
    query = "&".join(
        f"{name}={MASK}" for name, _ in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    )
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def masked_uri_repr(value: str | None) -> str:
    """The `repr` of a storage URI field (`mask_uri`)."""
    return repr(None if value is None else mask_uri(value))


def redact_url(url: str) -> str:
    """`url` with any `user:password@` part masked, for messages and logs."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return "(unparseable URL)"
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[-1]
    return urllib.parse.urlunsplit(
        (parts.scheme, f"{MASK}@{host}", parts.path, parts.query, parts.fragment)
    )
