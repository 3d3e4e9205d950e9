"""Bad input through Spark, case by case (design §6, issue 6 item 5): every failure raises
the sink's own error class with a message that names what to fix, and no failed batch
leaves a watermark or committed state behind.

Spark wraps what the Python data source raises (on the driver: when it builds the writer;
in a task: as the task's failure), so each case checks the exception text for the class
name (`ConfigError`, `InputError`, ...), the `ticdc: ` prefix and a fragment naming the
option, column, value or table to fix. Then the no-commit check: the state under the
checkpoint location holds no watermark and no committed table schema, and the topic holds
no watermark (or does not exist, for errors raised before any task).

Every case of the option and value tables (tests/support/bad_input.py) runs without Spark
in tests/unit/test_bad_input.py; here a few of each kind prove what Spark shows of them,
beside the cases that need Spark, the broker or the registry to happen at all.

Cost: cases that fail on the driver run no task; cases that fail in a task write one or two
rows in one partition. One Spark session, broker and registry for the run.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.bad_input import (
    DRIVER_CASES,
    KEY,
    TABLE,
    VALUE_CASES,
    assert_error,
    case_options,
    failure_text,
    value_rows,
)
from tests.support.registry import TestSchemaRegistry
from ticdc_sink._local_broker import free_port
from ticdc_sink.codec.protocols import decoder_for
from ticdc_sink.decode import DecodedRow, DecodedWatermark, decode_record
from ticdc_sink.events import Op
from ticdc_sink.state import SinkState

pytestmark = pytest.mark.integration

REG_USER, REG_PASSWORD = "matrix-user", "matrix-Pa55"


# -- helpers ------------------------------------------------------------------------------


def save(df: Any, bootstrap: str, options: dict[str, str], mode: str = "append") -> None:
    writer = df.write.format("ticdc").mode(mode)
    if bootstrap:
        writer = writer.option("kafka.bootstrap.servers", bootstrap)
    for name, value in options.items():
        writer = writer.option(name, value)
    writer.save()


def topic_exists(broker: Any, topic: str) -> bool:
    metadata = broker.admin().list_topics(topic, timeout=10)
    found = metadata.topics.get(topic)
    return found is not None and found.error is None and bool(found.partitions)


def assert_nothing_committed(
    broker: Any, topic: str, checkpoint: Path, *, protocol: str = "simple", created: bool = True
) -> None:
    """No watermark and no committed schema under the checkpoint; no watermark in the topic
    (`created=False`: the topic must not even exist, the write failed before any task)."""
    if checkpoint.exists():
        state = SinkState(str(checkpoint))
        assert state.last_watermark() is None
        tables = checkpoint / "ticdc" / "tables"
        assert not tables.exists() or not os.listdir(tables)
    if not created:
        assert not topic_exists(broker, topic)
        return
    if protocol == "avro" or not topic_exists(broker, topic):
        return  # avro has no watermarks
    decoder = decoder_for(protocol)
    records = broker.consume_all(topic)
    kinds = [type(e) for r in records for e in decode_record(decoder, r.key, r.value)]
    assert DecodedWatermark not in kinds


@pytest.fixture
def case(topics, tmp_path):
    """(topic, checkpoint dir) of one case: a topic per case, so no-watermark checks see
    only that case's messages."""
    return topics("bim"), tmp_path / "chk"


# -- options, sink-uri, TOML, topic and partition settings: fail on the driver ----------------

# A few of tests/support/bad_input.py's cases (tests/unit/test_bad_input.py runs them all
# without Spark): an option, a TOML file, a sink URI, a librdkafka setting, an event filter.
THROUGH_SPARK = {
    "unknown-option",
    "toml-bad-value",
    "sink-uri-unknown-param",
    "kafka-bad-value",
    "event-filter-unknown-column",
}
SPARK_DRIVER_CASES = [c for c in DRIVER_CASES if c[0] in THROUGH_SPARK]


@pytest.mark.parametrize(
    ("options", "cls", "fragments"),
    [c[1:] for c in SPARK_DRIVER_CASES],
    ids=[c[0] for c in SPARK_DRIVER_CASES],
)
def test_bad_settings_fail_on_the_driver(spark, broker, case, tmp_path, options, cls, fragments):
    topic, checkpoint = case
    merged = case_options(
        options, bootstrap=broker.bootstrap, topic=topic, checkpoint=checkpoint, files=tmp_path
    )
    brokers_given = "sink-uri" in merged or "kafka.bootstrap.server" in merged
    bootstrap = "" if brokers_given else broker.bootstrap
    df = spark.createDataFrame([(1, "x")], "id bigint, name string")
    with pytest.raises(Exception) as failure:
        save(df, bootstrap, merged)
    assert_error(failure.value, cls, *fragments)
    assert_nothing_committed(broker, topic, checkpoint, created=False)


