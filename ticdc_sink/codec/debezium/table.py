"""One table compiled for the Debezium protocol, shared by the row path (`row`) and the
column-wise path (`batch`): per column its `"name":` prefix, renderer and NULL text, the
key columns, the key and value `schema` parts, the `source` object around the commit ts
and the top-level `ts_ms`.

Speed: everything that does not depend on the row is rendered to text once, here; a row
is then a join of short strings. `build_ts_ms` stands in for Go's `time.Now()` in the
top-level `payload.ts_ms`, so that replaying a batch writes identical bytes.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from ticdc_sink.codec.debezium.schema import (
    TAIL_SCHEMA,
    field_schema,
    schema_topic_name,
    source_parts,
    source_schema,
)
from ticdc_sink.codec.debezium.values import DebeziumColumn, value_renderer
from ticdc_sink.codec.mysql import value_kind
from ticdc_sink.errors import SchemaError
from ticdc_sink.events import zone_info
from ticdc_sink.gotext import jsoniter_quote
from ticdc_sink.schema import TableSchema

if TYPE_CHECKING:
    from ticdc_sink.codec.config import CodecConfig

__all__ = ["DebeziumTable"]


class DebeziumTable:
    """The constant text of one table's Debezium messages (tiflow `dbzCodec`).

    Options: `debezium-disable-schema` (no `schema` parts), `debezium-output-old-value`
    (UPDATEs carry `before`), `debezium-cluster-name` (`source.name`, schema names),
    `enable-tidb-extension` (`tidb_type` in field schemas), `time-zone` (the zone TIMESTAMP
    values of the rows are rendered in; None for UTC).
    """

    def __init__(self, config: CodecConfig, table: TableSchema, *, build_ts_ms: int) -> None:
        """Raises:
        SchemaError: a column type Debezium cannot carry.
        ConfigError: an unknown `time-zone`.
        """
        self.table = table
        self.name = f"{table.database}.{table.table}"
        zone_name = config.time_zone
        self.zone: dt.tzinfo | None = (
            None if zone_name.upper() in ("UTC", "ETC/UTC", "Z") else zone_info(zone_name)
        )
        extension = config.enable_tidb_extension
        cluster = config.debezium_cluster_name
        self.with_schema = not config.debezium_disable_schema
        self.old_value = config.debezium_output_old_value

        columns = []
        fields = []
        for column in table.columns:
            try:
                kind = value_kind(column)
            except SchemaError as exc:
                raise SchemaError(f"table {self.name}: {exc.message}", column=column.name) from None
            render = value_renderer(column, kind, self.zone, self.name)
            columns.append(DebeziumColumn(column, kind, render, self.zone))
            fields.append(field_schema(column, kind, extension, self.zone))
        self.columns = tuple(columns)
        self.key_positions = table.handle_key_indexes
        self.key_columns = tuple(columns[i] for i in self.key_positions)

        topic = schema_topic_name(cluster, table.database, table.table)
        #: `source` around its two numbers: head + ts_ms + middle + commit_ts + tail
        self.source_parts = source_parts(cluster, table.database, table.table)
        #: the top-level `ts_ms` and `transaction` after `source`
        self.ts_ms = ',"ts_ms":' + str(int(build_ts_ms)) + ',"transaction":null,'
        self.key_schema = ""
        self.value_schema = ""
        if self.with_schema:
            key_fields = ",".join(fields[i] for i in self.key_positions)
            self.key_schema = (
                ',"schema":{"type":"struct","name":'
                + jsoniter_quote(topic + ".Key")
                + ',"optional":false,"fields":['
                + key_fields
                + "]}"
            )
            value_fields = ",".join(fields)
            struct_name = jsoniter_quote(topic + ".Value")
            image = (
                '{"type":"struct","optional":true,"name":' + struct_name + ',"field":"%s",'
                '"fields":[' + value_fields.replace("%", "%%") + "]}"
            )
            self.value_schema = (
                ',"schema":{"type":"struct","optional":false,"name":'
                + jsoniter_quote(topic + ".Envelope")
                + ',"version":1,"fields":['
                + image % "before"
                + ","
                + image % "after"
                + ","
                + source_schema(config)
                + ","
                + TAIL_SCHEMA
                + "]}"
            )
