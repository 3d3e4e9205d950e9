"""One table compiled for canal-json, shared by the row path (`row`) and the column-wise
path (`batch`): the message head per operation (with `pkNames`), the `ts` that follows,
the `sqlType` and `mysqlType` text of both column selections (all columns, handle key
only), each column's renderer, the options that shape a message, and where the row key
(`output-row-key`) takes its handle.

`mysqlType` is a Go map that tiflow walks in Go's random map order; it is written, like
`sqlType`, in column order. Consumers read it as a JSON object, so only the byte order
differs between two TiCDC runs anyway.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ticdc_sink.codec.canal_json.values import (
    RENDERERS,
    CanalJsonLayout,
    Entry,
    full_mysql_type,
    mysql_type,
)
from ticdc_sink.codec.mysql import value_kind
from ticdc_sink.codec.row_key import handle_position
from ticdc_sink.events import Op
from ticdc_sink.gotext import easyjson_quote
from ticdc_sink.schema import TableSchema

if TYPE_CHECKING:
    from ticdc_sink.codec.config import CodecConfig

__all__ = ["CanalJsonTable"]


class CanalJsonTable:
    """The constant text of one table's canal-json DML messages. `layouts[only_key]` and
    `mysql_types[only_key]` are those of all columns (False) or the handle key (True)."""

    def __init__(self, config: CodecConfig, table: TableSchema, *, build_ts_ms: int) -> None:
        """Raises:
        SchemaError: a column type the protocol cannot carry; output-row-key (with the
            TiDB extension) on a table without an integer row handle.
        """
        self.table = table
        self.build_ts_ms = build_ts_ms
        self.name = f"{table.database}.{table.table}"
        # content-compatible implies only-output-updated-columns (tiflow common/config.go).
        self.only_updated = config.only_output_updated_columns or config.content_compatible
        self.delete_key_only = config.delete_only_output_handle_key_columns
        self.extension = config.enable_tidb_extension
        # pingcap/ticdc canal_json_encoder.go newJSONMessageForDML: `"rowkey"` goes in
        # `_tidb`, so only with the extension; the position of the integer handle.
        self.row_key_handle: int | None = None
        if config.output_row_key and self.extension:
            self.row_key_handle = handle_position(table, "output-row-key")
        columns = table.columns
        entries: list[Entry] = [
            (c.name, i, RENDERERS[value_kind(c)]) for i, c in enumerate(columns)
        ]
        type_of = full_mysql_type if config.content_compatible else mysql_type
        all_positions = list(range(len(columns)))
        handle = set(table.handle_key)
        key_positions = [i for i, c in enumerate(columns) if c.name in handle]
        self.layouts = {
            False: CanalJsonLayout(table, all_positions, entries),
            True: CanalJsonLayout(table, key_positions, entries),
        }
        self.mysql_types = {
            only_key: (
                ',"mysqlType":{'
                + ",".join(
                    f"{easyjson_quote(columns[i].name)}:{easyjson_quote(type_of(columns[i]))}"
                    for i in positions
                )
                + '},"old":'
            ).encode()
            for only_key, positions in ((False, all_positions), (True, key_positions))
        }
        primary = set(table.primary_key)
        pk_names = (
            "[" + ",".join(easyjson_quote(c.name) for c in columns if c.name in primary) + "]"
        )
        prefix = (
            f'{{"id":0,"database":{easyjson_quote(table.database)},"table":{easyjson_quote(table.table)},'
            f'"pkNames":{pk_names},"isDdl":false,"type":'
        )
        self.heads = {op: f'{prefix}"{op.value}","es":'.encode() for op in Op}
        self.middle = f',"ts":{build_ts_ms},"sql":"","sqlType":'.encode()
