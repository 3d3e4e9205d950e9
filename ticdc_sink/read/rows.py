"""Decoded rows -> Arrow record batches in the writer's input contract.

The output of a read is what `df.write.format("ticdc")` takes (docs/guides/writing.md,
"The input contract"), so a read followed by a write round-trips: the table's columns, each carrying
its definition in the field metadata `mysql_type` (type, NOT NULL, DEFAULT:
`ddl.column_definition_sql`), then `_op` (INSERT/UPDATE/DELETE), `_commit_ts` (the
TSO), `_before` (the old row of an UPDATE, a struct of the table columns), `_database`,
`_table` (carrying the table read, keys, id and version included, in its metadata
`ticdc_table`: `writer.table.declared_table`), and on request the Kafka coordinates `_topic`,
`_partition`, `_offset` (`kafka-columns`) and the message's headers `_headers`
(`includeHeaders`: Spark's Kafka source's `headers`, array<struct<key: string, value:
binary>>, null for a message without headers; underscored as the other columns a read adds,
so no table column is shadowed). For a DELETE the table columns hold the deleted row.

Arrow types, chosen so that every MySQL value keeps its exact value and the writer reads
it back as the same value:

    tinyint..int (signed), smallint..mediumint unsigned, year  -> int32
    int unsigned, bigint, bit(1..63)                           -> int64
    bigint unsigned, bit(64)                                   -> decimal(20,0)
    float, double                                              -> float32, float64
    decimal(p,s)                                               -> decimal(p,s) (p <= 38)
    date, datetime, timestamp, time                            -> string, as MySQL prints
        them ("0000-00-00", "838:59:59" and TIMESTAMPs in the writer's time-zone have no
        exact Spark date/timestamp equivalent; cast with to_date/to_timestamp)
    enum, set                                                  -> string: the member, the
        members joined by "," (the writer takes both back)
    char/varchar/text types, json, vector                      -> string
    binary/varbinary/blob types                                -> binary

This module knows Arrow, table schemas and decoded events; nothing of Spark or Kafka.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa

from ticdc_sink.codec.mysql import ValueKind, value_kind
from ticdc_sink.ddl import column_definition_sql
from ticdc_sink.decode import DecodedRow
from ticdc_sink.errors import DecodeError, SchemaError
from ticdc_sink.events import Op
from ticdc_sink.read.record import Record
from ticdc_sink.schema import (
    MYSQL_TYPE_METADATA,
    TABLE_METADATA,
    Column,
    TableSchema,
    table_schema_to_json,
)

__all__ = [
    "BEFORE",
    "COMMIT_TS",
    "DATABASE",
    "HEADERS",
    "HEADERS_TYPE",
    "KAFKA_COLUMNS",
    "MYSQL_TYPE",
    "OP",
    "TABLE",
    "RowBatchBuilder",
    "arrow_schema",
    "fit_batch",
    "record_columns",
    "same_columns",
    "value_converter",
]

MYSQL_TYPE = MYSQL_TYPE_METADATA
OP, COMMIT_TS, BEFORE, DATABASE, TABLE = "_op", "_commit_ts", "_before", "_database", "_table"
KAFKA_COLUMNS = ("_topic", "_partition", "_offset")
HEADERS = "_headers"
#: Spark's Kafka source's headers column type.
HEADERS_TYPE = pa.list_(pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())]))

_WIDE = pa.decimal128(20, 0)


def _arrow_type(column: Column) -> pa.DataType:
    kind = value_kind(column)
    mysql = column.type
    if kind is ValueKind.INT:
        return pa.int64() if mysql.base == "bigint" else pa.int32()
    if kind is ValueKind.UINT:
        if mysql.base == "bigint":
            return _WIDE
        return pa.int64() if mysql.base == "int" else pa.int32()
    if kind is ValueKind.BIT:
        return _WIDE if (mysql.length or 1) >= 64 else pa.int64()
    if kind is ValueKind.FLOAT32:
        return pa.float32()
    if kind is ValueKind.FLOAT64:
        return pa.float64()
    if kind is ValueKind.DECIMAL:
        precision = mysql.length or 10
        if precision <= 38:
            return pa.decimal128(precision, mysql.scale)
        return pa.string()
    if kind is ValueKind.BINARY:
        return pa.binary()
    return pa.string()


def _table_fields(table: TableSchema) -> list[pa.Field]:
    return [
        pa.field(c.name, _arrow_type(c), metadata={MYSQL_TYPE: column_definition_sql(c)})
        for c in table.columns
    ]


@functools.lru_cache(maxsize=64)
def arrow_schema(
    table: TableSchema, *, kafka_columns: bool = False, headers: bool = False
) -> pa.Schema:
    """The schema of a read of `table` (module docstring); `kafka_columns` adds the Kafka
    coordinates, `headers` the `_headers` column. Kept per table (schemas are immutable):
    every range a task reads builds its batches with it.

    Raises:
        SchemaError: a column type TiCDC does not replicate as a value.
    """
    fields = _table_fields(table)
    fields += [
        pa.field(OP, pa.string(), nullable=False),
        pa.field(COMMIT_TS, pa.int64(), nullable=False),
        pa.field(BEFORE, pa.struct(fields)),
        pa.field(DATABASE, pa.string(), nullable=False),
        pa.field(
            TABLE,
            pa.string(),
            nullable=False,
            metadata={TABLE_METADATA: table_schema_to_json(table)},
        ),
    ]
    if kafka_columns:
        topic, partition, offset = KAFKA_COLUMNS
        fields += [
            pa.field(topic, pa.string(), nullable=False),
            pa.field(partition, pa.int32(), nullable=False),
            pa.field(offset, pa.int64(), nullable=False),
        ]
    if headers:
        fields.append(pa.field(HEADERS, HEADERS_TYPE))
    return pa.schema(fields)


def record_columns(
    records: Sequence[Record], topic: str, *, kafka_columns: bool, headers: bool
) -> list[pa.Array]:
    """The last columns of a read's batch of `records`, as `arrow_schema` orders them: the
    Kafka coordinates (`kafka_columns`) and the `_headers` column (`headers`). The
    column-wise reads end their batches with them."""
    arrays: list[pa.Array] = []
    if kafka_columns:
        arrays += [
            pa.array([topic] * len(records), pa.string()),
            pa.array([record.partition for record in records], pa.int32()),
            pa.array([record.offset for record in records], pa.int64()),
        ]
    if headers:
        arrays.append(pa.array([record.headers for record in records], HEADERS_TYPE))
    return arrays


def same_columns(a: TableSchema, b: TableSchema) -> bool:
    """Whether rows of `a` and `b` fit one read schema: the same names and MySQL types."""
    return [(c.name, c.type) for c in a.columns] == [(c.name, c.type) for c in b.columns]


def _member(elements: Sequence[str]) -> Callable[[Any], Any]:
    def convert(index: Any) -> Any:
        # Index 0 is MySQL's error value, the empty string.
        return elements[index - 1] if 0 < index <= len(elements) else ""

    return convert


def _members(elements: Sequence[str]) -> Callable[[Any], Any]:
    def convert(mask: Any) -> Any:
        return ",".join(e for i, e in enumerate(elements) if mask >> i & 1)

    return convert


def _unsigned_long(value: Any) -> Any:
    return value + (1 << 64) if value < 0 else value


def value_converter(column: Column) -> Callable[[Any], Any] | None:
    """How a decoded value becomes its Arrow value; None: it is one already."""
    kind = value_kind(column)
    if kind is ValueKind.UINT and column.type.base == "bigint":
        # Only avro's long mode gives one below 0: TiCDC writes the uint64 as an int64
        # (tiflow avro.go columnToAvroData), which the decoder leaves as written.
        return _unsigned_long
    if kind is ValueKind.ENUM:
        return _member(column.type.elements)
    if kind is ValueKind.SET:
        return _members(column.type.elements)
    if kind is ValueKind.DECIMAL and (column.type.length or 10) > 38:
        return str
    return None


class RowBatchBuilder:
    """Collects the decoded rows of one table version and hands them out as record
    batches of `arrow_schema(table)`. Single-threaded: one per task."""

    def __init__(
        self, table: TableSchema, *, kafka_columns: bool = False, headers: bool = False
    ) -> None:
        self.schema = arrow_schema(table, kafka_columns=kafka_columns, headers=headers)
        self.kafka_columns = kafka_columns
        self.headers = headers
        self._names = table.column_names
        self._converters = [value_converter(c) for c in table.columns]
        self._before_type = self.schema.field(BEFORE).type
        self._clear()

    def __len__(self) -> int:
        return len(self._ops)

    def _clear(self) -> None:
        self._columns: list[list[Any]] = [[] for _ in self._names]
        self._before: list[dict[str, Any] | None] = []
        self._ops: list[str] = []
        self._commit_ts: list[int] = []
        self._databases: list[str] = []
        self._tables: list[str] = []
        self._topics: list[str] = []
        self._partitions: list[int] = []
        self._offsets: list[int] = []
        self._headers: list[tuple[tuple[str, bytes | None], ...] | None] = []
        self._where: list[tuple[str, int, int]] = []  # each row's topic, partition, offset

    def _locate(self, exc: Exception) -> DecodeError:
        """The error of the first row a column's Arrow type refuses (found one by one,
        on the error path only)."""
        for i, where in enumerate(self._where):
            for name, values, field in zip(self._names, self._columns, self.schema, strict=False):
                try:
                    pa.array(values[i : i + 1], type=field.type)
                except _REFUSED as found:
                    reason = (
                        f"column {name!r}: value {values[i]!r} does not fit {field.type} ({found})"
                    )
                    return _unfit(*where, ValueError(reason))
            try:
                pa.array(self._before[i : i + 1], self._before_type)
                pa.array(self._databases[i : i + 1], pa.string())
                pa.array(self._tables[i : i + 1], pa.string())
            except _REFUSED as found:
                return _unfit(*where, ValueError(f"the old row, database or table: {found}"))
        return DecodeError(f"a row does not fit the read's columns ({exc})")

    def add(self, row: DecodedRow, record: Record, topic: str) -> None:
        """Add one row change; `record` is the message it came from.

        Raises:
            DecodeError: a value its column's conversion refuses (naming topic,
                partition, offset and the column).
        """
        image = row.old if row.op is Op.DELETE else row.data
        before = row.old if row.op is Op.UPDATE else None
        image = image or {}
        try:
            converted = [
                value if value is None or convert is None else convert(value)
                for convert, value in zip(
                    self._converters, map(image.get, self._names), strict=True
                )
            ]
            old = None if before is None else self._image(before)
        except _REFUSED as exc:
            raise _unfit(topic, record.partition, record.offset, self._refused(image, exc)) from exc
        for values, value in zip(self._columns, converted, strict=True):
            values.append(value)
        self._before.append(old)
        self._where.append((topic, record.partition, record.offset))
        self._ops.append(row.op.value)
        self._commit_ts.append(row.commit_ts)
        self._databases.append(row.database)
        self._tables.append(row.table)
        if self.kafka_columns:
            self._topics.append(topic)
            self._partitions.append(record.partition)
            self._offsets.append(record.offset)
        if self.headers:
            self._headers.append(record.headers)

    def _refused(self, image: dict[str, Any], exc: Exception) -> Exception:
        """What refused a value of `image`, naming its column (else `exc`, the old row's)."""
        try:
            self._image(image)
        except ValueError as named:
            return named
        return exc

    def _image(self, values: dict[str, Any]) -> dict[str, Any]:
        out = {}
        for name, convert in zip(self._names, self._converters, strict=True):
            value = values.get(name)
            try:
                out[name] = value if value is None or convert is None else convert(value)
            except _REFUSED as exc:
                raise ValueError(f"column {name!r}: value {value!r} ({exc})") from exc
        return out

    def flush(self) -> pa.RecordBatch:
        """The rows added since the last flush, as one record batch.

        Raises:
            DecodeError: a value its column's Arrow type cannot hold (a message whose
                decoder let through what TiCDC never writes), naming topic, partition,
                offset and the column.
        """
        try:
            arrays = [
                pa.array(values, type=field.type)
                for values, field in zip(self._columns, self.schema, strict=False)
            ]
            arrays += [
                pa.array(self._ops, pa.string()),
                pa.array(self._commit_ts, pa.int64()),
                pa.array(self._before, self._before_type),
                pa.array(self._databases, pa.string()),
                pa.array(self._tables, pa.string()),
            ]
        except _REFUSED as exc:
            raise self._locate(exc) from exc
        if self.kafka_columns:
            arrays += [
                pa.array(self._topics, pa.string()),
                pa.array(self._partitions, pa.int32()),
                pa.array(self._offsets, pa.int64()),
            ]
        if self.headers:
            arrays.append(pa.array(self._headers, HEADERS_TYPE))
        self._clear()
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)


# What a value's conversion raises when a decoder let through a value of another type.
_REFUSED = (ValueError, TypeError, OverflowError, IndexError, pa.ArrowException)


def _unfit(topic: str, partition: int, offset: int, exc: Exception) -> DecodeError:
    reason = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
    return DecodeError(
        f"topic {topic} partition {partition} offset {offset}: the row does not fit the "
        f"read's columns: {reason}"
    )


def fit_batch(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """`batch` in a user's schema: its columns by name (in any case), cast to the user's
    types; a column the read does not have is null.

    Raises:
        SchemaError: a column that cannot be cast (names the column and both types).
    """
    names = {name.lower(): i for i, name in enumerate(batch.schema.names)}
    arrays = []
    for field in schema:
        index = names.get(field.name.lower())
        if index is None:
            arrays.append(pa.nulls(batch.num_rows, field.type))
            continue
        column = batch.column(index)
        try:
            arrays.append(column.cast(field.type))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise SchemaError(
                f"column {field.name} is read as {column.type}, which does not cast to the "
                f"given schema's {field.type} ({exc}); change the schema's type for it",
                column=field.name,
            ) from exc
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
