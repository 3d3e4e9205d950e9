"""`output-raw-change-event=true`: an UPDATE that changes the key is sent as one UPDATE
(tiflow `SingleTableTxn.TrySplitAndSortUpdateEvent` skips the split), with the new row's
Kafka key and partition (tiflow `IndexValueDispatcher`, `ColumnsDispatcher` and the
encoders' `HandleKeyColInfos` read `Columns`, the new image, of an UPDATE). Every protocol,
on the row path (`write_change`) and the column-wise path (`write_batches`); messages are
read back with the protocol's decoder."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import types as T

from tests.support.fake_producer import FakeProducer
from tests.support.row_path import read_changes
from ticdc_sink import tso
from ticdc_sink.codec.protocols import decoder_for
from ticdc_sink.config import SinkConfig
from ticdc_sink.decode import DecodedRow, DecoderSettings, decode_record
from ticdc_sink.events import Op
from ticdc_sink.writer import TaskWriter, make_plan, write_batches

COMMIT_TS = tso.compose(1_700_000_000_000)
PARTITIONS = 8

PROTOCOLS: dict[str, dict[str, str]] = {
    "simple-json": {"protocol": "simple"},
    "simple-avro": {"protocol": "simple", "encoding-format": "avro"},
    "avro": {"protocol": "avro", "schema-registry": "http://127.0.0.1:1"},
    "avro-ext": {
        "protocol": "avro",
        "schema-registry": "http://127.0.0.1:1",
        "enable-tidb-extension": "true",
    },
    "debezium": {"protocol": "debezium"},
    "canal-json": {"protocol": "canal-json"},
    "canal-json-ext": {"protocol": "canal-json", "enable-tidb-extension": "true"},
    "open-protocol": {"protocol": "open-protocol"},
}

_TABLE = [
    T.StructField("id", T.LongType(), nullable=False),
    T.StructField("email", T.StringType()),
    T.StructField("name", T.StringType()),
]
_SPARK_SCHEMA = T.StructType(
    [*_TABLE, T.StructField("_op", T.StringType()), T.StructField("_before", T.StructType(_TABLE))]
)
_ARROW_TABLE = [
    pa.field("id", pa.int64(), nullable=False),
    pa.field("email", pa.string()),
    pa.field("name", pa.string()),
]


class Registry:
    """Registers every schema under a new id and gives it back by id."""

    def __init__(self, *args: Any) -> None:
        self.schemas: dict[int, str] = {}

    def schema_id(self, topic: str, record_name: str, schema: str, *, is_key: bool) -> int:
        for schema_id, known in self.schemas.items():
            if known == schema:
                return schema_id
        self.schemas[len(self.schemas) + 1] = schema
        return len(self.schemas)

    def close(self) -> None:
        pass


def _plan(protocol: str, *, raw: bool, **options: str) -> Any:
    config = SinkConfig.from_options(
        {
            "kafka.bootstrap.servers": "127.0.0.1:1",
            "topic": "t_{schema}_{table}",
            "database": "shop",
            "table": "users",
            "table-ddl": "CREATE TABLE users (id BIGINT PRIMARY KEY, email VARCHAR(64) "
            "UNIQUE, name TEXT)",
            "partition": "index-value",
            "send-bootstrap-in-msg-count": "0",
            "output-raw-change-event": str(raw).lower(),
            **PROTOCOLS[protocol],
            **options,
        }
    )
    return make_plan(config, _SPARK_SCHEMA, COMMIT_TS, batch_id=None)


def _batch(rows: list[tuple[str, dict[str, Any], dict[str, Any] | None]]) -> pa.RecordBatch:
    columns: dict[str, Any] = {
        f.name: pa.array([row[f.name] for _, row, _ in rows], f.type) for f in _ARROW_TABLE
    }
    columns["_op"] = pa.array([op for op, _, _ in rows], pa.string())
    columns["_before"] = pa.array([before for _, _, before in rows], pa.struct(_ARROW_TABLE))
    return pa.RecordBatch.from_pydict(columns)


OLD = {"id": 1, "email": "a@x", "name": "ann"}
NEW = {"id": 2, "email": "b@x", "name": "ann"}
KEY_CHANGE = _batch([("u", NEW, OLD)])


def _row_path(batch: pa.RecordBatch, plan: Any, registry: Any) -> list[Any]:
    producer = FakeProducer(PARTITIONS)
    task = TaskWriter(plan, producer, 0, registry)
    layout = plan.config.input.layout()
    for change in read_changes(
        batch,
        layout=layout,
        tables=task.schema_for,
        default_database="shop",
        default_table="users",
        default_commit_ts=COMMIT_TS,
        time_zone=plan.config.codec.time_zone,
    ):
        task.write_change(change)
    task.producer.flush()  # open-protocol: what its batchers hold
    return producer.sent


def _batch_path(batch: pa.RecordBatch, plan: Any, registry: Any) -> list[Any]:
    producer = FakeProducer(PARTITIONS)
    write_batches([batch], plan, producer_factory=producer, registry_factory=lambda *a: registry)
    return producer.sent


def _rows(protocol: str, sent: list[Any], registry: Registry) -> list[tuple[int, DecodedRow]]:
    """(partition, row) of each row message, decoded as a consumer reads it."""
    options = PROTOCOLS[protocol]
    decoder = decoder_for(
        options["protocol"],
        DecoderSettings(
            encoding_format=options.get("encoding-format", "json"),
            schema_for_id=registry.schemas.__getitem__,
        ),
    )
    out = []
    for _topic, partition, key, value in sent:
        for event in decode_record(decoder, key, value):
            if isinstance(event, DecodedRow):
                out.append((partition, event))
    return out


def _partition_of_insert(protocol: str, row: dict[str, Any]) -> int:
    """The partition an INSERT of `row` goes to (index-value hashes the handle key)."""
    registry = Registry()
    sent = _batch_path(_batch([("c", row, None)]), _plan(protocol, raw=False), registry)
    [(partition, _)] = _rows(protocol, sent, registry)
    return partition


@pytest.mark.parametrize("path", [_row_path, _batch_path], ids=["row path", "column-wise"])
@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_a_key_changing_update_is_one_update_with_the_new_rows_partition(
    protocol: str, path: Any
) -> None:
    registry = Registry()
    rows = _rows(protocol, path(KEY_CHANGE, _plan(protocol, raw=True), registry), registry)
    assert len(rows) == 1
    partition, row = rows[0]
    # Without a bootstrap Simple's decoder gives values as text: compare text.
    assert row.data is not None and str(row.data["id"]) == "2"
    if protocol.startswith("avro"):
        # Avro carries no old values (tiflow ValidateProtocol: outputOldValue is false);
        # without the TiDB extension its messages do not tell the operation at all.
        assert row.old is None
        assert row.op is (Op.UPDATE if protocol == "avro-ext" else Op.INSERT)
    else:
        assert row.op is Op.UPDATE
        assert row.old is not None and str(row.old["id"]) == "1" and row.old["email"] == "a@x"
    assert partition == _partition_of_insert(protocol, NEW)
    assert partition != _partition_of_insert(protocol, OLD)  # the test tells them apart


@pytest.mark.parametrize("path", [_row_path, _batch_path], ids=["row path", "column-wise"])
@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_by_default_a_key_changing_update_is_a_delete_and_an_insert(
    protocol: str, path: Any
) -> None:
    registry = Registry()
    rows = _rows(protocol, path(KEY_CHANGE, _plan(protocol, raw=False), registry), registry)
    assert [row.op for _, row in rows] == [Op.DELETE, Op.INSERT]
    assert [p for p, _ in rows] == [
        _partition_of_insert(protocol, OLD),
        _partition_of_insert(protocol, NEW),
    ]


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_a_unique_key_change_is_one_update_too(protocol: str) -> None:
    # The split also looks at unique keys (tiflow isNonEmptyUniqueOrHandleCol); the
    # partition hashes the handle key only, which did not change.
    same_id = {**NEW, "id": 1}
    batch = _batch([("u", same_id, OLD)])
    for raw, count in ((True, 1), (False, 2)):
        registry = Registry()
        sent = _batch_path(batch, _plan(protocol, raw=raw), registry)
        assert len(_rows(protocol, sent, registry)) == count


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_both_paths_send_the_same_bytes(protocol: str) -> None:
    batch = _batch(
        [
            ("c", OLD, None),
            ("u", NEW, OLD),
            ("u", {**NEW, "name": "bob"}, NEW),
            ("u", {**NEW, "id": 3, "name": None}, {**NEW, "name": "bob"}),
            ("d", {**NEW, "id": 3, "name": None}, None),
        ]
    )
    plan = _plan(protocol, raw=True)
    row_registry, batch_registry = Registry(), Registry()
    assert _batch_path(batch, plan, batch_registry) == _row_path(batch, plan, row_registry)
    assert batch_registry.schemas == row_registry.schemas


def test_the_option_is_read_from_a_changefeed_file_and_the_sink_uri(tmp_path: Any) -> None:
    path = tmp_path / "changefeed.toml"
    path.write_text("[sink.kafka-config]\noutput-raw-change-event = true\n")
    base = {"topic": "t", "kafka.bootstrap.servers": "127.0.0.1:1"}
    assert SinkConfig.from_options({**base, "config": str(path)}).codec.output_raw_change_event
    uri = "kafka://127.0.0.1:9092/t?protocol=canal-json&output-raw-change-event=true"
    assert SinkConfig.from_options({"sink-uri": uri}).codec.output_raw_change_event
    assert not SinkConfig.from_options(base).codec.output_raw_change_event
