"""Reads of the protocols that carry their column types in each row (debezium, canal-json,
open-protocol), over a topic in memory: the schema the driver finds in the first row,
the rows, ops, commit ts and before images, watermarks left out, and what each protocol
cannot tell; and every protocol, avro and debezium-avro through an in-memory registry,
reading what Simple reads less its losses (on Kafka and Apicurio:
`tests/integration/test_read_protocols.py`)."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.support.fake_registry import FakeRegistry
from tests.support.hypothesis_profiles import examples
from tests.support.read_log import FakeTopicLog, protocol_messages, simple_messages, table
from ticdc_sink.config import CodecConfig
from ticdc_sink.errors import DecodeError, SchemaError
from ticdc_sink.events import Op
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.plan import plan_read
from ticdc_sink.read.rows import BEFORE, COMMIT_TS, DATABASE, OP, TABLE
from ticdc_sink.read.scan import read_range
from ticdc_sink.schema import MySQLType, TableSchema

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
    # charsets are the ones a table without table-ddl gets (utf8mb4), left out here
    shown = [attrs.evolve(c.type, charset=None, collation=None) for c in plan.table.columns]
    assert [t.to_sql() for t in shown] == types
    assert plan.table.primary_key == ("id",)


def test_content_compatible_canal_json_gives_the_whole_types() -> None:
    codec = CodecConfig(protocol="canal-json", enable_tidb_extension=True, content_compatible=True)
    log = FakeTopicLog({0: protocol_messages(codec, ITEMS, CHANGES)})
    plan, rows = _read(_config("canal-json"), log)
    # TiDB's display widths (`bigint(20)`, `tinyint(3) unsigned`) are the defaults: left out
    shown = [attrs.evolve(c.type, charset=None, collation=None) for c in plan.table.columns]
    assert [t.to_sql() for t in shown] == [
        "bigint",
        "varchar(20)",
        "decimal(10,2)",
        "tinyint unsigned",
        "enum('a','b')",
    ]
    assert [r["kind"] for r in rows] == ["a", "b", "b", "b"]


def test_a_batched_open_protocol_message_gives_every_row() -> None:
    log = _log("open-protocol")
    assert len(log.records["t", 0]) < len(CHANGES)  # several events per Kafka message
    _, rows = _read(_config("open-protocol"), log)
    assert [r["_op"] for r in rows] == ["INSERT", "INSERT", "UPDATE", "DELETE"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_message_of_another_protocol_names_topic_partition_offset(protocol: str) -> None:
    other = "canal-json" if protocol != "canal-json" else "debezium"
    log = _log(protocol)
    end = len(log.records["t", 0])
    log.records["t", 0].append(_log(other).records["t", 0][0]._replace(offset=end))
    with pytest.raises(DecodeError, match=rf"^ticdc: topic t partition 0 offset {end}: "):
        _read(_config(protocol), log)
    _, rows = _read(_config(protocol, **{"on-bad-message": "skip"}), log)
    assert len(rows) == len(CHANGES)


def _avro_log(registry: FakeRegistry) -> FakeTopicLog:
    codec = CodecConfig(protocol="avro", enable_tidb_extension=True)
    return FakeTopicLog({0: protocol_messages(codec, ITEMS, CHANGES[:2], registry=registry)})


def _avro_read(log: FakeTopicLog, registry: FakeRegistry, **options: str) -> list[dict]:
    config = _config("avro", **{"schema-registry": "http://unused:1", **options})
    plan = plan_read(config, log, schema_for_id=registry.schema_text)
    return [
        row
        for offsets in plan.ranges
        for batch in read_range(
            config, plan.table, plan.known, offsets, log=log, schema_for_id=registry.schema_text
        )
        for row in batch.to_pylist()
    ]


def test_a_truncated_avro_body_names_topic_partition_offset() -> None:
    registry = FakeRegistry()
    log = _avro_log(registry)
    record = log.records["t", 0][1]
    log.records["t", 0][1] = record._replace(value=record.value[:-3])
    with pytest.raises(DecodeError, match=r"offset 1: the value does not decode with its writer"):
        _avro_read(log, registry)
    assert [r["id"] for r in _avro_read(log, registry, **{"on-bad-message": "skip"})] == [1]


def test_an_unknown_avro_schema_id_names_topic_partition_offset() -> None:
    registry = FakeRegistry()
    log = _avro_log(registry)
    record = log.records["t", 0][1]
    unknown = record.value[:1] + (999).to_bytes(4, "big") + record.value[5:]
    log.records["t", 0][1] = record._replace(value=unknown)
    with pytest.raises(DecodeError, match=r"offset 1: schema id 999 is unknown to the registry"):
        _avro_read(log, registry)


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


# --- decode to rows, every protocol against Simple's lossless read ------------------------

_INTS = {"tinyint": 8, "smallint": 16, "mediumint": 24, "int": 32, "bigint": 64}
_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=10)
_KINDS: dict[str, tuple[str, st.SearchStrategy[Any]]] = {
    "float": ("float", st.floats(width=32, allow_nan=False, allow_infinity=False)),
    "double": ("double", st.floats(allow_nan=False, allow_infinity=False)),
    "decimal": (
        "decimal(12,3)",
        st.integers(-(10**11) + 1, 10**11 - 1).map(lambda n: str(Decimal(n).scaleb(-3))),
    ),
    "date": ("date", st.dates(dt.date(1000, 1, 1)).map(dt.date.isoformat)),
    "datetime": (
        "datetime(3)",
        st.datetimes(dt.datetime(1000, 1, 1)).map(lambda d: d.isoformat(" ", "milliseconds")),
    ),
    "timestamp": (
        "timestamp(3)",
        st.datetimes(dt.datetime(1970, 1, 2), dt.datetime(2038, 1, 1)).map(
            lambda d: d.isoformat(" ", "milliseconds")
        ),
    ),
    "time": (
        "time",
        st.integers(-838, 838).map(lambda h: f"{'-' if h < 0 else ''}{abs(h):02d}:59:00"),
    ),
    "year": ("year", st.integers(1901, 2155)),
    "enum": ("enum('a','b','c')", st.integers(1, 3)),
    "set": ("set('a','b','c')", st.integers(0, 7)),
    "bit": ("bit(5)", st.integers(0, 31)),
    "bit64": ("bit(64)", st.integers(0, 2**64 - 1)),
    "json": ("json", st.integers().map(lambda n: json.dumps({"k": n}))),
    "varchar": ("varchar(64)", _TEXT),
    "text": ("text", _TEXT),
    "varbinary": ("varbinary(16)", st.binary(max_size=16)),
    "blob": ("blob", st.binary(max_size=16)),
}


@st.composite
def column_values(draw: st.DrawFn) -> tuple[str, st.SearchStrategy[Any]]:
    """A MySQL type and a strategy of its mounter values (ticdc_sink.events)."""
    kind = draw(st.sampled_from([*_INTS, *_KINDS]))
    if kind in _INTS:
        bits = _INTS[kind]
        if draw(st.booleans()):
            return f"{kind} unsigned", st.integers(0, 2**bits - 1)
        return kind, st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    return _KINDS[kind]


def _normal(protocol: str, mysql: MySQLType, value: Any) -> Any:
    """A read value in the form every protocol's read of it has (the module's losses)."""
    if value is None:
        return None
    base = mysql.base
    if base == "decimal":
        # debezium writes a DECIMAL as a double: its value, not its digits, survives;
        # debezium-avro writes the decimal logical type.
        return float(Decimal(str(value))) if protocol == "debezium" else Decimal(str(value))
    if base in ("enum", "set") and isinstance(value, str):
        # canal-json and open-protocol carry the index / bitmask, not the members.
        members = value.split(",") if base == "set" and value else [value] if value else []
        if base == "enum":
            return mysql.elements.index(value) + 1
        return sum(1 << mysql.elements.index(m) for m in members)
    if base in ("bit", "bigint", "enum", "set") and isinstance(value, Decimal | int):
        return int(value)
    if base in ("datetime", "timestamp", "time") and "." in value:
        # debezium writes as many fraction digits as the value needs, not the fsp.
        return value.rstrip("0").rstrip(".")
    return value


def _protocol_rows(protocol: str, schema: TableSchema, changes: list) -> list[dict]:
    extra = {"avro_bigint_unsigned_handling_mode": "string"} if protocol == "debezium-avro" else {}
    codec = CodecConfig(protocol=protocol, enable_tidb_extension=True, **extra)
    registry = FakeRegistry()
    if protocol == "simple":  # its schema comes in the BOOTSTRAP before the rows
        records: list[Any] = simple_messages(schema, changes, watermark=2000)
    else:
        records = protocol_messages(codec, schema, changes, watermark=2000, registry=registry)
    registered = protocol in ("avro", "debezium-avro")
    options = {"schema-registry": "http://unused:1"} if registered else {}
    config = _config(protocol, **options)
    log = FakeTopicLog({0: records})
    plan = plan_read(config, log, schema_for_id=registry.schema_text)
    rows = []
    for offsets in plan.ranges:
        batches = read_range(
            config, plan.table, plan.known, offsets, log=log, schema_for_id=registry.schema_text
        )
        for batch in batches:
            rows += batch.to_pylist()
    return rows


def _expected(protocol: str, schema: TableSchema, reference: list[dict]) -> list[dict]:
    """Simple's read of the changes, less what `protocol` does not carry: avro sends no
    old row (an UPDATE has no `_before`) and a DELETE is a tombstone holding the key
    columns only, without commit ts."""
    if protocol != "avro":
        return reference
    out = []
    for row in reference:
        row = {**row, BEFORE: None}
        if row[OP] == "DELETE":
            row = {k: (v if k in ("id", OP, DATABASE, TABLE) else None) for k, v in row.items()}
            row[COMMIT_TS] = 0
        out.append(row)
    return out


def _normal_row(protocol: str, schema: TableSchema, row: dict) -> dict:
    out = {c.name: _normal(protocol, c.type, row[c.name]) for c in schema.columns}
    before = row[BEFORE]
    out[BEFORE] = before and {
        c.name: _normal(protocol, c.type, before[c.name]) for c in schema.columns
    }
    return out | {k: row[k] for k in (OP, COMMIT_TS, DATABASE, TABLE)}


@pytest.mark.parametrize("protocol", ["avro", "debezium-avro", *PROTOCOLS])
@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(column_values(), min_size=1, max_size=6), st.data())
def test_every_protocol_reads_what_simple_reads_less_its_losses(
    protocol: str, columns: list[tuple[str, st.SearchStrategy[Any]]], data: st.DataObject
) -> None:
    schema = table(columns={f"c{i}": mysql for i, (mysql, _) in enumerate(columns)})

    def image(key: int) -> tuple[Any, ...]:
        return (key, *(data.draw(st.none() | values) for _, values in columns))

    changes = []
    for key in range(data.draw(st.integers(1, 4))):
        op = data.draw(st.sampled_from(Op))
        row, before = image(key), image(key)
        if op is Op.DELETE:
            row = None
        elif op is Op.INSERT:
            before = None
        changes.append((op, 1000 + key, row, before))
    # An avro topic of tombstones alone holds key columns only: no table to read.
    assume(protocol != "avro" or any(op is not Op.DELETE for op, *_ in changes))
    reference = _protocol_rows("simple", schema, changes)
    got = _protocol_rows(protocol, schema, changes)
    assert [_normal_row(protocol, schema, r) for r in got] == [
        _normal_row(protocol, schema, r) for r in _expected(protocol, schema, reference)
    ]


@pytest.mark.parametrize("protocol", ["canal-json", "open-protocol"])
def test_only_output_updated_columns_reads_whole_before_images(protocol: str) -> None:
    # The message keeps the old values of the changed columns; the others did not change.
    codec = CodecConfig(
        protocol=protocol, enable_tidb_extension=True, only_output_updated_columns=True
    )
    update = (Op.UPDATE, 12, (1, "uno", "1.50", 7, 2), (1, "one", "1.50", 7, 1))
    log = FakeTopicLog({0: protocol_messages(codec, ITEMS, [CHANGES[0], update], watermark=20)})
    _, rows = _read(_config(protocol), log)
    assert [r["_op"] for r in rows] == ["INSERT", "UPDATE"]
    before = rows[1]["_before"]
    assert (before["id"], before["name"], Decimal(str(before["amount"])), before["flag"]) == (
        1,
        "one",
        Decimal("1.50"),
        7,
    )


def test_an_open_protocol_update_without_old_values_is_an_insert_on_the_wire() -> None:
    # With only-output-updated-columns and no changed column (or open-output-old-value
    # =false) the UPDATE has no `p`: its message is an INSERT's byte for byte, so no
    # reader can tell them apart (docs/guides/reading.md, "What each protocol keeps").
    row = (1, "one", "1.50", 7, 1)
    for options in ({"only_output_updated_columns": True}, {"open_output_old_value": False}):
        codec = CodecConfig(protocol="open-protocol", **options)
        [update] = protocol_messages(codec, ITEMS, [(Op.UPDATE, 12, row, row)])
        [insert] = protocol_messages(codec, ITEMS, [(Op.INSERT, 12, row, None)])
        assert update == insert


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_newest_first_row_by_commit_ts_gives_the_columns_whatever_its_partition(
    protocol: str,
) -> None:
    # Partition 0 is read from a row after the table gained a column (ts 20), partition 1
    # from one before (ts 10): the newer row decides, not the partition read last.
    codec = CodecConfig(protocol=protocol, enable_tidb_extension=True)
    wider = table("users", {"name": "varchar(20)", "age": "int"})
    before = protocol_messages(codec, table("users"), [(Op.INSERT, 10, (1, "a"), None)])
    after = protocol_messages(codec, wider, [(Op.INSERT, 20, (2, "b", 30), None)])
    log = FakeTopicLog({0: before + after, 1: before + after})
    starting = json.dumps({"t": {"0": len(before), "1": 0}})
    plan = plan_read(_config(protocol, startingOffsets=starting), log)
    assert sorted(plan.table.column_names) == ["age", "id", "name"]  # open-protocol sorts
