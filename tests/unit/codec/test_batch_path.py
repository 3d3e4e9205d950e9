"""Every protocol's writer sends, for record batches, exactly what the row path sends
(`row_path.write_rows`: `write_change` per row): same keys and values, same partitions, same
order, or the same error. Every encoder renders whole batches (`encode_batch`) and lists
what it leaves to the row path (`EncodedBatch.row_path`); the writer takes those from
`encode_row`, once, before it sends anything."""

from __future__ import annotations

import json
from typing import Any

import attrs
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.batches import (
    ARROW_FIELDS,
    COLUMN_TYPES,
    COMMIT_TS,
    change_batches,
    reading,
    spark_schema,
)
from tests.support.fake_producer import FakeProducer
from tests.support.fake_registry import FakeRegistry
from tests.support.hypothesis_profiles import examples
from tests.support.row_path import outcome, read_changes, rows_by_table, write_rows
from tests.support.strategies import record_batches
from ticdc_sink.codec import EncodedBatch, Message
from ticdc_sink.config import SinkConfig
from ticdc_sink.errors import InputError
from ticdc_sink.events import ChangeBatch, RowChange
from ticdc_sink.writer import TaskWriter, gather_record_batches, make_plan, write_batches
from ticdc_sink.writer.bootstrap import BootstrapSchedule
from ticdc_sink.writer.task import GATHER_ROWS_PER_TABLE

# How far write_batches gathers record batches: each on its own (1), a few together, or
# all of a test's (the default).
GATHERING = st.sampled_from([1, 5, GATHER_ROWS_PER_TABLE])

PROTOCOLS: dict[str, dict[str, str]] = {
    "simple-json": {"protocol": "simple", "send-bootstrap-in-msg-count": "3"},
    "simple-avro": {"protocol": "simple", "encoding-format": "avro"},
    "avro": {"protocol": "avro", "schema-registry": "http://127.0.0.1:1"},
    "avro-ext-strings": {
        "protocol": "avro",
        "schema-registry": "http://127.0.0.1:1",
        "enable-tidb-extension": "true",
        "avro-decimal-handling-mode": "string",
        "avro-bigint-unsigned-handling-mode": "string",
    },
    "avro-checksum": {
        "protocol": "avro",
        "schema-registry": "http://127.0.0.1:1",
        "enable-tidb-extension": "true",
        "avro-decimal-handling-mode": "string",
        "avro-bigint-unsigned-handling-mode": "string",
        "integrity-check-level": "correctness",
    },
    "debezium": {"protocol": "debezium"},
    "debezium-no-schema-old": {
        "protocol": "debezium",
        "debezium-disable-schema": "true",
        "debezium-output-old-value": "false",
        "enable-tidb-extension": "true",
    },
    "debezium-avro": {
        "protocol": "debezium-avro",
        "schema-registry": "http://127.0.0.1:1",
        "debezium-output-old-value": "false",
    },
    "canal-json": {"protocol": "canal-json"},
    "canal-json-ext": {
        "protocol": "canal-json",
        "enable-tidb-extension": "true",
        "content-compatible": "true",
    },
}


def _plan(with_table: bool, protocol: str, partition: str, **extra: str) -> Any:
    options = {
        "kafka.bootstrap.servers": "127.0.0.1:1",
        "topic": "t_{schema}_{table}",
        "database": "shop",
        "primary-key": "id",
        "column-types": json.dumps(COLUMN_TYPES),
        "time-zone": "Asia/Shanghai",
        "partition": partition,
        **PROTOCOLS[protocol],
        **extra,
    }
    if partition == "columns":
        options["partition-columns"] = "c_double,c_text,id"
    if not with_table:
        options["table"] = "users"
    config = SinkConfig.from_options(options)
    return make_plan(config, spark_schema(with_table), COMMIT_TS, batch_id=None)


