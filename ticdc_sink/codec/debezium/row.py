"""The Debezium row path (tiflow `debezium/codec.go` `EncodeKey` / `EncodeValue`): one
change, one key and one value, joined from the table's constant text (`table`) and each
value's text; the reference the column-wise path (`batch`) matches byte for byte.

Every message has a JSON key and a JSON value, each `{"payload":…,"schema":…}` (the
`schema` part is left out with `debezium-disable-schema`). No size check: TiCDC has none
for Debezium.
"""

from __future__ import annotations

from typing import Any

from ticdc_sink.codec import Message
from ticdc_sink.codec.debezium.schema import check_ts, source_text
from ticdc_sink.codec.debezium.table import DebeziumTable
from ticdc_sink.codec.debezium.values import DebeziumColumn, utf8_bytes
from ticdc_sink.errors import InputError
from ticdc_sink.events import Op, RowChange

__all__ = ["DebeziumRowEncoder"]


class DebeziumRowEncoder:
    """`encode_row` of one table's Debezium messages."""

    def __init__(self, table: DebeziumTable) -> None:
        self._name = table.name
        self._columns = table.columns
        self._parts = tuple((c.prefix, c.render, c.null_text) for c in table.columns)
        self._key_positions = table.key_positions
        self._key_columns = table.key_columns
        self._old_value = table.old_value
        self._source_parts = table.source_parts
        self._ts_ms = table.ts_ms
        self._key_schema = table.key_schema
        self._value_schema = table.value_schema

    def encode_row(self, change: RowChange) -> Message:
        """The key and value of one row change (tiflow `EncodeKey` / `EncodeValue`).

        Raises:
            InputError: an UPDATE without its old row while `debezium-output-old-value` is
                on, a row of another shape than the table, or a value TiCDC cannot encode
                (names table, column and value).
        """
        op = change.op
        commit_ts = change.commit_ts
        check_ts(commit_ts, f"table {self._name}: commit ts")
        if op is Op.INSERT:
            row = self._image(change.row, "row")
            key_row = row
            body = '"op":"c","before":null,"after":' + self._render(row)
        elif op is Op.DELETE:
            before = self._image(change.before, "before")
            key_row = before
            body = '"op":"d","after":null,"before":' + self._render(before)
        else:
            row = self._image(change.row, "row")
            key_row = row
            if self._old_value:
                if change.before is None:
                    raise InputError(
                        f"table {self._name}: an UPDATE has no old row (`_before`), which "
                        "option 'debezium-output-old-value' (true) writes as `before`; supply "
                        "the `_before` column or set 'debezium-output-old-value' to false",
                        table=self._name,
                    )
                before = self._image(change.before, "before")
                body = '"op":"u","before":' + self._render(before) + ',"after":' + self._render(row)
            else:
                body = '"op":"u","after":' + self._render(row)
        value = (
            '{"payload":{"source":'
            + source_text(self._source_parts, commit_ts)
            + self._ts_ms
            + body
            + "}"
            + self._value_schema
            + "}"
        )
        key = '{"payload":' + self._render_key(key_row) + self._key_schema + "}"
        return Message(
            key=utf8_bytes(key, self._name),
            value=utf8_bytes(value, self._name),
            commit_ts=commit_ts,
            rows=1,
        )

    def _image(self, values: tuple[Any, ...] | None, what: str) -> tuple[Any, ...]:
        if values is None or len(values) != len(self._columns):
            got = "none" if values is None else f"{len(values)} values"
            raise InputError(
                f"table {self._name}: the {what} image has {got}; the table has "
                f"{len(self._columns)} columns",
                table=self._name,
            )
        return values

    def _render(self, values: tuple[Any, ...]) -> str:
        try:
            members = [
                prefix + render(v) if v is not None else null
                for (prefix, render, null), v in zip(self._parts, values, strict=True)
            ]
            return "{" + ",".join(members) + "}"  # type: ignore[arg-type]
        except (TypeError, ValueError, OverflowError, AttributeError) as exc:
            raise self._value_error(self._columns, values, exc) from exc

    def _render_key(self, values: tuple[Any, ...]) -> str:
        key = [(self._key_columns[i], values[p]) for i, p in enumerate(self._key_positions)]
        try:
            members = [(c.prefix + c.render(v) if v is not None else c.null_text) for c, v in key]
            return "{" + ",".join(members) + "}"  # type: ignore[arg-type]
        except (TypeError, ValueError, OverflowError, AttributeError) as exc:
            raise self._value_error(
                tuple(c for c, _ in key), tuple(v for _, v in key), exc
            ) from exc

    def _value_error(
        self, columns: tuple[DebeziumColumn, ...], values: tuple[Any, ...], exc: Exception
    ) -> InputError:
        for c, v in zip(columns, values, strict=True):
            if v is None:
                if c.null_text is None:
                    return InputError(
                        f"table {self._name}, column {c.column.name}: NULL would be written as "
                        f"the column default {c.column.default!r}, which TiCDC cannot encode "
                        f"({c.null_error}); give a value or fix the default in table-ddl",
                        table=self._name,
                        column=c.column.name,
                    )
                continue
            try:
                c.render(v)
            except (TypeError, ValueError, OverflowError, AttributeError) as inner:
                shown = repr(v) if len(repr(v)) <= 60 else repr(v)[:57] + "..."
                return InputError(
                    f"table {self._name}, column {c.column.name}: value {shown} cannot be "
                    f"written as MySQL {c.column.type.to_sql()} ({inner})",
                    table=self._name,
                    column=c.column.name,
                    value=v,
                )
        return InputError(f"table {self._name}: a row cannot be encoded ({exc})", table=self._name)
