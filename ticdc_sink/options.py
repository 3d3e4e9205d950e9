"""How an option is declared, parsed and reported: the machinery every option part
(`ticdc_sink.codec.config.CodecConfig`, the parts in `ticdc_sink.config`) is built with.

`option_field` is an option's one declaration: an attrs field carrying its name, default,
parser, documentation line, the TiCDC settings it honours and the first TiCDC release
that has it (`metadata`), from which the docs and the checks are made. A parser takes
raw (string) or typed values and raises `Invalid` with what is allowed; the field turns
that into a `ConfigError` naming the option and its value (masked when secret: see
`ticdc_sink.redaction`). Also here: the value parsers several parts share, the text
helpers of option errors, and `FrozenMap`, the hashable mapping of config fields.

Knows no part and no protocol: the codec's config and the sink's config both build on it.
"""

from __future__ import annotations

import difflib
import enum
import json
import re
import urllib.parse
import zoneinfo
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

import attrs

from ticdc_sink.errors import ConfigError
from ticdc_sink.redaction import MASK, is_secret, mask_uri, redact_url
from ticdc_sink.ticdc_version import TiCDCVersion

__all__ = [
    "FALSE_TEXTS",
    "INT32_MAX",
    "INT64_MAX",
    "TRUE_TEXTS",
    "FrozenMap",
    "Invalid",
    "and_list",
    "check_since",
    "choices_hint",
    "enum_parser",
    "int_parser",
    "option_error",
    "option_field",
    "option_text",
    "or_list",
    "parse_bool",
    "parse_name",
    "parse_names",
    "parse_opt_str",
    "parse_storage_uri",
    "parse_string_map",
    "parse_zone",
    "shown_value",
    "spell_option",
    "too_new_error",
]

#: Bounds of Go's int32 and int64, the types TiCDC reads its settings into.
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1


class FrozenMap(Mapping[str, str]):
    """An immutable str -> str mapping that hashes and pickles, for config fields."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, str] | None = None) -> None:
        self._data = dict(data or {})

    def __getitem__(self, key: str) -> str:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        return hash(frozenset(self._data.items()))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return self._data == dict(other)
        return NotImplemented

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenMap, (self._data,))

    def __repr__(self) -> str:
        return f"FrozenMap({self._data!r})"


class Invalid(ValueError):
    """Raised by a parser; the field wrapper turns it into a ConfigError naming the option."""

    def __init__(self, allowed: str, choices: tuple[str, ...] | None = None) -> None:
        super().__init__(allowed)
        self.allowed = allowed
        self.choices = choices


def shown_value(option: str, value: object) -> str:
    """`value` as an error about `option` may show it: secrets masked, credentials in
    URLs masked, at most 80 characters."""
    if is_secret(option) or option == "kafka.*":
        return MASK
    if option == "schema-registry":
        value = redact_url(str(value))
    elif option == "claim-check-storage-uri":
        value = mask_uri(str(value))
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def option_error(
    option: str, value: object, allowed: str, choices: tuple[str, ...] | None = None
) -> ConfigError:
    """The error of `option` set to `value`: `option 'x' is 'v'; <allowed>`."""
    shown = shown_value(option, value)
    return ConfigError(
        f"option '{spell_option(option)}' is '{shown}'; {allowed}",
        option=option,
        value=shown,
        allowed=choices,
    )


def option_field(
    option: str,
    default: Any = attrs.NOTHING,
    parse: Callable[[Any], Any] | None = None,
    *,
    doc: str,
    ticdc: tuple[str, ...] = (),
    shown_default: str | None = None,
    since: TiCDCVersion | None = None,
    **kwargs: Any,
) -> Any:
    """An attrs field for `option`, the option's one declaration: its type (the
    annotation), default, `doc` (its line in docs/reference/write-options.md; the
    protocols that own it come from their specs), the TiCDC settings it honours (`ticdc`,
    as TiCDC spells them), the first TiCDC release that has it (`since`: set away from its
    default under an older `ticdc-version` it is refused, `check_since`) and, where the
    default is not a value, the default as documented (`shown_default`). `parse` converts
    raw (string) or typed values and raises `Invalid`, reported as a ConfigError that
    names the option."""

    def convert(value: Any) -> Any:
        if parse is None:
            return value
        try:
            return parse(value)
        except Invalid as exc:
            # `from None`: the chained error could quote a secret value.
            raise option_error(option, value, exc.allowed, exc.choices) from None

    if since is not None:
        doc += f" (TiCDC v{since.value} on: refused under an older `ticdc-version`)"
    metadata = {
        "option": option,
        "doc": doc,
        "ticdc": ticdc,
        "shown_default": shown_default,
        "since": since,
    }
    return attrs.field(default=default, converter=convert, metadata=metadata, **kwargs)


def int_parser(lo: int, hi: int, *, optional: bool = False) -> Callable[[Any], int | None]:
    """A parser of integers from `lo` to `hi` (text or int); with `optional`, empty is None."""

    def parse(value: Any) -> int | None:
        if optional and (value is None or value == ""):
            return None
        if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise Invalid(f"use an integer from {lo} to {hi}")
        return value

    return parse


#: The texts of true and false, as Go strconv.ParseBool takes them (lower case).
TRUE_TEXTS = frozenset({"1", "t", "true"})
FALSE_TEXTS = frozenset({"0", "f", "false"})


def parse_bool(value: Any) -> bool:
    """true or false, as text (`1`, `t`, `true`, `0`, `f`, `false`, any case) or a bool."""
    # Go strconv.ParseBool, as TiCDC reads its URI parameters (any case here).
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in TRUE_TEXTS or text in FALSE_TEXTS:
        return text in TRUE_TEXTS
    raise Invalid("use true or false", ("true", "false"))


_E = TypeVar("_E", bound=enum.StrEnum)


def enum_parser(cls: type[_E], aliases: Mapping[str, str] | None = None) -> Callable[[Any], _E]:
    """A parser of `cls`'s values (any case; `aliases` maps other spellings to values)."""

    def parse(value: Any) -> _E:
        text = str(value).strip().lower()
        text = (aliases or {}).get(text, text)
        try:
            return cls(text)
        except ValueError:
            choices = tuple(member.value for member in cls)
            raise Invalid(choices_hint(text, choices), choices) from None

    return parse


