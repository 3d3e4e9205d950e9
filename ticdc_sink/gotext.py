"""How Go and TiDB print values as text: the one home of these rules in the package.

TiCDC is written in Go, so its messages hold Go's text of floats and strings, and every
protocol (and the partition hash of `routing`, the JSON text of `events`, the DEFAULT
text of `schema`, the decoders) must write or read exactly that text. Here:

* Floats: `strconv.FormatFloat(v, 'f' | 'e', -1, 32 | 64)` (`format_float`,
  `format_float_exp`, with `shortest_digits` and `to_float32`, Go's float32(v)), and the
  float text of the JSON writers TiCDC uses: `encoding/json` (`json_float`; TiDB's own
  JSON text, `marshalFloat64To` before 2025, is the same) and jsoniter (`jsoniter_float`).
* Strings: Go's `strings.ToLower` (`go_lower`, how TiDB's table filter folds names),
  Go's `string([]byte)` as a JSON writer sees it (`go_string`), Go's
  `strconv.Quote` (`go_quote`, which open-protocol applies to binary strings), and the string
  escaping of each JSON writer TiCDC uses, one function each, named for the library:
  `json_quote` (`encoding/json`, HTML escaping on), `tidb_json_quote` (TiDB's
  `jsonMarshalStringTo`), `jsoniter_quote` (json-iterator, `EscapeHTML:false`) and
  `easyjson_quote` (easyjson's `jwriter`; goccy/go-json escapes the same way for the
  canal-json messages it writes). The character sets the column-wise encoders scan for
  are the tables of these functions (`JSON_ESCAPED`, `JSONITER_ESCAPED`,
  `EASYJSON_ESCAPES`).

This module knows Go's and TiDB's text rules and nothing else: no MySQL types, no wire
format, no third-party library. Floats are finite: NaN and infinity raise ValueError,
for each caller does something else with them (TiCDC's mounter writes 0, JSON writers
refuse them, Go's FormatFloat writes `NaN` / `+Inf`).
"""

from __future__ import annotations

import math
import re
import struct
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache

__all__ = [
    "EASYJSON_ESCAPES",
    "JSONITER_ESCAPED",
    "JSON_ESCAPED",
    "JSON_HTML_ESCAPES",
    "easyjson_quote",
    "format_float",
    "format_float_exp",
    "go_lower",
    "go_quote",
    "go_unquote",
    "go_string",
    "json_float",
    "json_quote",
    "jsoniter_float",
    "jsoniter_quote",
    "shortest_digits",
    "tidb_json_quote",
    "to_float32",
]

# --- Go strconv float formatting ----------------------------------------------------------

_F32 = struct.Struct("<f")
_U32 = struct.Struct("<I")
_F64 = struct.Struct("<d")
_U64 = struct.Struct("<Q")
_FLOAT32_MIN_NORMAL = 2.0**-126


def to_float32(value: float) -> float:
    """Round a float to the nearest float32, as Go's float32(v) conversion.

    Raises:
        OverflowError: the value is beyond the float32 range.
    """
    return _F32.unpack(_F32.pack(value))[0]


def shortest_digits(value: float, bits: int = 64) -> tuple[str, int]:
    """Go's shortest round-trip decimal digits of a finite float: (digits, exponent) with
    value = 0.digits x 10**exponent (as strconv's decimal), digits without trailing zeros.

    `bits=32` treats the value as a float32 (it must be one) and finds the shortest
    string that reads back as the same float32, closest to the value among equally short
    ones: what Go's Ryu-based `FormatFloat(v, fmt, -1, 32)` prints. Zero is ("0", 1).
    """
    value = abs(value)
    if value == 0.0:
        return "0", 1
    text = repr(value) if bits == 64 else _shortest32(value)
    _, digits, exponent = Decimal(text).normalize().as_tuple()
    numerals = "".join(map(str, digits))
    return numerals, len(numerals) + int(exponent)