def test_overwrite_mode_is_refused(spark, broker, case):
    topic, checkpoint = case
    df = spark.createDataFrame([(1, "x")], "id bigint, name string")
    with pytest.raises(Exception) as failure:
        save(df, broker.bootstrap, {"topic": topic, **TABLE}, mode="overwrite")
    assert_error(failure.value, "ConfigError", "mode 'overwrite' is not supported", "append")
    assert_nothing_committed(broker, topic, checkpoint, created=False)


def test_an_unsupported_spark_type_is_named(spark, broker, case):
    topic, checkpoint = case
    df = spark.sql("select 1L as id, interval '1' day as waited")
    with pytest.raises(Exception) as failure:
        save(df, broker.bootstrap, {"topic": topic, **TABLE})
    assert_error(failure.value, "SchemaError", "waited")
    assert_nothing_committed(broker, topic, checkpoint, created=False)


def test_complete_output_mode_is_refused(spark, broker, case, tmp_path):
    topic, checkpoint = case
    counts = spark.readStream.format("rate").option("rowsPerSecond", 1).load().groupBy().count()
    query = (
        counts.writeStream.format("ticdc")
        .outputMode("complete")
        .option("checkpointLocation", str(checkpoint))
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("topic", topic)
        .option("database", "db")
        .option("table", "t")
        .start()
    )
    try:
        with pytest.raises(Exception) as failure:
            query.awaitTermination(120)
    finally:
        query.stop()
    assert_error(failure.value, "ConfigError", "output mode 'complete' is not supported")
    assert_nothing_committed(broker, topic, checkpoint, created=False)


# -- data values: fail in a task ------------------------------------------------------------

# A few of the value cases (all of them: tests/unit/test_bad_input.py): a range, a time,
# the change type.
SPARK_VALUE_CASES = [
    c for c in VALUE_CASES if c[0] in {"tinyint-above", "timestamp-range", "unknown-op"}
]


def _frame(spark: Any, rows: list, columns: str) -> Any:
    schema = f"_op string, id bigint, {columns}"
    return spark.createDataFrame(value_rows(rows, columns), schema).coalesce(1)


@pytest.mark.parametrize(
    ("rows", "columns", "types", "cls", "fragments"),
    [c[1:] for c in SPARK_VALUE_CASES],
    ids=[c[0] for c in SPARK_VALUE_CASES],
)
def test_bad_values_fail_the_task(spark, broker, case, rows, columns, types, cls, fragments):
    topic, checkpoint = case
    options = {
        "topic": topic,
        **TABLE,
        "primary-key": "id",
        "checkpointLocation": str(checkpoint),
        "column-types": json.dumps(types),
    }
    with pytest.raises(Exception) as failure:
        save(_frame(spark, rows, columns), broker.bootstrap, options)
    assert_error(failure.value, cls, "db.t", *fragments)
    assert_nothing_committed(broker, topic, checkpoint)


def test_null_in_a_not_null_column(spark, broker, case):
    topic, checkpoint = case
    ddl = "CREATE TABLE t (id bigint NOT NULL, v int NOT NULL, PRIMARY KEY (id))"
    df = spark.createDataFrame([("c", 1, None)], "_op string, id bigint, v int").coalesce(1)
    options = {
        "topic": topic,
        "database": "db",
        "table-ddl": ddl,
        "checkpointLocation": str(checkpoint),
    }
    with pytest.raises(Exception) as failure:
        save(df, broker.bootstrap, options)
    assert_error(failure.value, "InputError", "db.t", "column 'v'", "NULL")
    assert_nothing_committed(broker, topic, checkpoint)


def test_a_missing_table_name(spark, broker, case):
    topic, checkpoint = case
    df = spark.createDataFrame([("c", 1, "t")], "_op string, id bigint, _table string")
    options = {"topic": topic, "checkpointLocation": str(checkpoint)}
    with pytest.raises(Exception) as failure:
        save(df.coalesce(1), broker.bootstrap, options)
    assert_error(
        failure.value, "SchemaError", "no database name", "option 'database'", "'_database'"
    )
    assert_nothing_committed(broker, topic, checkpoint, created=False)


