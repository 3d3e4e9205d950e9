"""The Spark-facing classes without Spark.

The PySpark 4.0 stream fallback: Rows -> record batches (`rows_to_batches`). Rows are built
the way 4.0's Python worker builds them (`TimestampType().fromInternal`: naive datetimes in
the process's local zone; binaries as `bytearray`), and the batches must hold what the 4.1+
Arrow writer would have handed over: the same instants, the same types.

The driver side: logging in Spark's driver-side Python workers, the warning for frames
of Kafka records (Spark's Kafka sink and source), a checkpoint location the sink cannot write.
A writer's tasks and its commit step make their producers with its `producer_factory`.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import Row
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from tests.support.fake_producer import FakeProducer
from ticdc_sink import input_batch
from ticdc_sink.codec.config import warn_raw_change_events_without_old_values
from ticdc_sink.config import InputConfig
from ticdc_sink.datasource import TiCDCDataSource, _config, _read_config
from ticdc_sink.errors import ConfigError
from ticdc_sink.input_batch import warn_if_kafka_shaped
from ticdc_sink.read.options import warn_ignored_by_reads
from ticdc_sink.spark_arrow import rows_to_batches

# spark_version: PySpark 4.0's Row stream writer, Spark's Arrow type mapping
pytestmark = pytest.mark.spark_version

UTC = dt.UTC

BEFORE = StructType(
    [
        StructField("id", LongType()),
        StructField("name", StringType()),
        StructField("updated", TimestampType()),
        StructField("seen", TimestampNTZType()),
        StructField("blob", BinaryType()),
    ]
)
SCHEMA = StructType(
    [
        StructField("_op", StringType()),
        StructField("id", LongType()),
        StructField("tiny", ByteType()),
        StructField("small", ShortType()),
        StructField("count", IntegerType()),
        StructField("ratio", FloatType()),
        StructField("score", DoubleType()),
        StructField("price", DecimalType(10, 2)),
        StructField("name", StringType()),
        StructField("flag", BooleanType()),
        StructField("blob", BinaryType()),
        StructField("day", DateType()),
        StructField("updated", TimestampType()),
        StructField("seen", TimestampNTZType()),
        StructField("history", ArrayType(TimestampType())),
        StructField("marks", MapType(StringType(), TimestampType())),
        StructField("_before", BEFORE),
    ]
)
EXPECTED_TYPES = {
    "_op": pa.string(),
    "id": pa.int64(),
    "tiny": pa.int8(),
    "small": pa.int16(),
    "count": pa.int32(),
    "ratio": pa.float32(),
    "score": pa.float64(),
    "price": pa.decimal128(10, 2),
    "name": pa.string(),
    "flag": pa.bool_(),
    "blob": pa.binary(),
    "day": pa.date32(),
    "updated": pa.timestamp("us", tz="UTC"),
    "seen": pa.timestamp("us"),
    "history": pa.list_(pa.timestamp("us", tz="UTC")),
    "marks": pa.map_(pa.string(), pa.timestamp("us", tz="UTC")),
    "_before": pa.struct(
        [
            pa.field("id", pa.int64()),
            pa.field("name", pa.string()),
            pa.field("updated", pa.timestamp("us", tz="UTC")),
            pa.field("seen", pa.timestamp("us")),
            pa.field("blob", pa.binary()),
        ]
    ),
}

# 2024-01-02 03:04:05.123456 UTC
INSTANT = dt.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)
EARLIER = dt.datetime(2023, 7, 1, 12, 0, 0, tzinfo=UTC)  # summer: a DST offset in DST zones
WALL = dt.datetime(2024, 5, 6, 7, 8, 9, 10)  # a TIMESTAMP_NTZ wall-clock value


def micros(instant: dt.datetime) -> int:
    return (instant - dt.datetime(1970, 1, 1, tzinfo=UTC)) // dt.timedelta(microseconds=1)


def spark_ts(instant: dt.datetime) -> dt.datetime:
    """What the 4.0 Row writer receives for a TIMESTAMP: naive, in the local zone."""
    return TimestampType().fromInternal(micros(instant))


@pytest.fixture
def local_tz(request: pytest.FixtureRequest) -> Iterator[str]:
    """The executor's OS zone (`TZ`), restored afterwards; parametrize with a zone name."""
    zone = getattr(request, "param", "Asia/Shanghai")
    old = os.environ.get("TZ")
    os.environ["TZ"] = zone
    time.tzset()
    try:
        yield zone
    finally:
        if old is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = old
        time.tzset()