@lru_cache(maxsize=4096)
def _shortest32(value: float) -> str:
    """The shortest text of a positive float32 that reads back as it, closest first.

    Python's repr does this for float64 (David Gay's dtoa mode 0, like Go's Ryu). For
    float32, where the float32 neighbours are equally far (mantissa bits not all zero),
    the correctly rounded p-digit string is the closest p-digit string, and if it reads
    back so does the (p+1)-digit one (it is at least as close), so a binary search over
    p = 1..9 finds the shortest (9 digits always read back). Reading back goes through
    float64, which is exact unless the float64 lands exactly on a float32 rounding
    boundary (double rounding); that case, and powers of two, take the exact path.
    """
    if not _U32.unpack(_F32.pack(value))[0] & 0x7FFFFF:
        return _shortest32_exact(value)
    low, high = 1, 9
    found = f"{value:.9g}"
    while low <= high:
        precision = (low + high) // 2
        text = f"{value:.{precision}g}"
        wide = float(text)
        try:
            narrow = _F32.unpack(_F32.pack(wide))[0]
        except OverflowError:  # rounded up past the largest float32: does not read back
            low = precision + 1
            continue
        if _on_float32_boundary(wide, narrow):
            return _shortest32_exact(value)
        if narrow == value:
            found, high = text, precision - 1
        else:
            low = precision + 1
    return found


def _on_float32_boundary(wide: float, narrow: float) -> bool:
    # Whether a positive float64 is exactly halfway between two float32s; `narrow` is
    # its float32 rounding. In the normal range a float32 keeps 24 of float64's 53
    # mantissa bits, so a halfway value has exactly bit 28 set among the low 29 bits.
    if wide >= _FLOAT32_MIN_NORMAL:
        return _U64.unpack(_F64.pack(wide))[0] & 0x1FFFFFFF == 0x10000000
    if narrow == wide:
        return False
    step = 1 if wide > narrow else -1
    neighbour = _F32.unpack(_U32.pack(_U32.unpack(_F32.pack(narrow))[0] + step))[0]
    return wide - narrow == neighbour - wide  # exact: close values, short mantissas


@lru_cache(maxsize=1024)
def _shortest32_exact(value: float) -> str:
    # At a power of two the gap below is half the gap above, so a p-digit string on the
    # far side of the value may read back where the nearest one does not: try both
    # neighbours of the rounding and compare exactly.
    bits = _U32.unpack(_F32.pack(value))[0]
    exact = Fraction(value)
    below = Fraction(_F32.unpack(_U32.pack(bits - 1))[0])
    if bits + 1 >= 0x7F800000:
        above = Fraction(2**128)
    else:
        above = Fraction(_F32.unpack(_U32.pack(bits + 1))[0])
    low, high = (exact + below) / 2, (exact + above) / 2
    inclusive = bits % 2 == 0  # round-half-even parsing keeps an even mantissa's bounds

    def reads_back(candidate: Fraction) -> bool:
        if inclusive:
            return low <= candidate <= high
        return low < candidate < high

    for precision in range(1, 10):
        rounded = Decimal(f"{value:.{precision - 1}e}")
        step = Decimal(1).scaleb(rounded.adjusted() - precision + 1)
        best: Decimal | None = None
        best_distance: Fraction | None = None
        for candidate in (rounded, rounded - step, rounded + step):
            if candidate <= 0:
                continue
            fraction = Fraction(candidate)
            if not reads_back(fraction):
                continue
            distance = abs(fraction - exact)
            if best_distance is None or distance < best_distance:
                best, best_distance = candidate, distance
        if best is not None:
            return str(best)
    raise AssertionError(f"no float32 representation found for {value!r}")  # unreachable


def format_float(value: float, bits: int = 64) -> str:
    """Go `strconv.FormatFloat(v, 'f', -1, bits)`: shortest round-trip digits in plain
    notation, no exponent, no trailing ".0" (3.14, 95, 0.0000001, 1000000000000000000000;
    negative zero is "-0"). With bits=32 the value is first rounded to float32.

    Raises:
        ValueError: NaN or infinity (callers replace them as TiCDC's mounter does).
        OverflowError: bits=32 and the value is beyond the float32 range.
    """
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"cannot format {value!r} as a MySQL float")
    value = float(value)
    if bits == 32:
        value = to_float32(value)
        text = "0" if value == 0 else _shortest32(abs(value))
        if value < 0 or (value == 0 and math.copysign(1.0, value) < 0):
            text = "-" + text
    else:
        text = repr(value)
    if "e" not in text and "E" not in text:
        # repr and %g already print the shortest digits in plain form here.
        return text[:-2] if text.endswith(".0") else text
    digits, exponent = shortest_digits(value, bits)
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if exponent <= 0:
        return f"{sign}0.{'0' * -exponent}{digits}"
    if exponent >= len(digits):
        return f"{sign}{digits}{'0' * (exponent - len(digits))}"
    return f"{sign}{digits[:exponent]}.{digits[exponent:]}"


