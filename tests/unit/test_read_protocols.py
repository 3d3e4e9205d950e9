"""Reads of the protocols that carry their column types in each row (debezium, canal-json,
open-protocol), over a topic in memory: the schema the driver finds in the first row,
the rows, ops, commit ts and before images, watermarks left out, and what each protocol
cannot tell. (avro needs a registry: `tests/integration/test_read_protocols.py`.)"""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.support.read_log import FakeTopicLog, protocol_messages, table
from ticdc_sink.config import CodecConfig
from ticdc_sink.errors import DecodeError, SchemaError
from ticdc_sink.events import Op
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.plan import plan_read
from ticdc_sink.read.scan import read_range

ITEMS = table(
    "items",
    {
        "name": "varchar(20)",
        "amount": "decimal(10,2)",
        "flag": "tinyint unsigned",
        "kind": "enum('a','b')",
    },
)
CHANGES = [
    (Op.INSERT, 10, (1, "one", "1.50", 7, 1), None),
    (Op.INSERT, 11, (2, "two", "2.25", None, 2), None),
    (Op.UPDATE, 12, (1, "uno", "1.75", 8, 2), (1, "one", "1.50", 7, 1)),
    (Op.DELETE, 13, None, (2, "two", "2.25", None, 2)),
]
EXPECTED = [
    ("INSERT", 10, 1, "one", Decimal("1.50"), None),
    ("INSERT", 11, 2, "two", Decimal("2.25"), None),
    ("UPDATE", 12, 1, "uno", Decimal("1.75"), (1, "one", Decimal("1.50"))),
    ("DELETE", 13, 2, "two", Decimal("2.25"), None),
]
PROTOCOLS = ["debezium", "canal-json", "open-protocol"]


def _config(protocol: str, **options: str) -> ReadConfig:
    return ReadConfig.from_options(
        {"kafka.bootstrap.servers": "unused:1", "topic": "t", "protocol": protocol, **options}
    )


def _log(protocol: str, changes=CHANGES, schema=ITEMS) -> FakeTopicLog:
    codec = CodecConfig(protocol=protocol, enable_tidb_extension=True)
    return FakeTopicLog({0: protocol_messages(codec, schema, changes, watermark=20)})


def _read(config: ReadConfig, log: FakeTopicLog) -> tuple[object, list[dict]]:
    plan = plan_read(config, log)
    rows = []
    for offsets in plan.ranges:
        for batch in read_range(config, plan.table, plan.known, offsets, log=log):
            rows += batch.to_pylist()
    return plan, rows


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_rows_ops_commit_ts_and_before_images_read_back(protocol: str) -> None:
    _, rows = _read(_config(protocol), _log(protocol))
    got = [
        (
            r["_op"],
            r["_commit_ts"],
            r["id"],
            r["name"],
            Decimal(str(r["amount"])),
            None if r["_before"] is None else (r["_before"]["id"], r["_before"]["name"]),
        )
        for r in rows
    ]
    assert got == [(*e[:5], None if e[5] is None else e[5][:2]) for e in EXPECTED]
    befores = [r["_before"] and Decimal(str(r["_before"]["amount"])) for r in rows]
    assert befores == [None, None, Decimal("1.50"), None]
    assert {(r["_database"], r["_table"]) for r in rows} == {("db", "items")}
    assert [r["flag"] for r in rows] == [7, None, 8, None]


@pytest.mark.parametrize(
    ("protocol", "types"),
    [
        # debezium: the connect types and tidb_type (enable-tidb-extension) name the base
        # type; a DECIMAL is a double, so its precision is unknown.
        (
            "debezium",
            ["bigint", "varchar(16383)", "decimal(65,30)", "tinyint unsigned", "enum('a','b')"],
        ),
        # canal-json: mysqlType is the base name and flags unless content-compatible; an
        # ENUM's members are not in the message, so it reads as its index.
        (
            "canal-json",
            ["bigint", "varchar(16383)", "decimal(65,30)", "tinyint unsigned", "smallint unsigned"],
        ),
        # open-protocol: a type code and the binary/unsigned flags; columns come sorted
        # by name, as the message holds them.
        (
            "open-protocol",
            ["decimal(65,30)", "tinyint unsigned", "bigint", "smallint unsigned", "varchar(16383)"],
        ),
    ],
)
def test_the_driver_finds_the_closest_mysql_types_in_the_first_row(
    protocol: str, types: list[str]
) -> None:
    plan = plan_read(_config(protocol), _log(protocol))
    assert [c.type.to_sql() for c in plan.table.columns] == types
    assert plan.table.primary_key == ("id",)


def test_content_compatible_canal_json_gives_the_whole_types() -> None:
    codec = CodecConfig(protocol="canal-json", enable_tidb_extension=True, content_compatible=True)
    log = FakeTopicLog({0: protocol_messages(codec, ITEMS, CHANGES)})
    plan, rows = _read(_config("canal-json"), log)
    assert [c.type.to_sql() for c in plan.table.columns] == [
        "bigint(20)",
        "varchar(20)",
        "decimal(10,2)",
        "tinyint(3) unsigned",
        "enum('a','b')",
    ]
    assert [r["kind"] for r in rows] == ["a", "b", "b", "b"]


def test_a_batched_open_protocol_message_gives_every_row() -> None:
    log = _log("open-protocol")
    assert len(log.records[0]) < len(CHANGES)  # several events per Kafka message
    _, rows = _read(_config("open-protocol"), log)
    assert [r["_op"] for r in rows] == ["INSERT", "INSERT", "UPDATE", "DELETE"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_message_of_another_protocol_names_topic_partition_offset(protocol: str) -> None:
    other = "canal-json" if protocol != "canal-json" else "debezium"
    log = _log(protocol)
    end = len(log.records[0])
    log.records[0].append(_log(other).records[0][0]._replace(offset=end))
    with pytest.raises(DecodeError, match=rf"^ticdc: topic t partition 0 offset {end}: "):
        _read(_config(protocol), log)
    _, rows = _read(_config(protocol, **{"on-bad-message": "skip"}), log)
    assert len(rows) == len(CHANGES)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_row_of_other_columns_fails_naming_it(protocol: str) -> None:
    wider = table("items", {"name": "varchar(20)", "extra": "int"})
    codec = CodecConfig(protocol=protocol, enable_tidb_extension=True)
    first = protocol_messages(codec, table("items"), [(Op.INSERT, 10, (1, "a"), None)])
    second = protocol_messages(codec, wider, [(Op.INSERT, 11, (2, "b", 3), None)])
    log = FakeTopicLog({0: first + second})
    with pytest.raises(SchemaError, match=r"offset 1: INSERT db.items has columns"):
        _read(_config(protocol), log)


def test_debezium_without_its_schema_part_is_an_error_naming_the_option() -> None:
    codec = CodecConfig(protocol="debezium", debezium_disable_schema=True)
    log = FakeTopicLog({0: protocol_messages(codec, ITEMS, CHANGES[:1])})
    with pytest.raises(DecodeError, match="offset 0: INSERT db.items carries no field schemas"):
        _read(_config("debezium"), log)