def full_row() -> Row:
    return Row(
        _op="u",
        id=7,
        tiny=-8,
        small=300,
        count=70_000,
        ratio=0.5,
        score=2.25,
        price=Decimal("12345678.90"),
        name="widget ✓",
        flag=True,
        blob=bytearray(b"\x00\xffnew"),
        day=dt.date(2024, 2, 29),
        updated=spark_ts(INSTANT),
        seen=WALL,
        history=[spark_ts(EARLIER), None, spark_ts(INSTANT)],
        marks={"a": spark_ts(EARLIER), "b": None},
        _before=Row(
            id=7,
            name="old",
            updated=spark_ts(EARLIER),
            seen=WALL,
            blob=bytearray(b"\x00old"),
        ),
    )


def null_row() -> Row:
    return Row(**{name: None for name in SCHEMA.fieldNames()})


def convert(rows: list[Row], schema: StructType = SCHEMA, chunk: int = 100) -> pa.Table:
    batches = list(rows_to_batches(iter(rows), schema, chunk))
    assert batches, "no batch for non-empty input"
    return pa.Table.from_batches(batches)


@pytest.mark.parametrize("local_tz", ["Asia/Shanghai", "America/Los_Angeles", "UTC"], indirect=True)
def test_every_type_lands_in_the_arrow_writer_types_with_the_same_values(local_tz: str) -> None:
    table = convert([full_row()])

    assert {f.name: f.type for f in table.schema} == EXPECTED_TYPES
    got = table.to_pylist()[0]
    assert got["_op"] == "u"
    assert (got["id"], got["tiny"], got["small"], got["count"]) == (7, -8, 300, 70_000)
    assert (got["ratio"], got["score"]) == (0.5, 2.25)
    assert got["price"] == Decimal("12345678.90")
    assert got["name"] == "widget ✓"
    assert got["flag"] is True
    assert got["day"] == dt.date(2024, 2, 29)
    # bytearray in, Arrow binary out (read back as bytes).
    assert got["blob"] == b"\x00\xffnew" and type(got["blob"]) is bytes
    # TIMESTAMP: the instant Spark held, whatever the local zone.
    assert got["updated"] == INSTANT
    assert got["history"] == [EARLIER, None, INSTANT]
    assert dict(got["marks"]) == {"a": EARLIER, "b": None}
    # TIMESTAMP_NTZ: the wall-clock value, untouched and naive.
    assert got["seen"] == WALL and got["seen"].tzinfo is None
    assert got["_before"] == {
        "id": 7,
        "name": "old",
        "updated": EARLIER,
        "seen": WALL,
        "blob": b"\x00old",
    }


def test_nested_timestamps_are_instants_not_local_wall_clocks(local_tz: str) -> None:
    # The regression: `_before.updated` arrived naive and Arrow read it as UTC, shifting it
    # by the executor's offset (8 hours in Asia/Shanghai).
    before = convert([full_row()]).column("_before").combine_chunks()
    updated = before.field("updated")
    assert updated.type == pa.timestamp("us", tz="UTC")
    assert updated.cast(pa.int64()).to_pylist() == [micros(EARLIER)]


def test_nulls_at_every_level(local_tz: str) -> None:
    nested_nulls = Row(
        **{
            **full_row().asDict(),
            "blob": None,
            "updated": None,
            "seen": None,
            "history": None,
            "marks": None,
            "_before": Row(id=None, name=None, updated=None, seen=None, blob=None),
        }
    )
    table = convert([null_row(), nested_nulls])

    assert {f.name: f.type for f in table.schema} == EXPECTED_TYPES
    everything_null, inner_nulls = table.to_pylist()
    assert everything_null == dict.fromkeys(SCHEMA.fieldNames())
    assert inner_nulls["_before"] == dict.fromkeys(BEFORE.fieldNames())
    for name in ("blob", "updated", "seen", "history", "marks"):
        assert inner_nulls[name] is None