def test_a_before_image_of_the_wrong_shape(spark, broker, case):
    topic, checkpoint = case
    df = spark.createDataFrame(
        [("u", 1, 2, (1, 1))], "_op string, id bigint, v bigint, _before struct<id:bigint,w:bigint>"
    ).coalesce(1)
    options = {"topic": topic, **TABLE, "primary-key": "id", "checkpointLocation": str(checkpoint)}
    with pytest.raises(Exception) as failure:
        save(df, broker.bootstrap, options)
    assert_error(failure.value, "InputError", "column '_before'", "db.t", "'v'", "id, v")
    assert_nothing_committed(broker, topic, checkpoint)


def test_a_negative_commit_ts(spark, broker, case):
    topic, checkpoint = case
    df = spark.createDataFrame([("c", 1, -5)], "_op string, id bigint, _commit_ts bigint")
    options = {"topic": topic, **TABLE, "primary-key": "id", "checkpointLocation": str(checkpoint)}
    with pytest.raises(Exception) as failure:
        save(df.coalesce(1), broker.bootstrap, options)
    assert_error(failure.value, "InputError", "column '_commit_ts'", "db.t", "-5", "TSO")
    assert_nothing_committed(broker, topic, checkpoint)


def test_a_commit_ts_of_the_wrong_type(spark, broker, case):
    topic, checkpoint = case
    df = spark.createDataFrame([("c", 1, "soon")], "_op string, id bigint, _commit_ts string")
    options = {"topic": topic, **TABLE, "primary-key": "id", "checkpointLocation": str(checkpoint)}
    with pytest.raises(Exception) as failure:
        save(df.coalesce(1), broker.bootstrap, options)
    assert_error(failure.value, "SchemaError", "column '_commit_ts'", "bigint TSO")
    assert_nothing_committed(broker, topic, checkpoint)


def test_commit_ts_going_backwards_for_a_key(spark, broker, case):
    topic, checkpoint = case
    ts = 450_000_000_000_000_000
    df = spark.createDataFrame(
        [("c", 1, ts + 10), ("u", 1, ts)], "_op string, id bigint, _commit_ts bigint"
    ).coalesce(1)
    options = {"topic": topic, **TABLE, "primary-key": "id", "checkpointLocation": str(checkpoint)}
    with pytest.raises(Exception) as failure:
        save(df, broker.bootstrap, options)
    assert_error(
        failure.value,
        "InputError",
        "commit ts goes backwards",
        "id=1",
        "db.t",
        "sortWithinPartitions",
    )
    assert_nothing_committed(broker, topic, checkpoint)


# -- protocol-specific input ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("protocol", "fragments"),
    [
        ("debezium", ["debezium-output-old-value", "_before"]),
        ("canal-json", ["_before"]),
        ("open-protocol", ["_before", "open-output-old-value=false"]),
    ],
)
def test_an_update_without_before_image(spark, broker, case, protocol, fragments):
    topic, checkpoint = case
    df = spark.createDataFrame([("u", 1, "x")], "_op string, id bigint, name string").coalesce(1)
    options = {
        "topic": topic,
        **TABLE,
        "protocol": protocol,
        "primary-key": "id",
        "enable-tidb-extension": "true",
        "checkpointLocation": str(checkpoint),
    }
    with pytest.raises(Exception) as failure:
        save(df, broker.bootstrap, options)
    assert_error(failure.value, "InputError", "db.t", *fragments)
    assert_nothing_committed(broker, topic, checkpoint, protocol=protocol)


@pytest.fixture(scope="module")
def auth_registry():
    with TestSchemaRegistry(user=REG_USER, password=REG_PASSWORD) as running:
        yield running


def _avro_options(topic: str, checkpoint: Path, url: str, **extra: str) -> dict[str, str]:
    return {
        "topic": topic,
        **TABLE,
        "protocol": "avro",
        "primary-key": "id",
        "schema-registry": url,
        "checkpointLocation": str(checkpoint),
        **extra,
    }


def test_avro_schema_the_registry_refuses_as_incompatible(spark, broker, registry, case, tmp_path):
    topic, checkpoint = case
    first = spark.createDataFrame([(1, "x")], "id bigint, name string").coalesce(1)
    save(first, broker.bootstrap, _avro_options(topic, tmp_path / "first", registry.url))
    changed = spark.createDataFrame([(2, 5)], "id bigint, name bigint").coalesce(1)
    with pytest.raises(Exception) as failure:
        save(changed, broker.bootstrap, _avro_options(topic, checkpoint, registry.url))
    assert_error(failure.value, "RegistryError", f"{topic}-value", "409", "incompatible")
    assert_nothing_committed(broker, topic, checkpoint, protocol="avro")


