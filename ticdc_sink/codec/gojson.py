"""Go `encoding/json` compatible output, fast: orjson writes, a byte pass fixes escaping.

Go's `json.Marshal` (Go 1.22+, reference §1.8) and orjson agree on `"` `\\`, the short
forms `\\b \\f \\n \\r \\t`, other C0 controls as lowercase `\\u00xx`, DEL and non-ASCII
UTF-8 written raw, and compact separators. They differ in four places, handled here:

* HTML characters: Go writes `<` `>` `&` as `\\u003c` `\\u003e` `\\u0026`; orjson raw.
* U+2028 / U+2029: Go writes `\\u2028` / `\\u2029`; orjson raw.
* Invalid UTF-8: Go writes one U+FFFD per invalid byte; orjson refuses lone surrogates.
  Strings with lone surrogates are rewritten to Go's result (`gotext.go_string`) before
  writing.
* Floats: Go uses shortest digits in 'f' form, switching to 'e' below 1e-6 and from 1e21
  with `e-07` cleaned to `e-7`; wrap floats in `GoFloat` to get Go's text
  (`gotext.json_float`, written as an `orjson.Fragment`, raw JSON).

The rules are `ticdc_sink.gotext`'s (`json_quote` writes one string the same way); this
module is the fast path over orjson. The first two can only occur inside JSON strings
(never in numbers or punctuation), so a byte replacement over the whole document is
exact. Dict key order is kept: callers that mirror a Go map sort keys themselves (Go
sorts map keys bytewise, which for valid strings is Python's code point order).
"""

from __future__ import annotations

import re
from typing import Any

import attrs
import orjson

from ticdc_sink.gotext import JSON_HTML_ESCAPES, go_string, json_float

__all__ = ["GoFloat", "dumps"]

_ESCAPES = {c.encode(): escaped.encode() for c, escaped in JSON_HTML_ESCAPES.items()}
_UNSAFE = re.compile(b"|".join(map(re.escape, _ESCAPES)))


def _escape(match: re.Match[bytes]) -> bytes:
    return _ESCAPES[match.group()]


@attrs.frozen
class GoFloat:
    """A float that `dumps` writes as Go's encoding/json writes a float64 (bits=64) or a
    float32 (bits=32)."""

    value: float
    bits: int = 64


def dumps(obj: Any) -> bytes:
    """Serialise like Go's `json.Marshal` of the equivalent Go value.

    Supports dict (str keys, order kept), list/tuple, str, int (up to uint64), bool, None
    and `GoFloat`. The object must hold no plain Python float: orjson's float text differs
    from Go's (95.0 vs 95) and, for speed, this is not checked.

    Raises:
        TypeError: an unsupported value or an int beyond 64 bits.
        ValueError: a GoFloat that is NaN or infinite.
    """
    try:
        out = _dump(obj, _go_float_fragment)
    except orjson.JSONEncodeError as exc:
        raise TypeError(f"cannot write Go JSON: {exc}") from exc
    # Five substring scans are several times faster than one regex search.
    if (
        b"<" in out
        or b">" in out
        or b"&" in out
        or b"\xe2\x80\xa8" in out
        or b"\xe2\x80\xa9" in out
    ):
        return _UNSAFE.sub(_escape, out)
    return out


def _go_float_fragment(value: object) -> orjson.Fragment:
    if not isinstance(value, GoFloat):
        raise TypeError(f"Go JSON cannot write a {type(value).__name__}")
    return orjson.Fragment(json_float(value.value, value.bits))


def _dump(obj: Any, default: Any) -> bytes:
    try:
        return orjson.dumps(obj, default=default)
    except orjson.JSONEncodeError as exc:
        if "surrogates" not in str(exc):
            raise
        return orjson.dumps(_without_surrogates(obj), default=default)


def _without_surrogates(obj: Any) -> Any:
    if isinstance(obj, str):
        return go_string(obj)
    if isinstance(obj, dict):
        return {go_string(k): _without_surrogates(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_without_surrogates(v) for v in obj]
    return obj