@pytest.mark.parametrize("local_tz", ["America/New_York"], indirect=True)
def test_the_repeated_hour_keeps_both_instants(local_tz: str) -> None:
    # 2024-11-03 01:30 happens twice in New York: EDT (05:30 UTC), then EST (06:30 UTC).
    first = dt.datetime(2024, 11, 3, 5, 30, tzinfo=UTC)
    second = dt.datetime(2024, 11, 3, 6, 30, tzinfo=UTC)
    rows = [spark_ts(first), spark_ts(second)]
    assert rows[0].replace(fold=0) == rows[1].replace(fold=0)  # same wall clock
    schema = StructType([StructField("updated", TimestampType())])

    table = convert([Row(updated=value) for value in rows], schema)

    assert table.column("updated").to_pylist() == [first, second]


def test_aware_datetimes_pass_through_unchanged(local_tz: str) -> None:
    schema = StructType([StructField("updated", TimestampType())])
    aware = dt.datetime(2024, 1, 2, 11, 4, 5, tzinfo=dt.timezone(dt.timedelta(hours=8)))

    table = convert([Row(updated=aware)], schema)

    assert table.column("updated").to_pylist() == [INSTANT.replace(microsecond=0)]


def test_batches_are_cut_at_chunk_size_and_empty_input_yields_none(local_tz: str) -> None:
    schema = StructType([StructField("id", LongType()), StructField("at", TimestampType())])
    rows = [Row(id=i, at=spark_ts(INSTANT)) for i in range(5)]

    batches = list(rows_to_batches(iter(rows), schema, 2))

    assert [b.num_rows for b in batches] == [2, 2, 1]
    assert all(b.schema == batches[0].schema for b in batches)
    assert pa.Table.from_batches(batches).column("id").to_pylist() == list(range(5))
    assert list(rows_to_batches(iter([]), schema, 2)) == []


def test_schemas_without_timestamps_need_no_conversion(local_tz: str) -> None:
    schema = StructType(
        [
            StructField("id", LongType()),
            StructField("_before", StructType([StructField("id", LongType())])),
        ]
    )
    rows: list[Any] = [Row(id=1, _before=Row(id=0)), Row(id=2, _before=None)]

    table = convert(rows, schema)

    assert table.to_pylist() == [{"id": 1, "_before": {"id": 0}}, {"id": 2, "_before": None}]


# -- the driver side: logging where Spark runs it, warnings, the checkpoint location ------

_LOG_PROBE = """
import logging, sys
from ticdc_sink.datasource import _log_to_stderr
if sys.argv[1] == "configured":
    logging.basicConfig(level=logging.WARNING, format="user %(message)s")
_log_to_stderr()
_log_to_stderr()
logging.getLogger("ticdc_sink.writer").info("ticdc batch report {}")
logging.getLogger("ticdc_sink.datasource").warning("a warning")
"""


def test_driver_side_workers_log_info_to_stderr_like_spark() -> None:
    # A fresh interpreter: what Spark's driver-side Python workers are, logging unconfigured.
    done = subprocess.run(
        [sys.executable, "-c", _LOG_PROBE, "bare"], capture_output=True, text=True, check=True
    )
    lines = done.stderr.splitlines()
    assert len(lines) == 2, done.stderr  # one handler, however often it is asked for
    assert re.fullmatch(
        r"\d\d/\d\d/\d\d \d\d:\d\d:\d\d INFO ticdc_sink.writer: ticdc batch report \{\}", lines[0]
    )
    assert lines[1].endswith(" WARNING ticdc_sink.datasource: a warning")
    # Logging someone configured is left alone.
    done = subprocess.run(
        [sys.executable, "-c", _LOG_PROBE, "configured"], capture_output=True, text=True, check=True
    )
    assert done.stderr.splitlines() == ["user a warning"]


@pytest.mark.parametrize(
    ("names", "warned"),
    [
        (("key", "value", "topic"), True),
        (("value",), True),
        (("KEY", "Value", "partition", "headers", "_op"), True),
        (("id", "value"), False),
        (("key", "topic"), False),
        (("key", "value", "topic", "partition", "offset", "timestamp", "timestampType"), True),
    ],
)
def test_a_frame_shaped_for_sparks_kafka_sink_is_warned_about_once(
    names: tuple[str, ...], warned: bool, caplog: pytest.LogCaptureFixture
) -> None:
    input_batch._warn_kafka_shaped.cache_clear()
    metadata = InputConfig().layout().reserved
    with caplog.at_level(logging.WARNING, logger="ticdc_sink.input_batch"):
        warn_if_kafka_shaped(names, metadata)
        warn_if_kafka_shaped(names, metadata)
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == (1 if warned else 0)
    if warned:
        assert (
            "are Kafka records, as Spark's Kafka sink takes them and its Kafka source reads"
            in (messages[0])
        )
        assert "(docs/guides/writing.md, 'The input contract')" in messages[0]


