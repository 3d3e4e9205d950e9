"""The debezium-avro encoder (pingcap/ticdc `debezium/avro.go` appendAvroRowChangedEvent):
one Kafka message per row change, key and value Confluent-framed Avro records.

Values are the Debezium protocol's (`debezium.values`: NULL written as the column DEFAULT,
TiCDC's date, time and integer rules), taken as the JSON renderer writes them, except
where debezium-avro differs (avro.go debeziumAvroFieldValue): binary strings and BIT(n)
are bytes, DECIMAL is the exact decimal (precise) or its text (string), BIGINT UNSIGNED is
its decimal text (string mode) or a long (values above 2^63-1 refused, as TiCDC does).

The envelope: `op` c (before null), d (after null, before the deleted row), u (before
only with `debezium-output-old-value`, on by default); `source` with `snapshot`, `gtid`,
`thread` and `query` null, `ts_ms` the commit's physical time, `commit_ts`, and the
cluster name in `name` and `cluster_id`; `ts_ms` is `build_ts_ms` (Go's `time.Now()`), so
a replayed batch writes identical bytes. No size check (TiCDC has none), no compression.
The column-wise path leaves every batch to the row path (`codec.batch.row_path_batch`).
"""

from __future__ import annotations

import base64
import io
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

import fastavro
import orjson

from ticdc_sink.codec import ClaimCheckStore, EncodedBatch, Message, SchemaRegistry
from ticdc_sink.codec.avro.framing import SchemaHeaders
from ticdc_sink.codec.avro.schema import as_fastavro_reads_it
from ticdc_sink.codec.batch import row_path_batch
from ticdc_sink.codec.choices import AvroBigintUnsignedHandling, AvroDecimalHandling
from ticdc_sink.codec.common import sanitize_name
from ticdc_sink.codec.debezium.schema import DEBEZIUM_VERSION, check_ts
from ticdc_sink.codec.debezium.values import DebeziumColumn, value_renderer
from ticdc_sink.codec.debezium_avro.schema import TableSchemas
from ticdc_sink.codec.gojson import dumps
from ticdc_sink.codec.mysql import ValueKind
from ticdc_sink.errors import InputError, SchemaError
from ticdc_sink.events import ChangeBatch, Op, RowChange, zone_info
from ticdc_sink.schema import TableSchema

if TYPE_CHECKING:
    from ticdc_sink.codec.config import CodecConfig

__all__ = ["DebeziumAvroEncoder", "build_encoder"]

_MAX_LONG = 2**63 - 1


def build_encoder(
    config: CodecConfig,
    table: TableSchema,
    *,
    build_ts_ms: int,
    topic: str,
    registry: SchemaRegistry | None,
    claim_check: ClaimCheckStore | None,
) -> DebeziumAvroEncoder:
    """The encoder of one table (`protocols.build_encoder`); no large-message policy."""
    return DebeziumAvroEncoder(
        config, table, build_ts_ms=build_ts_ms, topic=topic, registry=registry
    )


class _Field:
    """One column: its Avro field name and how a row value becomes the Avro value."""

    def __init__(self, column: DebeziumColumn, config: CodecConfig) -> None:
        self.column = column
        self.name = sanitize_name(column.column.name)
        kind = column.kind
        t = column.column.type
        # binary strings and BIT(n > 1) are bytes; BIT(1) a boolean
        self.bytes = kind is ValueKind.BINARY or (kind is ValueKind.BIT and max(t.flen, 1) > 1)
        self.decimal = kind is ValueKind.DECIMAL
        self.precise = config.avro_decimal_handling_mode is AvroDecimalHandling.PRECISE
        self.ubigint = kind is ValueKind.UINT and t.base == "bigint"
        self.unsigned_string = (
            config.avro_bigint_unsigned_handling_mode is AvroBigintUnsignedHandling.STRING
        )

    def value(self, value: Any) -> Any:
        """The Avro value of a row value (None: NULL, the DEFAULT then).

        Raises:
            ValueError, TypeError, OverflowError: a value TiCDC cannot encode.
        """
        column = self.column
        if value is None:
            default = column.column.default
            if default is None:
                return None
            if self.decimal or self.ubigint:
                value = default
            elif self.bytes and column.kind is ValueKind.BINARY:
                return default.encode("utf-8", "surrogateescape")
            else:
                if column.null_text is None:
                    raise ValueError(column.null_error or "the DEFAULT cannot be encoded")
                return self._json(orjson.loads("{" + column.null_text + "}").popitem()[1])
        if self.decimal:
            text = str(value)
            if not self.precise:
                return text
            try:
                return Decimal(text)
            except InvalidOperation:
                raise ValueError(f"{text!r} is not a decimal") from None
        if self.ubigint:
            number = int(value)
            if self.unsigned_string:
                return str(number)
            if number > _MAX_LONG:
                raise ValueError(f"unsigned bigint value {number} overflows avro long")
            return number
        return self._json(orjson.loads(column.render(value)))

    def _json(self, value: Any) -> Any:
        if self.bytes and isinstance(value, str):
            return base64.b64decode(value)
        return value