def choices_hint(text: str, choices: tuple[str, ...]) -> str:
    """ "use one of ...", led by the likely intended value (`canal_json`: canal-json)."""
    allowed = f"use one of {', '.join(choices)}"
    close = difflib.get_close_matches(text.replace("_", "-"), choices, n=1, cutoff=0.75)
    return f"did you mean '{close[0]}'? {allowed}" if close else allowed


def or_list(names: list[str]) -> str:
    """ "a", "a or b", "a, b or c": the protocols that take a setting, for messages."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def and_list(settings: list[str]) -> str:
    """ "a", "a and b", "a, b and c": settings to set together, for messages."""
    return settings[0] if len(settings) == 1 else f"{', '.join(settings[:-1])} and {settings[-1]}"


def option_text(value: Any) -> str:
    """An option's value as a user spells it: `true`, an enum's value, the text."""
    if isinstance(value, bool):
        return str(value).lower()
    return str(value.value) if isinstance(value, enum.Enum) else str(value)


def parse_opt_str(value: Any) -> str | None:
    """A string; None or empty is None."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise Invalid("use a string")
    return value


def parse_storage_uri(value: Any) -> str | None:
    """A storage URI (claim-check-storage-uri); None or empty is None."""
    # TiCDC's external storage URIs: file:///abs/dir, s3://bucket/prefix, gcs://..., ...
    text = parse_opt_str(value)
    if text is None:
        return None
    parts = urllib.parse.urlsplit(text.strip())
    if not re.fullmatch(r"[a-z][a-z0-9+.-]*", parts.scheme) or not (parts.netloc or parts.path):
        raise Invalid("use a URI such as file:///data/claim-check or s3://bucket/prefix")
    if parts.scheme == "file" and (
        parts.netloc not in ("", "localhost") or not parts.path.startswith("/")
    ):
        raise Invalid("use file:// with an absolute path, such as file:///data/claim-check")
    return text.strip()


def parse_name(value: Any) -> str:
    """A non-empty name."""
    if not isinstance(value, str) or not value.strip():
        raise Invalid("use a non-empty name")
    return value


def parse_names(value: Any) -> tuple[str, ...]:
    """A comma list ("a, b") or a sequence of names; no empty or duplicate names."""
    if value is None or value == "":
        return ()
    items = value.split(",") if isinstance(value, str) else list(value)
    names = tuple(str(item).strip() for item in items)
    if any(not n for n in names) or len({n.lower() for n in names}) != len(names):
        raise Invalid("use a comma-separated list of distinct column names, e.g. id,region")
    return names


def parse_string_map(value: Any) -> FrozenMap:
    """A JSON object (or a mapping) of str -> str, e.g. column-types."""
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else {}
        except json.JSONDecodeError:
            raise Invalid(
                'use a JSON object of column -> MySQL type, e.g. {"price": "decimal(10,2)"}'
            ) from None
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise Invalid('use a JSON object of column -> MySQL type, e.g. {"price": "decimal(10,2)"}')
    return value if isinstance(value, FrozenMap) else FrozenMap(value)


def parse_zone(value: Any) -> str:
    """An IANA time zone name."""
    text = str(value).strip()
    try:
        zoneinfo.ZoneInfo(text)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, TypeError):
        raise Invalid("use an IANA time zone name such as UTC or Asia/Shanghai") from None
    return text


def too_new_error(
    option: str, value: str, since: TiCDCVersion, version: TiCDCVersion
) -> ConfigError:
    """The error of `option` set to `value`, which TiCDC `version` lacks (`since` has it)."""
    return ConfigError(
        f"option {option!r} is {value!r}, which TiCDC v{version.value} does not have (it is "
        f"pingcap/ticdc's, ticdc-version {since.value}) and option 'ticdc-version' is "
        f"'{version.value}'; set ticdc-version={since.value} or remove {option}",
        option=option,
        value=value,
    )


def check_since(part: Any, version: TiCDCVersion) -> None:
    """Refuse an option of `part` set away from its default that TiCDC `version` lacks
    (its declaration's `since`).

    Raises:
        ConfigError: naming the option, its value, the release that has it and
            ticdc-version.
    """
    for field in attrs.fields(type(part)):
        since = field.metadata.get("since")
        value = getattr(part, field.name)
        if since is None or version.at_least(since) or value == field.default:
            continue
        raise too_new_error(field.metadata["option"], option_text(value), since, version)


# Options whose documented spelling is not all lowercase (Spark lowercases option keys);
# messages and suggestions use the documented one.
_SPELLING = {"checkpointlocation": "checkpointLocation"}


def spell_option(option: str) -> str:
    """An option name as the docs spell it (`checkpointLocation`), for messages."""
    return _SPELLING.get(option, option)
