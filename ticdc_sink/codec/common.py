"""What every protocol's encoder shares, as tiflow's `pkg/sink/codec/common` does: the
name rules of `helper.go` (SanitizeName, SanitizeTopicName, EscapeEnumAndSetOptions), and
how errors show a row (its handle key, a value). The record overhead of `message.go` is
`codec.RECORD_OVERHEAD`.

This module knows TiCDC's shared rules; no wire format.
"""

from __future__ import annotations

from typing import Any

from ticdc_sink.schema import TableSchema

__all__ = [
    "escape_enum_option",
    "handle_key_text",
    "sanitize_name",
    "sanitize_topic_name",
    "short_repr",
]


def _name_char(c: str, first: bool) -> bool:
    if ("a" <= c <= "z") or ("A" <= c <= "Z") or c == "_":
        return True
    return not first and "0" <= c <= "9"


def sanitize_name(name: str) -> str:
    """An Avro name for a table, database, column or cluster name, as TiCDC (and Debezium)
    makes it (tiflow `common.SanitizeName`).

    Per code point: a first character outside `[A-Za-z_]` becomes `_`, followed by the
    character itself when it is a digit (`1abc` -> `_1abc`, `-x` -> `_x`); any later
    character outside `[A-Za-z0-9_]` becomes `_` (`中文` -> `__`). Distinct names can
    collide (`a-b`, `a.b`, `a_b`); the avro encoder rejects a table whose columns collide.
    """
    out = []
    for i, c in enumerate(name):
        if i == 0 and not _name_char(c, True):
            out.append("_")
            if "0" <= c <= "9":
                out.append(c)
        elif not _name_char(c, False):
            out.append("_")
        else:
            out.append(c)
    return "".join(out)


def sanitize_topic_name(name: str) -> str:
    """tiflow `common.SanitizeTopicName`: every code point outside `[A-Za-z0-9_.]` -> `_`."""
    return "".join(c if _name_char(c, False) or c == "." else "_" for c in name)


def escape_enum_option(element: str) -> str:
    """An ENUM/SET element as schemas list it in `allowed` (tiflow common/helper.go
    EscapeEnumAndSetOptions): `,` -> `\\,`, then `\\'` -> `'` and `''` -> `'`."""
    return element.replace(",", "\\,").replace("\\'", "'").replace("''", "'")


def short_repr(value: Any) -> str:
    """A value as an error message shows it: its repr, cut to 40 characters."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def handle_key_text(table: TableSchema, image: tuple[Any, ...] | None) -> str:
    """The handle key of a row image as errors and claim-check file names show it:
    `name=value,...` (values as repr), cut to 80 characters; "(no handle key)" for a
    table without one or no image."""
    if image is None or not table.handle_key:
        return "(no handle key)"
    columns = table.columns
    text = ",".join(f"{columns[i].name}={image[i]!r}" for i in table.handle_key_indexes)
    return text if len(text) <= 80 else text[:77] + "..."