def test_a_read_given_the_writers_options_notes_them_once_and_reads(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # One option map for a write and a read of the same topic.
    warn_ignored_by_reads.cache_clear()
    shared = {
        "kafka.bootstrap.servers": "127.0.0.1:1",
        "topic": "orders",
        "protocol": "canal-json",
        "enable-tidb-extension": "true",
        "max-message-bytes": "1048576",
        "partition": "table",
    }
    with caplog.at_level(logging.WARNING, logger="ticdc_sink.read.options"):
        config = _read_config(shared)
        _read_config(shared)
    assert config.tidb_extension and config.ignored == ("max-message-bytes", "partition")
    (message,) = [r.getMessage() for r in caplog.records]
    assert message == (
        "ticdc: ignored options that only a write takes (they mean nothing to a read): "
        "max-message-bytes, partition"
    )


@pytest.mark.parametrize(
    ("options", "warned"),
    [
        ({"protocol": "avro", "schema-registry": "http://127.0.0.1:1"}, True),
        ({"protocol": "debezium", "debezium-output-old-value": "false"}, True),
        ({"protocol": "debezium"}, False),
        ({"protocol": "simple"}, False),
        ({"protocol": "canal-json"}, False),
        ({"protocol": "open-protocol", "open-output-old-value": "false"}, True),
        ({"protocol": "open-protocol"}, False),
    ],
)
@pytest.mark.parametrize("raw", [True, False])
def test_raw_change_events_without_old_values_are_warned_about_as_ticdc_does(
    options: dict[str, str], warned: bool, raw: bool, caplog: pytest.LogCaptureFixture
) -> None:
    warn_raw_change_events_without_old_values.cache_clear()
    options = {
        "kafka.bootstrap.servers": "127.0.0.1:1",
        "topic": "t_{schema}_{table}",
        "output-raw-change-event": str(raw).lower(),
        **options,
    }
    with caplog.at_level(logging.WARNING, logger="ticdc_sink.codec.config"):
        _config(options)
        _config(options)
    messages = [
        r.getMessage() for r in caplog.records if "output-raw-change-event" in r.getMessage()
    ]
    assert len(messages) == (1 if warned and raw else 0)
    if messages:
        assert messages[0].startswith(
            f"ticdc: output-raw-change-event=true with protocol {options['protocol']}, "
        )
        option = next((name for name in options if name.endswith("output-old-value")), None)
        assert (f"Send old values ({option}=true)" in messages[0]) == (option is not None)


def test_a_checkpoint_location_the_sink_cannot_write_fails_the_plan(tmp_path: Path) -> None:
    blocker = tmp_path / "chk"
    blocker.write_text("a file, not a directory")
    source = TiCDCDataSource(
        {
            "kafka.bootstrap.servers": "127.0.0.1:1",
            "topic": "t",
            "database": "db",
            "table": "t",
            "checkpointlocation": str(blocker),
        }
    )
    schema = StructType([StructField("id", LongType())])
    with pytest.raises(ConfigError) as caught:
        source.writer(schema, False)
    assert caught.value.option == "checkpointLocation"
    assert f"'{blocker}/ticdc' (Not a directory)" in str(caught.value)


def test_a_writers_tasks_and_commit_step_make_producers_with_its_factory() -> None:
    source = TiCDCDataSource(
        {
            "kafka.bootstrap.servers": "127.0.0.1:1",
            "topic": "t",
            "database": "db",
            "table": "t",
            "primary-key": "id",
            "protocol": "simple",
        }
    )
    writer = source.writer(StructType([StructField("id", LongType())]), False)
    producers: list[FakeProducer] = []

    def factory(config: Any) -> FakeProducer:
        producers.append(FakeProducer(partitions=1))
        return producers[-1]

    writer.producer_factory = factory
    message = writer.write(iter([pa.RecordBatch.from_pydict({"id": pa.array([1], pa.int64())})]))
    writer.commit([message])

    task, commit = producers
    assert [v["type"] for v in task.values()] == ["BOOTSTRAP", "INSERT"]
    assert [v["type"] for v in commit.values()] == ["WATERMARK"]
    assert task.closed and commit.closed