def test_avro_registry_unreachable(spark, broker, case):
    topic, checkpoint = case
    url = f"http://127.0.0.1:{free_port()}"
    df = spark.createDataFrame([(1, "x")], "id bigint, name string").coalesce(1)
    options = _avro_options(topic, checkpoint, url, **{"schema-registry-timeout-ms": "2000"})
    started = time.monotonic()
    with pytest.raises(Exception) as failure:
        save(df, broker.bootstrap, options)
    assert time.monotonic() - started < 60
    assert_error(failure.value, "RegistryError", url)
    assert_nothing_committed(broker, topic, checkpoint, protocol="avro")


def test_avro_registry_refuses_the_credentials(spark, broker, auth_registry, case):
    topic, checkpoint = case
    df = spark.createDataFrame([(1, "x")], "id bigint, name string").coalesce(1)
    options = _avro_options(
        topic,
        checkpoint,
        auth_registry.url,
        **{"schema-registry-user": REG_USER, "schema-registry-password": "wrong-Pa55"},
    )
    with pytest.raises(Exception) as failure:
        save(df, broker.bootstrap, options)
    assert_error(failure.value, "RegistryError", "401", "schema-registry-user")
    assert "wrong-Pa55" not in failure_text(failure.value)
    assert_nothing_committed(broker, topic, checkpoint, protocol="avro")


# -- broker states ----------------------------------------------------------------------------


def test_an_unreachable_broker_fails_within_the_bound_and_is_named(spark, case):
    topic, checkpoint = case
    closed = f"127.0.0.1:{free_port()}"
    df = spark.createDataFrame([(1, "x")], "id bigint, name string").coalesce(1)
    options = {
        "topic": topic,
        **TABLE,
        **KEY,
        "broker-timeout-ms": "3000",
        "checkpointLocation": str(checkpoint),
    }
    started = time.monotonic()
    with pytest.raises(Exception) as failure:
        save(df, closed, options)
    assert time.monotonic() - started < 60
    assert_error(failure.value, "DeliveryError", closed, "kafka.bootstrap.servers")
    assert SinkState(str(checkpoint)).last_watermark() is None


def test_a_missing_topic_without_auto_create(spark, broker, case):
    topic, checkpoint = case
    df = spark.createDataFrame([(1, "x")], "id bigint, name string").coalesce(1)
    options = {
        "topic": topic,
        **TABLE,
        **KEY,
        "auto-create-topic": "false",
        "checkpointLocation": str(checkpoint),
    }
    with pytest.raises(Exception) as failure:
        save(df, broker.bootstrap, options)
    assert_error(
        failure.value, "DeliveryError", f"topic {topic} does not exist", "auto-create-topic"
    )
    assert_nothing_committed(broker, topic, checkpoint, created=False)


# -- column names in any case (issue 13, item 1) ---------------------------------------------


def test_metadata_columns_are_matched_in_any_case(spark, broker, case):
    topic, checkpoint = case
    df = spark.createDataFrame(
        [("c", 1, "a"), ("D", 1, "a")], "_OP string, id bigint, name string"
    ).coalesce(1)
    save(df, broker.bootstrap, {"topic": topic, **TABLE, "primary-key": "ID"})
    decoder = decoder_for("simple")
    events = [decoder.decode_message(r.key, r.value) for r in broker.consume_all(topic)]
    rows = [e for e in events if isinstance(e, DecodedRow)]
    # Before the fix `_OP` was a table column: two INSERTs carrying `_OP` as data.
    assert [(e.op, e.data or e.old) for e in rows] == [
        (Op.INSERT, {"id": 1, "name": "a"}),
        (Op.DELETE, {"id": 1, "name": "a"}),
    ]


def test_two_spellings_of_a_metadata_column_are_refused_on_the_driver(spark, broker, case):
    topic, checkpoint = case
    df = spark.createDataFrame([("c", "d", 1)], "_op string, _OP string, id bigint")
    options = {"topic": topic, **TABLE, "checkpointLocation": str(checkpoint)}
    with pytest.raises(Exception) as failure:
        save(df, broker.bootstrap, options)
    assert_error(
        failure.value, "SchemaError", "2 columns named '_op' in some case ('_op' and '_OP')"
    )
    assert_nothing_committed(broker, topic, checkpoint, created=False)


