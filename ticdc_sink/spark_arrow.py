"""Spark's types and rows as Arrow, and back: the schema of a DataFrame as the record
batches the Arrow writers hand over (`spark_arrow_schema`, Spark's own mapping), the Spark
schema of a read's Arrow schema (`read_spark_schema`), and PySpark 4.0's Row stream
writer's rows as those record batches (`rows_to_batches`). Needs no SparkSession.
"""

from __future__ import annotations

import datetime as dt
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql.pandas.types import from_arrow_type
from pyspark.sql.types import (
    ArrayType,
    DataType,
    MapType,
    StructField,
    StructType,
    TimestampType,
)

__all__ = ["read_spark_schema", "rows_to_batches", "spark_arrow_schema"]


def spark_arrow_schema(schema: StructType) -> pa.Schema:
    """Spark's own type mapping, so both stream writers see the same Arrow types.

    The TIMESTAMP zone argument changed after 4.0 (`timestamp_utc=True` became `timezone=`,
    which has no default); UTC either way: aware values convert to it exactly.
    """
    from pyspark.sql.pandas.types import to_arrow_schema

    if "timezone" in inspect.signature(to_arrow_schema).parameters:
        return to_arrow_schema(schema, timezone="UTC")
    return to_arrow_schema(schema)


def read_spark_schema(schema: pa.Schema) -> StructType:
    """The Spark form of a read's Arrow schema (`read.rows.arrow_schema`), field metadata
    (`mysql_type`, `ticdc_table`) kept: the schema a write of the read's DataFrame sees."""
    return StructType([_spark_field(field) for field in schema])


def _spark_field(field: pa.Field) -> StructField:
    metadata = {k.decode(): v.decode() for k, v in (field.metadata or {}).items()}
    if pa.types.is_struct(field.type):
        data_type: DataType = StructType([_spark_field(f) for f in field.type])
    else:
        data_type = from_arrow_type(field.type)
    return StructField(field.name, data_type, field.nullable, metadata or None)


def rows_to_batches(
    rows: Iterator[Any], schema: StructType, chunk: int
) -> Iterator[pa.RecordBatch]:
    """Rows -> record batches shaped like the Arrow writer's, `chunk` rows each.

    Rows carry TIMESTAMP values as naive datetimes in the executor's local zone, at any
    depth (`_before`, arrays, maps); Arrow would read a naive value as UTC, so each one is
    made aware first. TIMESTAMP_NTZ values stay naive; 4.0's `bytearray` binaries Arrow
    copies into `binary` as they are.
    """
    arrow_schema = spark_arrow_schema(schema)
    make_aware = _aware(schema)
    buffer: list[dict[str, Any]] = []
    for row in rows:
        record = row.asDict(recursive=True)
        buffer.append(make_aware(record) if make_aware is not None else record)
        if len(buffer) >= chunk:
            yield pa.RecordBatch.from_pylist(buffer, schema=arrow_schema)
            buffer = []
    if buffer:
        yield pa.RecordBatch.from_pylist(buffer, schema=arrow_schema)


def _aware(data_type: DataType) -> Callable[[Any], Any] | None:
    """A function that makes the naive local datetimes inside a (`asDict`-ed) value of
    `data_type` aware, or None when the type holds no TIMESTAMP, so most rows cost nothing."""
    if isinstance(data_type, TimestampType):
        return _aware_datetime
    if isinstance(data_type, StructType):
        fields = [(f.name, fix) for f in data_type.fields if (fix := _aware(f.dataType))]
        if not fields:
            return None

        def struct(value: dict[str, Any] | None) -> dict[str, Any] | None:
            if value is not None:
                for name, fix in fields:
                    value[name] = fix(value[name])
            return value

        return struct
    if isinstance(data_type, ArrayType):
        element = _aware(data_type.elementType)
        if element is None:
            return None
        return lambda value: None if value is None else [element(v) for v in value]
    if isinstance(data_type, MapType):
        key, item = _aware(data_type.keyType), _aware(data_type.valueType)
        if key is None and item is None:
            return None
        key, item = key or _same, item or _same
        return lambda value: None if value is None else {key(k): item(v) for k, v in value.items()}
    return None


def _aware_datetime(value: dt.datetime | None) -> dt.datetime | None:
    # `astimezone()` reads a naive value in the process's local zone and honours `fold`,
    # which Spark's `fromtimestamp` sets for the repeated hour when clocks go back.
    if value is not None and value.tzinfo is None:
        return value.astimezone()
    return value


def _same(value: Any) -> Any:
    return value