def _assert_both_paths_send_the_same(
    batches: list[pa.RecordBatch], plan: Any, rows_per_table: int = GATHER_ROWS_PER_TABLE
) -> None:
    """The column-wise path sends what the row path sends (or fails with the same error);
    record batches are gathered as `gather_record_batches` does (`rows_per_table` 1: not
    at all), and several tables in a record batch go table by table, each in input order."""
    layout = plan.config.input.layout()
    gathered = gather_record_batches(batches, layout, rows_per_table=rows_per_table)
    by_table = [rows_by_table(b) for b in gathered]
    expected = outcome(lambda: write_rows(by_table, plan, FakeRegistry()))
    producer = FakeProducer()
    actual = outcome(
        lambda: (
            write_batches(
                batches,
                plan,
                producer_factory=producer,
                registry_factory=FakeRegistry(),
                bootstraps=BootstrapSchedule(),  # a fresh worker, as the row path's
                rows_per_table=rows_per_table,
            ),
            producer.sent,
        )[1]
    )
    assert actual == expected


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
@pytest.mark.parametrize("with_table", [False, True], ids=["one table", "tables by _table"])
@pytest.mark.parametrize("partition", ["table", "index-value", "columns"])
@settings(max_examples=examples(10), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_batches_send_what_the_row_path_sends(
    protocol: str, with_table: bool, partition: str, data: Any
) -> None:
    batches = data.draw(record_batches(with_table))
    plan = _plan(with_table, protocol, partition)
    _assert_both_paths_send_the_same(batches, plan, data.draw(GATHERING))


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
@pytest.mark.parametrize("with_table", [False, True], ids=["one table", "tables by _table"])
@settings(max_examples=examples(10), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_raw_change_events_send_what_the_row_path_sends(
    protocol: str, with_table: bool, data: Any
) -> None:
    # output-raw-change-event: key-changing UPDATEs stay whole on both paths.
    batches = data.draw(record_batches(with_table))
    plan = _plan(with_table, protocol, "index-value", **{"output-raw-change-event": "true"})
    _assert_both_paths_send_the_same(batches, plan, data.draw(GATHERING))


# TiCDC refuses column selectors with row checksums (test_column_selector.py)
@pytest.mark.parametrize("protocol", [p for p in PROTOCOLS if p != "avro-checksum"])
@pytest.mark.parametrize("with_table", [False, True], ids=["one table", "tables by _table"])
@pytest.mark.parametrize("partition", ["index-value", "columns"])
@settings(max_examples=examples(8), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_selected_columns_send_what_the_row_path_sends(
    protocol: str, with_table: bool, partition: str, data: Any
) -> None:
    # column-selectors: both paths send the same selected columns, split the same UPDATEs.
    batches = data.draw(record_batches(with_table))
    selectors = [
        {"matcher": ["shop.*"], "columns": ["id", "c_double", "c_text", "c_d*", "!c_dec*"]}
    ]
    plan = _plan(with_table, protocol, partition, **{"column-selectors": json.dumps(selectors)})
    _assert_both_paths_send_the_same(batches, plan)


class _Counting:
    """An encoder that counts the calls of the writer."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.rows = 0
        self.batches = 0

    def encode_row(self, change: RowChange) -> Message:
        self.rows += 1
        return self.inner.encode_row(change)

    def encode_batch(self, batch: ChangeBatch, key_indexes: tuple[int, ...]) -> EncodedBatch:
        self.batches += 1
        return self.inner.encode_batch(batch, key_indexes)

    def encode_bootstrap(self) -> Message | None:
        return self.inner.encode_bootstrap()


def _one_batch(protocol: str, rows: int) -> tuple[TaskWriter, FakeProducer, ChangeBatch, Any]:
    """A task writer, its producer, a batch of `rows` inserts, and the counting encoder the
    task will use for it."""
    record = pa.RecordBatch.from_pydict(
        {
            "id": pa.array(range(rows), pa.int64()),
            **{f.name: pa.nulls(rows, f.type) for f in ARROW_FIELDS[1:]},
            "_op": pa.array(["c"] * rows),
            "_commit_ts": pa.array([COMMIT_TS] * rows, pa.int64()),
        }
    )
    plan = _plan(False, protocol, "table")
    producer = FakeProducer()
    task = TaskWriter(plan, producer, 0, FakeRegistry())
    (batch,) = change_batches([record], plan, task)
    output = task.output_for(batch.table)
    output.encoder = counting = _Counting(output.encoder)
    return task, producer, batch, counting


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_a_refused_value_fails_with_the_row_path_error_and_sends_nothing(protocol: str) -> None:
    task, producer, batch, counting = _one_batch(protocol, 4)
    bad = batch.table.column_position("c_int_u")
    batch.columns[bad] = [None, "7", None, None]  # not an int: every protocol refuses it
    with pytest.raises(InputError) as caught:
        task.write_batch(batch)
    assert producer.sent == []
    # One column-wise pass; the row path only for the refused row, whose error it raises
    # (debezium-avro leaves whole batches to the row path: rows 0 and 1).
    rows_encoded = 2 if protocol == "debezium-avro" else 1
    assert (counting.batches, counting.rows) == (1, rows_encoded)
    with pytest.raises(InputError) as expected:
        for event in batch.to_events(task.outputs[("shop", "users")].key_indexes):
            counting.inner.encode_row(event)
    assert str(caught.value) == str(expected.value)
    assert "c_int_u" in str(caught.value)


def test_a_value_only_the_row_path_writes_is_taken_from_it_once() -> None:
    # Debezium text read with surrogateescape (invalid UTF-8) cannot be an Arrow string:
    # that row's messages come from encode_row, the others from one column-wise pass, and
    # the batch is not encoded a second time.
    task, producer, batch, counting = _one_batch("debezium", 4)
    text = batch.table.column_position("c_text")
    batch.columns[text] = ["a", b"\xff".decode("utf-8", "surrogateescape"), None, "b"]
    task.write_batch(batch)
    assert (counting.batches, counting.rows) == (1, 1)
    keys = task.outputs[("shop", "users")].key_indexes
    expected = [counting.inner.encode_row(e).value for e in batch.to_events(keys)]
    assert [value for *_, value in producer.sent] == expected
    assert b"\xff" in expected[1]


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_of_several_refused_values_the_first_message_names_its_own(protocol: str) -> None:
    # Row 1's column sorts after row 2's (Simple writes columns in name order): the error
    # is row 1's, as the row path raises it.
    task, producer, batch, counting = _one_batch(protocol, 3)
    batch.columns[batch.table.column_position("c_int_u")] = [None, "7", None]
    batch.columns[batch.table.column_position("c_bigint")] = [None, None, "8"]
    with pytest.raises(InputError, match="c_int_u"):
        task.write_batch(batch)
    assert producer.sent == []


def _row_path_into(producer: FakeProducer, batches: list[pa.RecordBatch], plan: Any) -> Any:
    """`_row_path` into `producer`: every row through read_changes and write_change."""
    task = TaskWriter(plan, producer, 0, FakeRegistry())
    for batch in batches:
        for change in read_changes(batch, **reading(plan, task.schema_for)):
            task.write_change(change)
    return producer.sent


@pytest.mark.parametrize("partition", ["table", "index-value", "ts"])
@settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_tables_sharing_a_partition_keep_each_tables_input_order(partition: str, data: Any) -> None:
    # One fixed topic with one partition: every table's messages meet in it. Each table's
    # messages are the row path's, in the row path's order; only how tables interleave
    # within a record batch differs (table by table).
    batches = data.draw(record_batches(True))
    plan = _plan(True, "simple-json", partition)
    plan = make_plan(
        attrs.evolve(plan.config, routing=attrs.evolve(plan.config.routing, topic="one-topic")),
        spark_schema(True),
        COMMIT_TS,
        batch_id=None,
    )
    expected = outcome(lambda: _row_path_into(FakeProducer(partitions=1), batches, plan))
    producer = FakeProducer(partitions=1)
    actual = outcome(
        lambda: (
            write_batches(batches, plan, producer_factory=producer, bootstraps=BootstrapSchedule()),
            producer.sent,
        )[1]
    )
    if expected[0] == "error":
        assert actual[0] == "error"
        return
    assert sorted(actual[1], key=repr) == sorted(expected[1], key=repr)
    for table in (b'"table":"t1"', b'"table":"t2"'):
        mine = [m for m in expected[1] if table in (m[3] or b"")]
        assert [m for m in actual[1] if table in (m[3] or b"")] == mine


def test_a_record_batch_of_several_tables_is_rendered_column_wise_per_table() -> None:
    rows = 6
    record = pa.RecordBatch.from_pydict(
        {
            "id": pa.array(range(rows), pa.int64()),
            **{f.name: pa.nulls(rows, f.type) for f in ARROW_FIELDS[1:]},
            "_op": pa.array(["c"] * rows),
            "_commit_ts": pa.array([COMMIT_TS] * rows, pa.int64()),
            "_table": pa.array(["t1", "t2", "t1", "t3", "t2", "t1"]),
        }
    )
    plan = _plan(True, "debezium", "index-value")
    producer = FakeProducer()
    task = TaskWriter(plan, producer, 0, FakeRegistry())
    counting = {}
    for name in ("t1", "t2", "t3"):
        output = task.output_for(task.schema_for("shop", name))
        output.encoder = counting[name] = _Counting(output.encoder)
    for group in change_batches([record], plan, task):
        task.write_batch(group)
    assert {n: (c.batches, c.rows) for n, c in counting.items()} == {
        "t1": (1, 0),
        "t2": (1, 0),
        "t3": (1, 0),
    }
    ids = [json.loads(value)["payload"]["after"]["id"] for *_, value in producer.sent]
    assert ids == [0, 2, 5, 1, 4, 3]
