"""One table compiled once for open-protocol (shared by the row and column-wise paths):
its column entries in Go map order, the handle-key subset, the constant start of its row
keys and the options that shape its messages."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ticdc_sink.codec.compression import compress
from ticdc_sink.codec.open_protocol.message import row_key_tail
from ticdc_sink.codec.open_protocol.values import ColumnEntry, table_entries
from ticdc_sink.errors import SchemaError
from ticdc_sink.schema import TableSchema

if TYPE_CHECKING:
    from ticdc_sink.codec.config import CodecConfig

__all__ = ["OpenProtocolTable", "image_map"]


def image_map(entries: list[ColumnEntry], texts: list[str | None]) -> str:
    """A column map (`{"a":{…,"v":1},…}`) of `entries` whose value texts are `texts` (None:
    NULL); Go's `omitempty` drops an empty map, which the caller decides."""
    return (
        "{"
        + ",".join(
            e.head + ("null}" if t is None else t + "}")
            for e, t in zip(entries, texts, strict=True)
        )
        + "}"
    )


class OpenProtocolTable:
    """What every open-protocol message of one table shares."""

    def __init__(self, config: CodecConfig, table: TableSchema) -> None:
        """Raises:
        SchemaError: a column type TiCDC does not replicate, or
            delete-only-output-handle-key-columns on a table without a handle key.
        """
        self.table = table
        self.name = f"{table.database}.{table.table}"
        self.entries = table_entries(table)
        self.key_entries = [e for e in self.entries if e.is_handle_key]
        self.output_old_value = config.open_output_old_value
        self.only_updated = config.only_output_updated_columns
        self.delete_key_only = config.delete_only_output_handle_key_columns
        self.compression = config.large_message_handle_compression
        if self.delete_key_only and not self.key_entries:
            raise self.no_handle_key("delete-only-output-handle-key-columns=true")
        self.key_tail = row_key_tail(table.database, table.table)

    def compress(self, value: bytes) -> bytes:
        """An event's value JSON as it goes into the message: compressed with
        `large-message-handle-compression` (tiflow calls common.Compress on every row and
        DDL value, before the size check); keys never are."""
        return compress(self.compression, value)

    def no_handle_key(self, why: str) -> SchemaError:
        """tiflow's "not found handle key columns" (ErrOpenProtocolCodecInvalidData)."""
        return SchemaError(
            f"table {self.name} has no handle key, which open-protocol needs for {why}; "
            "give a primary key (option primary-key or table-ddl) or a NOT NULL unique key",
        )