class DebeziumAvroEncoder:
    """One table's debezium-avro encoder, built once and reused for every row.

    Options: `debezium-cluster-name` (TiCDC's cluster id: names, `source.name`),
    `debezium-output-old-value`, `avro-decimal-handling-mode`,
    `avro-bigint-unsigned-handling-mode`, `enable-tidb-extension` (`tidb_type` on every
    column field), `time-zone` (the zone TIMESTAMP values are rendered in).

    Raises:
        SchemaError: a column type Debezium cannot carry, or columns that collide once
            sanitised.
        ConfigError: an unknown `time-zone`.
    """

    def __init__(
        self,
        config: CodecConfig,
        table: TableSchema,
        *,
        build_ts_ms: int,
        topic: str,
        registry: SchemaRegistry | None,
    ) -> None:
        self.table = table
        self._name = f"{table.database}.{table.table}"
        self._build_ts_ms = int(build_ts_ms)
        self._old_value = config.debezium_output_old_value
        self._cluster = config.debezium_cluster_name
        self.schemas = TableSchemas(config, table)
        zone_name = config.time_zone
        zone = None if zone_name.upper() in ("UTC", "ETC/UTC", "Z") else zone_info(zone_name)
        self._fields = tuple(
            _Field(DebeziumColumn(c, kind, value_renderer(c, kind, zone, self._name), zone), config)
            for c, kind in zip(table.columns, self.schemas.kinds, strict=True)
        )
        self._key_fields = tuple(self._fields[i] for i in table.handle_key_indexes)
        self.key_schema = dumps(self.schemas.key_avro).decode()
        self.value_schema = dumps(self.schemas.envelope_avro).decode()
        try:
            self._key_parsed = fastavro.parse_schema(as_fastavro_reads_it(self.schemas.key_avro))
            self._value_parsed = fastavro.parse_schema(
                as_fastavro_reads_it(self.schemas.envelope_avro)
            )
        except Exception as exc:  # fastavro raises several exception types
            raise SchemaError(f"table {self._name}: the Avro schema is invalid: {exc}") from exc
        self._headers = SchemaHeaders(
            registry,
            topic=topic,
            record_name=self.schemas.envelope_name,
            key_record_name=self.schemas.key_name,
            key_schema=self.key_schema,
            value_schema=self.value_schema,
            protocol="debezium-avro",
        )

    def _value(self, field: _Field, value: Any) -> Any:
        try:
            return field.value(value)
        except (ValueError, TypeError, OverflowError) as exc:
            raise InputError(
                f"table {self._name} column {field.column.column.name}: value {value!r} "
                f"cannot be written by debezium-avro: {exc}",
                column=field.column.column.name,
                value=value,
            ) from None

    def _key(self, image: tuple[Any, ...]) -> dict[str, Any]:
        positions = self.table.handle_key_indexes
        return {
            f.name: self._value(f, image[i])
            for f, i in zip(self._key_fields, positions, strict=True)
        }

    def _write(self, parsed: Any, record: dict[str, Any], what: str) -> bytes:
        out = io.BytesIO()
        try:
            fastavro.schemaless_writer(out, parsed, record)
        except (ValueError, TypeError, OverflowError) as exc:
            raise InputError(
                f"table {self._name}: the {what} record cannot be written: {exc}"
            ) from exc
        return out.getvalue()

    def encode_row(self, change: RowChange) -> Message:
        """The key and value of one row change.

        Raises:
            InputError: an UPDATE without its old row while `debezium-output-old-value` is
                on, a row of another shape than the table, a value TiCDC cannot encode,
                or a commit ts that is no TSO.
            ConfigError: the encoder has no registry.
            RegistryError: from the registry, when fetching a schema id.
        """
        commit_ts = change.commit_ts
        check_ts(commit_ts, f"table {self._name}: commit ts")
        if commit_ts > _MAX_LONG:
            raise InputError(f"table {self._name}: commit ts {commit_ts} is above 2^63-1")
        op = change.op
        before = after = None
        if op is Op.INSERT:
            after = self._row(change.row, "row")
            key_image = change.row
            code = "c"
        elif op is Op.DELETE:
            before = self._row(change.before, "before")
            key_image = change.before
            code = "d"
        else:
            after = self._row(change.row, "row")
            key_image = change.row
            code = "u"
            if self._old_value:
                if change.before is None:
                    raise InputError(
                        f"table {self._name}: an UPDATE has no old row (_before) while "
                        "debezium-output-old-value is on; give _before or set it to false"
                    )
                before = self._row(change.before, "before")
        assert key_image is not None
        source = {
            "version": DEBEZIUM_VERSION,
            "connector": "TiCDC",
            "name": self._cluster,
            "ts_ms": commit_ts >> 18,
            "snapshot": None,
            "db": self.table.database,
            "table": self.table.table,
            "server_id": 0,
            "gtid": None,
            "file": "",
            "pos": 0,
            "row": 0,
            "thread": None,
            "query": None,
            "commit_ts": commit_ts,
            "cluster_id": self._cluster,
        }
        envelope = {
            "before": before,
            "after": after,
            "source": source,
            "op": code,
            "ts_ms": self._build_ts_ms,
        }
        key_body = self._write(self._key_parsed, self._key(key_image), "key")
        value_body = self._write(self._value_parsed, envelope, "value")
        return Message(
            key=self._headers.key() + key_body,
            value=self._headers.value() + value_body,
            commit_ts=commit_ts,
            rows=1,
        )

    def _row(self, image: tuple[Any, ...] | None, what: str) -> dict[str, Any]:
        if image is None or len(image) != len(self._fields):
            got = "no values" if image is None else f"{len(image)} values"
            raise InputError(
                f"table {self._name}: the {what} has {got}; the table has "
                f"{len(self._fields)} columns"
            )
        return {f.name: self._value(f, v) for f, v in zip(self._fields, image, strict=True)}

    def encode_batch(self, batch: ChangeBatch, key_indexes: tuple[int, ...]) -> EncodedBatch:
        """`batch` left whole to the row path: the writer takes every message, a
        key-changing UPDATE's two included, from `encode_row`."""
        return row_path_batch(batch, key_indexes, sized=False)

    def encode_bootstrap(self) -> None:
        """None: schemas live in the registry."""
        return None
