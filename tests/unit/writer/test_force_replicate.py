"""Tables without a handle key (no primary key, no unique key of NOT NULL columns):
refused on the driver unless `force-replicate`, as TiCDC refuses to replicate them
(tiflow `TableInfo.IsEligible`); with it, each protocol keys their messages as TiCDC does
on an empty handle key (issue 23, finding 10)."""

from __future__ import annotations

import zlib
from pathlib import Path

import orjson
import pyarrow as pa
import pytest
from pyspark.sql import types as T

from tests.support.fake_producer import FakeProducer
from tests.support.fake_registry import FakeRegistry
from ticdc_sink.cli import main
from ticdc_sink.config import SinkConfig
from ticdc_sink.errors import SchemaError
from ticdc_sink.writer import make_plan, write_batches
from ticdc_sink.writer.bootstrap import BootstrapSchedule

COMMIT_TS = 449_000_000_000_000_000
BASE = {"kafka.bootstrap.servers": "127.0.0.1:1", "topic": "t_{schema}_{table}"}
PROTOCOLS = {
    "simple": {"protocol": "simple"},
    "debezium": {"protocol": "debezium"},
    "canal-json": {"protocol": "canal-json"},
    "open-protocol": {"protocol": "open-protocol"},
    "avro": {"protocol": "avro", "schema-registry": "http://127.0.0.1:1"},
}
SCHEMA = T.StructType(
    [
        T.StructField("a", T.IntegerType()),
        T.StructField("b", T.StringType()),
        T.StructField("_op", T.StringType()),
    ]
)
BATCH = pa.record_batch(
    {
        "a": pa.array([1, 2, 3], pa.int32()),
        "b": ["x", "y", "z"],
        "_op": ["c", "c", "d"],
    }
)


def _config(protocol: str, **options: str) -> SinkConfig:
    return SinkConfig.from_options(
        {**BASE, "database": "db", "table": "t", **PROTOCOLS[protocol], **options}
    )


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_a_table_without_a_key_is_refused_on_the_driver(protocol: str) -> None:
    with pytest.raises(SchemaError) as caught:
        make_plan(_config(protocol), SCHEMA, COMMIT_TS, batch_id=None)
    message = caught.value.message
    assert message.startswith("table db.t has no primary key and no unique key of NOT NULL")
    assert "primary-key" in message and "force-replicate=true" in message


@pytest.mark.parametrize(
    ("options", "ddl"),
    [
        ({"primary-key": "a"}, None),
        ({}, "CREATE TABLE db.t (a int NOT NULL, b text, UNIQUE KEY (a))"),
    ],
)
def test_a_primary_key_or_a_not_null_unique_key_is_enough(options, ddl) -> None:
    extra = {**options, **({"table-ddl": ddl} if ddl else {})}
    assert make_plan(_config("simple", **extra), SCHEMA, COMMIT_TS, batch_id=None)


def test_a_nullable_unique_key_is_not_a_handle_key() -> None:
    ddl = "CREATE TABLE db.t (a int, b text, UNIQUE KEY (a))"
    with pytest.raises(SchemaError, match="force-replicate"):
        make_plan(_config("simple", **{"table-ddl": ddl}), SCHEMA, COMMIT_TS, batch_id=None)


def test_rows_naming_their_tables_are_refused_too() -> None:
    schema = T.StructType([*SCHEMA.fields, T.StructField("_table", T.StringType())])
    config = SinkConfig.from_options({**BASE, "database": "db"})
    with pytest.raises(SchemaError, match="the tables the _table column names has no primary"):
        make_plan(config, schema, COMMIT_TS, batch_id=None)


def test_force_replicate_from_the_option_and_the_changefeed_file(tmp_path: Path) -> None:
    assert _config("simple", **{"force-replicate": "true"}).force_replicate
    changefeed = tmp_path / "changefeed.toml"
    changefeed.write_text('force-replicate = true\n[sink]\nprotocol = "debezium"\n')
    config = SinkConfig.from_options({**BASE, "config": str(changefeed)})
    assert config.force_replicate and not config.ignored
    assert not SinkConfig.from_options(BASE).force_replicate


def _sent(protocol: str, **options: str) -> list[tuple[str, int, bytes | None, bytes | None]]:
    config = _config(protocol, **{"force-replicate": "true", "partition-num": "8", **options})
    plan = make_plan(config, SCHEMA, COMMIT_TS, batch_id=None)
    producer = FakeProducer(partitions=8)
    write_batches(
        [BATCH],
        plan,
        producer_factory=producer,
        registry_factory=FakeRegistry(),
        bootstraps=BootstrapSchedule(),
    )
    return [m for m in producer.sent if m[3] is None or b'"BOOTSTRAP"' not in m[3]]


def test_debezium_keys_are_the_empty_key_struct_tiflow_writes() -> None:
    # tiflow pkg/sink/codec/debezium/codec.go EncodeKey over no handle key columns.
    sent = _sent("debezium")
    assert len(sent) == 3
    for _, _, key, _ in sent:
        assert orjson.loads(key) == {
            "payload": {},
            "schema": {
                "type": "struct",
                "name": "default.db.t.Key",
                "optional": False,
                "fields": [],
            },
        }


def test_avro_keys_are_null() -> None:
    # tiflow pkg/sink/codec/avro/avro.go encodeKey: nil without handle key columns.
    sent = _sent("avro", **{"enable-tidb-extension": "true"})
    assert [key for _, _, key, _ in sent] == [None, None, None]


def test_canal_json_pk_names_are_empty() -> None:
    # tiflow cdc/model/sink.go PrimaryKeyColumnNames: an empty (not nil) list.
    sent = _sent("canal-json")
    assert [orjson.loads(value)["pkNames"] for *_, value in sent] == [[], [], []]


@pytest.mark.parametrize("protocol", ["simple", "canal-json", "open-protocol"])
def test_index_value_partitions_by_the_table_name_alone(protocol: str) -> None:
    # tiflow index_value.go hashes the table name, then no handle key column.
    sent = _sent(protocol, partition="index-value")
    expected = zlib.crc32(b"dbt") % 8
    assert {partition for _, partition, _, _ in sent} == {expected}


def test_check_refuses_the_table_and_prints_force_replicate(capsys) -> None:
    ddl = ["--table-ddl", "CREATE TABLE db.t (a int, b text)"]
    assert main(["check", *ddl]) == 2
    assert "force-replicate=true" in capsys.readouterr().err
    assert main(["check", *ddl, "-o", "force-replicate=true"]) == 0
    out = capsys.readouterr().out
    assert "  force-replicate: true\n" in out
    assert "table db.t -> topic db_t" in out
