"""Bad input without Spark (design §6): every case of `tests/support/bad_input.py` through
the data source's own classes, as Spark calls them. A driver case fails in `writer()`,
before any task; a value case fails in a task's `write()`, before anything is committed.
Each raises the sink's error class with a message naming what to fix.

What Spark shows of these errors, and that a failed write leaves no watermark in the
topic or the checkpoint, is the integration matrix's (a few cases of each kind).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql.datasource import CaseInsensitiveDict
from pyspark.sql.types import (
    DataType,
    DateType,
    DecimalType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from tests.support.bad_input import (
    DRIVER_CASES,
    TABLE,
    VALUE_CASES,
    assert_error,
    case_options,
    value_rows,
)
from tests.support.fake_producer import FakeProducer
from ticdc_sink.codec.protocols import decoder_for
from ticdc_sink.datasource import TiCDCDataSource
from ticdc_sink.decode import DecodedWatermark, decode_record
from ticdc_sink.errors import TiCDCSinkError
from ticdc_sink.state import SinkState

BOOTSTRAP = "127.0.0.1:9"  # nothing is sent: the cases fail first, or go to a FakeProducer


def _source(options: dict[str, str]) -> TiCDCDataSource:
    # Spark hands the options as a CaseInsensitiveDict.
    given = CaseInsensitiveDict()
    for name, value in options.items():
        given[name] = value
    return TiCDCDataSource(given)


def _schema(ddl: str) -> tuple[StructType, pa.Schema]:
    """`ddl` (`name type, ...`, of the types the cases use) as the DataFrame's schema and
    the Arrow schema of the batches Spark hands a task (timestamps in the session's zone,
    UTC here), without a JVM to parse it."""
    spark, arrow = [], []
    for column in ddl.split(", "):
        name, kind = column.split(" ", 1)
        decimal = re.fullmatch(r"decimal\((\d+),(\d+)\)", kind)
        if decimal:
            precision, scale = int(decimal[1]), int(decimal[2])
            types = (DecimalType(precision, scale), pa.decimal128(precision, scale))
        else:
            types = _TYPES[kind]
        spark.append(StructField(name, types[0]))
        arrow.append(pa.field(name, types[1]))
    return StructType(spark), pa.schema(arrow)


_TYPES: dict[str, tuple[DataType, pa.DataType]] = {
    "string": (StringType(), pa.string()),
    "bigint": (LongType(), pa.int64()),
    "int": (IntegerType(), pa.int32()),
    "date": (DateType(), pa.date32()),
    "timestamp": (TimestampType(), pa.timestamp("us", tz="UTC")),
}


def _batch(schema: pa.Schema, rows: list[tuple[Any, ...]]) -> pa.RecordBatch:
    columns = [pa.array([row[i] for row in rows], f.type) for i, f in enumerate(schema)]
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def _assert_no_watermark(checkpoint: Path, producer: FakeProducer | None = None) -> None:
    if checkpoint.exists():
        assert SinkState(str(checkpoint)).last_watermark() is None
    if producer is not None:
        decoder = decoder_for("simple")
        for _, _, key, value in producer.sent:
            events = decode_record(decoder, key, value)
            assert not any(isinstance(e, DecodedWatermark) for e in events)


@pytest.mark.parametrize(
    ("options", "cls", "fragments"),
    [c[1:] for c in DRIVER_CASES],
    ids=[c[0] for c in DRIVER_CASES],
)
def test_bad_settings_fail_when_the_writer_is_made(tmp_path, options, cls, fragments) -> None:
    checkpoint = tmp_path / "chk"
    merged = case_options(
        options, bootstrap=BOOTSTRAP, topic="bim", checkpoint=checkpoint, files=tmp_path
    )
    if not ("sink-uri" in merged or "kafka.bootstrap.server" in merged):
        merged["kafka.bootstrap.servers"] = BOOTSTRAP
    with pytest.raises(TiCDCSinkError) as failure:
        _source(merged).writer(_schema("id bigint, name string")[0], False)
    assert_error(failure.value, cls, *fragments)
    _assert_no_watermark(checkpoint)


@pytest.mark.parametrize(
    ("rows", "columns", "types", "cls", "fragments"),
    [c[1:] for c in VALUE_CASES],
    ids=[c[0] for c in VALUE_CASES],
)
def test_bad_values_fail_the_task(tmp_path, rows, columns, types, cls, fragments) -> None:
    checkpoint = tmp_path / "chk"
    options = {
        "kafka.bootstrap.servers": BOOTSTRAP,
        "topic": "bim",
        **TABLE,
        "primary-key": "id",
        "checkpointLocation": str(checkpoint),
        "column-types": json.dumps(types),
    }
    schema, arrow = _schema(f"_op string, id bigint, {columns}")
    writer = _source(options).writer(schema, False)
    producer = FakeProducer(partitions=1)
    writer.producer_factory = producer
    with pytest.raises(TiCDCSinkError) as failure:
        writer.write(iter([_batch(arrow, value_rows(rows, columns))]))
    assert_error(failure.value, cls, "db.t", *fragments)
    _assert_no_watermark(checkpoint, producer)
