"""The one builder of the record batches the column-wise tests write (each checks that a
protocol's column-wise path sends what its row path sends): a table with a column of
every MySQL type the sink renders, its write plan, and the batches as the writer reads
them. `tests/support/strategies.py` draws random batches of this table.

    COLUMNS          column -> (MySQL type, Arrow type, Spark type, values strategy)
    EDGE_COLUMNS     COLUMNS and the values the JSON protocols treat on their own
    COLUMN_TYPES     the `column-types` option: `id` and every column of COLUMNS
    ARROW_FIELDS     `id`, then COLUMNS, as Arrow fields (also `_before`'s struct)
    spark_schema()   the DataFrame's schema: the table, `_op`, `_commit_ts`, `_before`
                     and, with `with_table`, `_table`
    write_plan()     the writer's plan for it (database `shop`, table `users` unless
                     `_table` names it), options on top
    change_batches() record batches as the writer reads them: `ChangeBatch`es
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pyarrow as pa
from hypothesis import strategies as st
from pyspark.sql import types as T

from ticdc_sink import tso
from ticdc_sink.config import SinkConfig
from ticdc_sink.events import ChangeBatch
from ticdc_sink.input_batch import read_change_batches
from ticdc_sink.writer import WritePlan, make_plan

__all__ = [
    "ARROW_FIELDS",
    "COLUMNS",
    "COLUMN_TYPES",
    "COMMIT_TS",
    "EDGE_COLUMNS",
    "change_batches",
    "write_plan",
    "reading",
    "spark_schema",
]

COMMIT_TS = tso.compose(1_700_000_000_000)

_TEXT = st.text(max_size=12)
# column -> (MySQL type, Arrow type, Spark type, values strategy)
COLUMNS: dict[str, tuple[str, pa.DataType, Any, st.SearchStrategy[Any]]] = {
    "c_tinyint": ("tinyint", pa.int8(), T.ByteType(), st.integers(-128, 127)),
    "c_int_u": ("int unsigned", pa.int64(), T.LongType(), st.integers(0, 2**32 - 1)),
    "c_bigint": ("bigint", pa.int64(), T.LongType(), st.integers(-(2**63), 2**63 - 1)),
    "c_bool": ("tinyint(1)", pa.bool_(), T.BooleanType(), st.booleans()),
    "c_float": (
        "float",
        pa.float32(),
        T.FloatType(),
        st.floats(width=32, allow_nan=False, allow_infinity=False),
    ),
    "c_double": (
        "double",
        pa.float64(),
        T.DoubleType(),
        st.floats(allow_nan=False, allow_infinity=False)
        | st.sampled_from([1e21, 1e-7, 1.5e20, -0.0, 1e16, 123456789012345678.0]),
    ),
    "c_decimal": (
        "decimal(12,4)",
        pa.decimal128(12, 4),
        T.DecimalType(12, 4),
        st.decimals(min_value=-(10**8) + 1, max_value=10**8 - 1, places=4),
    ),
    "c_decimal_wide": (
        "decimal(30,10)",
        pa.decimal128(30, 10),
        T.DecimalType(30, 10),
        st.decimals(min_value=-(10**6), max_value=10**6, places=10),
    ),
    "c_char": ("char(5)", pa.string(), T.StringType(), st.text("ab <", max_size=5)),
    "c_varchar": ("varchar(20)", pa.string(), T.StringType(), st.text(max_size=20)),
    "c_text": (
        "text",
        pa.string(),
        T.StringType(),
        _TEXT | st.sampled_from(['a"b\\', "<&>", "\u2028\u2029", "\x00\x1f\x7f", "é中\u2027"]),
    ),
    "c_binary": ("binary(4)", pa.binary(), T.BinaryType(), st.binary(max_size=4)),
    "c_blob": ("blob", pa.binary(), T.BinaryType(), st.binary(max_size=10)),
    "c_date": ("date", pa.date32(), T.DateType(), st.dates()),
    "c_datetime": (
        "datetime(3)",
        pa.timestamp("us"),
        T.TimestampNTZType(),
        st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31)),
    ),
    "c_timestamp": (
        "timestamp(6)",
        pa.timestamp("us", tz="UTC"),
        T.TimestampType(),
        st.datetimes(
            min_value=dt.datetime(1970, 1, 2),
            max_value=dt.datetime(2038, 1, 1),
            timezones=st.just(dt.UTC),
        ),
    ),
    "c_time": (
        "time(2)",
        pa.string(),
        T.StringType(),
        st.builds(
            lambda s, h, m, sec, f: f"{s}{h:02d}:{m:02d}:{sec:02d}.{f:06d}",
            st.sampled_from(["", "-"]),
            st.integers(0, 837),
            st.integers(0, 59),
            st.integers(0, 59),
            st.integers(0, 999_999),
        ),
    ),
    "c_year": ("year", pa.int32(), T.IntegerType(), st.sampled_from([0, 1901, 2000, 2155])),
    "c_bit": ("bit(5)", pa.int64(), T.LongType(), st.integers(0, 31)),
    "c_enum": (
        "enum('small','medium','large')",
        pa.string(),
        T.StringType(),
        st.sampled_from(["small", "medium", "large", "MEDIUM", ""]),
    ),
    "c_set": ("set('a','b','c')", pa.string(), T.StringType(), st.sampled_from(["", "a", "a,c"])),
    "c_json": (
        "json",
        pa.string(),
        T.StringType(),
        st.dictionaries(st.text(max_size=3), st.integers() | st.text(max_size=3), max_size=3).map(
            json.dumps
        ),
    ),
}
# column -> (MySQL type, Arrow type, Spark type, values strategy): COLUMNS (every MySQL
# type) plus what canal-json and open-protocol treat on their own: unsigned integers whose
# sqlType is promoted by the value, every escape, high bytes in binary values, JSON with
# quotes.
EDGE_COLUMNS: dict[str, tuple[str, pa.DataType, Any, st.SearchStrategy[Any]]] = {
    **COLUMNS,
    "c_tinyint_u": ("tinyint unsigned", pa.int16(), T.ShortType(), st.integers(0, 255)),
    "c_smallint_u": (
        "smallint unsigned zerofill",
        pa.int32(),
        T.IntegerType(),
        st.integers(0, 65535),
    ),
    "c_mediumint_u": ("mediumint unsigned", pa.int32(), T.IntegerType(), st.integers(0, 2**24 - 1)),
    "c_bigint_u": (
        "bigint unsigned",
        pa.decimal128(20, 0),
        T.DecimalType(20, 0),
        st.integers(0, 2**64 - 1) | st.sampled_from([2**63 - 1, 2**63, 2**64 - 1]),
    ),
    "c_bit64": ("bit(64)", pa.decimal128(20, 0), T.DecimalType(20, 0), st.integers(0, 2**64 - 1)),
    "c_escapes": (
        "varchar(40)",
        pa.string(),
        T.StringType(),
        st.text(st.characters(codec="utf-8", categories=None), max_size=8)
        | st.text('\x00\x01\x08\x0b\x0c\x1f\t\n\r"\\<>&\u2028\u2029\x7fé€a', max_size=12),
    ),
    "c_varbinary": (
        "varbinary(12)",
        pa.binary(),
        T.BinaryType(),
        st.binary(max_size=12) | st.just(b"\x05\x07\n<&\xff\xfe-7F"),
    ),
    "c_longtext": ("longtext", pa.string(), T.StringType(), st.text(max_size=30)),
    "c_json_s": (
        "json",
        pa.string(),
        T.StringType(),
        st.sampled_from(['{"a": "<b>&\\u2028"}', '["\\\\", "\\n"]', "1e21", "null"]),
    ),
    "c_double_x": (
        "double",
        pa.float64(),
        T.DoubleType(),
        st.sampled_from([1e300, -1e-300, 5e-324, 1e17, 1e-5, 0.0, -0.0, 2.5])
        | st.floats(allow_nan=False, allow_infinity=False),
    ),
    "c_float_x": (
        "float(10,3)",
        pa.float32(),
        T.FloatType(),
        st.sampled_from([3.4028234663852886e38, 1e-45, 1e20, 16777216.0, -0.0])
        | st.floats(width=32, allow_nan=False, allow_infinity=False),
    ),
}
COLUMN_TYPES = {"id": "bigint", **{name: spec[0] for name, spec in COLUMNS.items()}}

ARROW_FIELDS = [
    pa.field("id", pa.int64(), nullable=False),
    *(pa.field(name, spec[1]) for name, spec in COLUMNS.items()),
]


def spark_schema(with_table: bool) -> T.StructType:
    table_fields = [
        T.StructField("id", T.LongType(), nullable=False),
        *(T.StructField(name, spec[2]) for name, spec in COLUMNS.items()),
    ]
    fields = [*table_fields, T.StructField("_op", T.StringType())]
    fields.append(T.StructField("_commit_ts", T.LongType()))
    fields.append(T.StructField("_before", T.StructType(table_fields)))
    if with_table:
        fields.append(T.StructField("_table", T.StringType()))
    return T.StructType(fields)


def write_plan(with_table: bool, **options: str) -> WritePlan:
    base = {
        "kafka.bootstrap.servers": "127.0.0.1:1",
        "topic": "t_{schema}_{table}",
        "database": "shop",
        "primary-key": "id",
        "column-types": json.dumps(COLUMN_TYPES),
        "time-zone": "Asia/Shanghai",
        "send-bootstrap-in-msg-count": "3",
    }
    if not with_table:
        base["table"] = "users"
    base.update(options)
    config = SinkConfig.from_options(base)
    return make_plan(config, spark_schema(with_table), COMMIT_TS, batch_id=None)


def reading(plan: WritePlan, tables: Any) -> dict[str, Any]:
    """The keyword arguments the writer gives `read_change_batches`."""
    return dict(
        layout=plan.config.input.layout(),
        tables=tables,
        default_database=plan.tables.default_database,
        default_table=plan.tables.default_table,
        default_commit_ts=plan.commit_ts,
        time_zone=plan.config.codec.time_zone,
    )


def change_batches(
    batches: list[pa.RecordBatch], plan: WritePlan, task: Any = None
) -> list[ChangeBatch]:
    """Every record batch as the writer reads it: ChangeBatches (per table), in order;
    tables from `task` (a TaskWriter) when given, so its outputs share their schemas."""
    tables = plan.tables.schema_for if task is None else task.schema_for
    return [g for batch in batches for g in read_change_batches(batch, **reading(plan, tables))]