def format_float_exp(value: float, bits: int = 64) -> str:
    """Go `strconv.FormatFloat(v, 'e', -1, bits)`: "d.ddde±XX" with at least two exponent
    digits (1e-07, 1.5e+21, 0e+00).

    Raises:
        ValueError: NaN or infinity.
    """
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"cannot format {value!r} as a Go float")
    if bits == 32:
        value = to_float32(value)
    digits, exponent = shortest_digits(value, bits)
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    power = 0 if digits == "0" else exponent - 1
    return f"{sign}{mantissa}e{'-' if power < 0 else '+'}{abs(power):02d}"


# Go's JSON writers compare float32(abs) with the constants 1e-6 and 1e21 as float32.
_F32_LOW = to_float32(1e-6)
_F32_HIGH = to_float32(1e21)


def _json_number(value: float, bits: int) -> str:
    """The float text Go's JSON writers share: 'f' form, or 'e' form for 0 < |v| < 1e-6
    and |v| >= 1e21 (compared as float32 for bits=32)."""
    if bits == 32:
        value = to_float32(value)
        low, high = _F32_LOW, _F32_HIGH
    else:
        low, high = 1e-6, 1e21
    magnitude = abs(value)
    if magnitude != 0 and (magnitude < low or magnitude >= high):
        return format_float_exp(value, bits)
    return format_float(value, bits)


def json_float(value: float, bits: int = 64) -> str:
    """Go `encoding/json` text of a float64 (bits=64) or float32 (bits=32): shortest
    digits, 'f' notation unless 0 < |v| < 1e-6 or |v| >= 1e21, then 'e' notation with a
    negative exponent's leading zero dropped (1e-7, 1e+21). TiDB's JSON text of a
    float (`marshalFloat64To`, before 2025) is the same.

    Raises:
        ValueError: NaN or infinity (Go's json.Marshal fails with UnsupportedValueError).
    """
    if math.isnan(value) or math.isinf(value):
        raise ValueError(f"Go JSON cannot write {value!r}")
    text = _json_number(value, bits)
    if text[-4:-1] == "e-0":  # Go: "clean up e-09 to e-9"
        text = text[:-2] + text[-1]
    return text


def jsoniter_float(value: float, bits: int = 64) -> str:
    """jsoniter `WriteFloat64` / `WriteFloat32`: as `json_float`, but the 'e' form keeps
    strconv's two-digit exponent (1e-07).

    Raises:
        ValueError: NaN or infinity (jsoniter refuses them too).
        OverflowError: bits=32 and the value is beyond the float32 range.
    """
    if bits == 64:
        text = repr(value)  # Python's repr is Go's shortest round-trip digits
        if "e" not in text and "n" not in text:  # plain: zero or 1e-4 <= |v| < 1e16
            return text[:-2] if text.endswith(".0") else text
    return _json_number(value, bits)


# --- Go strings and JSON string escaping ---------------------------------------------------