# -- commit ts and watermarks (issue 13, items 2-4) ---------------------------------------------


def test_a_zero_commit_ts(spark, broker, case):
    topic, checkpoint = case
    df = spark.createDataFrame([("c", 1, 0)], "_op string, id bigint, _commit_ts bigint")
    options = {"topic": topic, **TABLE, "primary-key": "id", "checkpointLocation": str(checkpoint)}
    with pytest.raises(Exception) as failure:
        save(df.coalesce(1), broker.bootstrap, options)
    assert_error(failure.value, "InputError", "column '_commit_ts'", "db.t", "value 0", "TSO")
    assert_nothing_committed(broker, topic, checkpoint)


def test_a_checkpoint_location_that_is_a_file_fails_before_any_task(spark, broker, case, tmp_path):
    topic, _ = case
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("x")
    df = spark.createDataFrame([(1, "x")], "id bigint, name string")
    with pytest.raises(Exception) as failure:
        save(df, broker.bootstrap, {"topic": topic, **TABLE, "checkpointLocation": str(blocker)})
    assert_error(
        failure.value,
        "ConfigError",
        f"option 'checkpointLocation' is '{blocker}'",
        f"'{blocker}/ticdc' (Not a directory)",
    )
    assert "NotADirectoryError" not in failure_text(failure.value).splitlines()[-1]
    assert_nothing_committed(broker, topic, tmp_path / "unused", created=False)


def _watermarks(broker: Any, topic: str) -> list[int]:
    decoder = decoder_for("simple")
    events = [decoder.decode_message(r.key, r.value) for r in broker.consume_all(topic)]
    return [e.commit_ts for e in events if isinstance(e, DecodedWatermark)]


def test_rows_below_an_earlier_watermark_are_refused(spark, broker, case):
    topic, checkpoint = case
    ts = 450_000_000_000_000_000
    options = {
        "topic": topic,
        **TABLE,
        "primary-key": "id",
        "partition-num": "1",
        "checkpointLocation": str(checkpoint),
    }
    frame = "_op string, id bigint, _commit_ts bigint"
    save(spark.createDataFrame([("c", 1, ts)], frame).coalesce(1), broker.bootstrap, options)
    assert _watermarks(broker, topic) == [ts]
    late = spark.createDataFrame([("c", 2, ts + 5), ("c", 3, ts - 5)], frame).coalesce(1)
    with pytest.raises(Exception) as failure:
        save(late, broker.bootstrap, options)
    assert_error(
        failure.value,
        "InputError",
        f"row of db.t with key (id=3) has commit ts {ts - 5}, at or below watermark {ts}",
        "allow-commit-ts-below-watermark",
    )
    # The consumer saw one watermark and no row after it; the state still holds it.
    assert _watermarks(broker, topic) == [ts]
    assert SinkState(str(checkpoint)).last_watermark() == ts

    # Allowed explicitly: the rows go out, no watermark goes backwards, the report says so.
    save(late, broker.bootstrap, {**options, "allow-commit-ts-below-watermark": "true"})
    assert _watermarks(broker, topic) == [ts, ts + 5]
    reports = [json.loads(p.read_text()) for p in (checkpoint / "ticdc" / "reports").iterdir()]
    last = max(reports, key=lambda r: r["commit_ts"])
    assert (last["below_watermark"], last["watermark"]) == (1, ts + 5)


def test_partition_num_above_an_existing_topic_count(spark, broker, case):
    # tiflow SetPartitionNum: "the number of partition (4) specified in sink-uri is more than
    # that of actual topic (2)". Keys would go to partitions the topic does not have.
    topic, checkpoint = case
    broker.create_topic(topic, 2)
    df = spark.createDataFrame([(1, "x")], "id bigint, name string").coalesce(1)
    options = {
        "topic": topic,
        **TABLE,
        **KEY,
        "partition-num": "4",
        "checkpointLocation": str(checkpoint),
    }
    with pytest.raises(Exception) as failure:
        save(df, broker.bootstrap, options)
    assert_error(
        failure.value,
        "ConfigError",
        f"option 'partition-num' is 4, more than the 2 partitions of topic {topic}",
        "set partition-num to at most 2",
    )
    assert_nothing_committed(broker, topic, checkpoint)