def go_string(value: str | bytes) -> str:
    """The text Go's JSON writer produces for a Go string holding these bytes (a str is
    taken as its UTF-8 bytes, lone surrogates included): each byte of an invalid UTF-8
    sequence becomes one U+FFFD, as Go's utf8.DecodeRune returns (RuneError, 1) for it."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            data = value.encode("utf-8", "surrogatepass")
    else:
        data = bytes(value)
    parts: list[str] = []
    while True:
        try:
            parts.append(data.decode("utf-8"))
            return "".join(parts)
        except UnicodeDecodeError as exc:
            parts.append(data[: exc.start].decode("utf-8"))
            parts.append("\ufffd" * (exc.end - exc.start))
            data = data[exc.end :]


_QUOTE_SHORT = {0x07: "\\a", 0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t"}
_QUOTE_SHORT.update({0x0B: "\\v", 0x22: '\\"', 0x5C: "\\\\"})
# Printable ASCII without `"` and `\\`: Quote copies such bytes as they are.
_QUOTE_PLAIN = re.compile(rb"[ !#-\[\]-~]*")


def go_quote(data: bytes) -> str:
    """Go's `strconv.Quote(string(data))` without its surrounding quotes: printable runes
    (Go's `unicode.IsPrint`, Python's `str.isprintable`) as they are, `"` and `\\` escaped,
    `\\a \\b \\f \\n \\r \\t \\v` short, other ASCII controls and each byte of invalid UTF-8
    as `\\xNN`, other unprintable runes as `\\uNNNN` or `\\UNNNNNNNN` (lowercase hex)."""
    if _QUOTE_PLAIN.fullmatch(data):
        return data.decode("ascii")
    out: list[str] = []
    for text, bad in _utf8_runs(data):
        for char in text:
            code = ord(char)
            short = _QUOTE_SHORT.get(code)
            if short is not None:
                out.append(short)
            elif char.isprintable():
                out.append(char)
            elif code < 0x80:
                out.append(f"\\x{code:02x}")
            elif code < 0x10000:
                out.append(f"\\u{code:04x}")
            else:
                out.append(f"\\U{code:08x}")
        out.extend(f"\\x{b:02x}" for b in bad)
    return "".join(out)


_UNQUOTE = re.compile(
    r'\\(?:([abfnrtv\\"\'])|x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|([0-7]{3}))'
    r"|\\|\"",
)
_UNQUOTE_SHORT = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11}


def go_unquote(text: str) -> bytes:
    """The bytes `go_quote` wrote as `text` (Go's `strconv.Unquote` of `"text"`).

    Raises:
        ValueError: an escape Go does not know, or an unescaped `"`.
    """
    out = bytearray()
    at = 0
    for match in _UNQUOTE.finditer(text):
        out += text[at : match.start()].encode("utf-8", "surrogatepass")
        at = match.end()
        short, hex2, hex4, hex8, octal = match.groups()
        if short is not None:
            out.append(_UNQUOTE_SHORT.get(short, ord(short)))
        elif hex2 is not None:
            out.append(int(hex2, 16))
        elif octal is not None:
            value = int(octal, 8)
            if value > 255:
                raise ValueError(f"octal escape \\{octal} is above 255")
            out.append(value)
        elif hex4 is not None or hex8 is not None:
            code = int(hex4 or hex8, 16)
            if code > 0x10FFFF or 0xD800 <= code < 0xE000:
                raise ValueError(f"escape of U+{code:X} is not a valid rune")
            out += chr(code).encode("utf-8")
        else:
            raise ValueError(f"bad escape or quote at offset {match.start()}")
    return bytes(out + text[at:].encode("utf-8", "surrogatepass"))


def _utf8_runs(data: bytes) -> list[tuple[str, bytes]]:
    """`data` as (valid UTF-8 text, the invalid bytes after it) pairs, in order; Go's
    decoder takes each byte of an invalid sequence as one error, as Python's does."""
    runs: list[tuple[str, bytes]] = []
    while True:
        try:
            runs.append((data.decode("utf-8"), b""))
            return runs
        except UnicodeDecodeError as exc:
            runs.append((data[: exc.start].decode("utf-8"), data[exc.start : exc.end]))
            data = data[exc.end :]


#: What Go's encoding/json escapes that a plain JSON writer (orjson) writes raw: the HTML
#: characters (HTML escaping is on by default) and the JavaScript line separators.
JSON_HTML_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
_JSON_TABLE: dict[int, str] = {c: f"\\u{c:04x}" for c in range(0x20)}
_JSON_TABLE.update({0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r"})
_JSON_TABLE.update({0x22: '\\"', 0x5C: "\\\\"})
_JSON_TABLE.update({ord(c): escaped for c, escaped in JSON_HTML_ESCAPES.items()})
#: The characters Go's encoding/json escapes (Go 1.22+, HTML escaping on); all others,
#: DEL and non-ASCII included, are written raw.
JSON_ESCAPED = "".join(map(chr, sorted(_JSON_TABLE)))
_JSON_NEEDS_ESCAPE = re.compile("[" + re.escape(JSON_ESCAPED) + "]")


def json_quote(text: str) -> str:
    """`text` as Go's `json.Marshal` writes a string, quotes included: `"` `\\` and
    `\\b \\f \\n \\r \\t` short, other C0 controls `\\u00xx`, `<` `>` `&` U+2028 U+2029 as
    `\\u....`, lone surrogates as `go_string` reads them."""
    text = go_string(text)
    if _JSON_NEEDS_ESCAPE.search(text) is None:
        return '"' + text + '"'
    return '"' + text.translate(_JSON_TABLE) + '"'


_TIDB_JSON_ESCAPE = re.compile('[\\x00-\\x1f"\\\\\u2028\u2029\ud800-\udfff]')
# TiDB `jsonMarshalStringTo` before 2025: only these five have short forms; \b and \f are
# written `\u0008` and `\u000c` like every other C0 byte. `<`, `>`, `&` and DEL stay raw.
_TIDB_JSON_SHORT = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _tidb_json_escape(match: re.Match[str]) -> str:
    char = match.group()
    short = _TIDB_JSON_SHORT.get(char)
    if short is not None:
        return short
    if "\ud800" <= char <= "\udfff":
        # Go's decoder turns a lone surrogate escape into U+FFFD, which it writes raw.
        return "\ufffd"
    return f"\\u{ord(char):04x}"


def tidb_json_quote(text: str) -> str:
    """TiDB `jsonMarshalStringTo` (the TiDB module TiCDC v8.5 links): Go JSON escaping
    without HTML escapes, quotes included."""
    return '"' + _TIDB_JSON_ESCAPE.sub(_tidb_json_escape, text) + '"'


#: The characters json-iterator escapes with `EscapeHTML:false`: C0 controls, quote,
#: backslash (everything else, `<>&`, U+2028/9 and non-ASCII included, is written raw).
JSONITER_ESCAPED = "".join(map(chr, range(0x20))) + '"\\'
_JSONITER_NEEDS_ESCAPE = re.compile("[" + re.escape(JSONITER_ESCAPED) + "]")
_JSONITER_TABLE = {chr(i): f"\\u{i:04x}" for i in range(0x20)}
_JSONITER_TABLE.update({'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"})


def _jsoniter_escape(match: re.Match[str]) -> str:
    return _JSONITER_TABLE[match.group()]


def jsoniter_quote(text: str) -> str:
    """A JSON string as jsoniter (`EscapeHTML:false`) writes it: `"` `\\` and `\\n \\r \\t`
    short, other C0 controls `\\u00xx`; `<>&`, U+2028/2029 and non-ASCII raw."""
    # Fast path: printable text without quote or backslash needs no escaping (C0 controls
    # are not printable; the few non-printable non-ASCII characters take the regex).
    if '"' not in text and "\\" not in text and text.isprintable():
        return '"' + text + '"'
    if _JSONITER_NEEDS_ESCAPE.search(text) is None:
        return '"' + text + '"'
    return '"' + _JSONITER_NEEDS_ESCAPE.sub(_jsoniter_escape, text) + '"'


_EASYJSON_SHORT = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r", 0x22: '\\"', 0x5C: "\\\\"}
#: easyjson's `Writer.String` escapes by code point (a `str.translate` table): `"` `\\`
#: `\\t` `\\n` `\\r` short, every other C0 control `\\u00xx` (so `\\b` is `\\u0008`), `<`
#: `>` `&` U+2028 U+2029 as `\\u....`; each byte of invalid UTF-8 becomes `\\ufffd`.
#: Lone surrogates stand for invalid UTF-8: text bytes are decoded with
#: "surrogateescape", which maps each invalid byte to one of U+DC80..U+DCFF (one
#: `\\ufffd`); any other lone surrogate would be 3 UTF-8 bytes in Go, each invalid.
EASYJSON_ESCAPES: dict[int, str] = {c: _EASYJSON_SHORT.get(c, f"\\u{c:04x}") for c in range(0x20)}
EASYJSON_ESCAPES.update({0x22: '\\"', 0x5C: "\\\\"})
EASYJSON_ESCAPES.update({ord(c): f"\\u{ord(c):04x}" for c in "<>&\u2028\u2029"})
EASYJSON_ESCAPES.update({c: "\\ufffd" for c in range(0xDC80, 0xDD00)})
EASYJSON_ESCAPES.update(
    {c: "\\ufffd" * 3 for c in range(0xD800, 0xE000) if not 0xDC80 <= c < 0xDD00}
)
_EASYJSON_NEEDS_ESCAPE = re.compile('[\x00-\x1f"\\\\<>&\u2028\u2029\ud800-\udfff]')


def easyjson_quote(text: str) -> str:
    """`text` as easyjson's `jwriter.Writer.String` writes it, quotes included (see
    `EASYJSON_ESCAPES`); goccy/go-json writes canal-json's WATERMARK and DDL strings the
    same way."""
    if _EASYJSON_NEEDS_ESCAPE.search(text) is None:
        return '"' + text + '"'
    return '"' + text.translate(EASYJSON_ESCAPES) + '"'


def go_lower(text: str) -> str:
    """Go's `strings.ToLower`: each character by its simple lowercase mapping
    (`unicode.ToLower`). Python's `str.lower` takes the full mappings where they differ:
    U+0130 (capital I with dot) becomes two characters, and a word-final capital sigma
    becomes the final sigma; one character at a time, only U+0130 differs."""
    if text.isascii():
        return text.lower()
    return "".join("i" if char == "\u0130" else char.lower() for char in text)
