"""A read followed by a write sends the schema that was read: tables of every MySQL type the
writer supports, written in every protocol with the writer's encoder, read back with the
reader (its Spark schema and `mysql_type` / `ticdc_table` metadata as a read's DataFrame
carries them), and the table derived again from that schema as the writer derives it.

What must hold, for every protocol: the writer derives exactly the table the reader
states (types, NOT NULL, defaults, keys; the table id and version where the protocol
carries them), and the second write sends the schema of the first, byte for byte in the
parts of the messages that carry it, except where `LOSSES` says the protocol does not
carry a type whole. Simple carries the whole table: the second write's table is the first
one (less `SIMPLE_LOSSES`), and its schema version the same. docs/guides/reading.md's "What each
protocol keeps" lists the same losses.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import attrs
import pyspark.sql.types as T
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.fake_registry import FakeRegistry
from tests.support.hypothesis_profiles import examples
from tests.support.read_log import FakeTopicLog
from tests.support.row_path import read_changes
from ticdc_sink.codec.canal_json.values import full_mysql_type
from ticdc_sink.codec.protocols import build_batcher, build_encoder, encode_watermark
from ticdc_sink.config import SinkConfig
from ticdc_sink.ddl import normalize_default, parse_mysql_type
from ticdc_sink.events import Op, RowChange
from ticdc_sink.input_batch import InputLayout
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.plan import plan_read
from ticdc_sink.read.rows import arrow_schema
from ticdc_sink.read.scan import read_range
from ticdc_sink.schema import Column, MySQLType, TableSchema, canonical_type, resolve_type
from ticdc_sink.spark_arrow import read_spark_schema
from ticdc_sink.writer.plan import make_plan

COMMIT_TS = 450_000_000_000_000_000

# protocol name in these tests -> the write options (the read takes protocol,
# encoding-format and the registry).
PROTOCOLS: dict[str, dict[str, str]] = {
    "simple": {"protocol": "simple"},
    "simple-avro": {"protocol": "simple", "encoding-format": "avro"},
    "avro": {"protocol": "avro", "enable-tidb-extension": "true"},
    "avro-string": {
        "protocol": "avro",
        "enable-tidb-extension": "true",
        "avro-decimal-handling-mode": "string",
        "avro-bigint-unsigned-handling-mode": "string",
    },
    "debezium": {"protocol": "debezium"},
    "debezium-tidb": {"protocol": "debezium", "enable-tidb-extension": "true"},
    "canal-json": {"protocol": "canal-json", "enable-tidb-extension": "true"},
    "canal-json-compatible": {
        "protocol": "canal-json",
        "enable-tidb-extension": "true",
        "content-compatible": "true",
    },
    "open-protocol": {"protocol": "open-protocol"},
}


# --- tables -------------------------------------------------------------------------------

_CHARSETS = st.sampled_from(
    [
        "",
        " CHARACTER SET latin1",
        " CHARACTER SET utf8",
        " COLLATE utf8mb4_general_ci",
        " CHARACTER SET gbk",
        " CHARACTER SET ascii COLLATE ascii_bin",
    ]
)
_FLAGS = st.sampled_from(["", " unsigned", " unsigned zerofill", " zerofill"])
_MEMBERS = st.lists(
    st.text("abcxyz é", min_size=1, max_size=4).map(str.strip).filter(bool),
    min_size=1,
    max_size=4,
    unique=True,
)


def _quoted(members: list[str]) -> str:
    return ",".join("'" + m.replace("\\", "\\\\").replace("'", "''") + "'" for m in members)


@st.composite
def mysql_types(draw: Any) -> str:
    """The text of a column type the writer takes (`ddl.parse_mysql_type`)."""
    kind = draw(
        st.sampled_from(
            [
                "int",
                "bool",
                "float",
                "decimal",
                "temporal",
                "date",
                "year",
                "bit",
                "json",
                "enum",
                "set",
                "char",
                "varchar",
                "text",
                "binary",
                "varbinary",
                "blob",
            ]
        )
    )
    if kind == "int":
        base = draw(st.sampled_from(["tinyint", "smallint", "mediumint", "int", "bigint"]))
        width = draw(st.sampled_from(["", "(1)", "(4)", "(11)", "(20)", "(3)"]))
        return base + width + draw(_FLAGS)
    if kind == "bool":
        return "bool"
    if kind == "float":
        base = draw(st.sampled_from(["float", "double"]))
        size = draw(st.sampled_from(["", "(7,2)", "(12,0)", "(22,3)", "(10,0)"]))
        return base + size + draw(st.sampled_from(["", " unsigned"]))
    if kind == "decimal":
        precision = draw(st.integers(1, 65))
        scale = draw(st.integers(0, min(30, precision)))
        size = draw(st.sampled_from(["", f"({precision})", f"({precision},{scale})"]))
        return "decimal" + size + draw(_FLAGS)
    if kind == "temporal":
        base = draw(st.sampled_from(["datetime", "timestamp", "time"]))
        return base + draw(st.sampled_from(["", "(0)", "(1)", "(3)", "(6)"]))
    if kind in ("date", "year", "json"):
        return kind
    if kind == "bit":
        return "bit" + draw(st.sampled_from(["", "(1)", "(5)", "(64)"]))
    if kind in ("enum", "set"):
        return f"{kind}({_quoted(draw(_MEMBERS))})" + draw(_CHARSETS)
    if kind == "char":
        return "char" + draw(st.sampled_from(["", "(0)", "(1)", "(30)", "(255)"])) + draw(_CHARSETS)
    if kind == "varchar":
        return f"varchar({draw(st.integers(0, 16383))})" + draw(_CHARSETS)
    if kind == "text":
        base = draw(st.sampled_from(["tinytext", "text", "mediumtext", "longtext", "text(100)"]))
        return base + draw(_CHARSETS)
    if kind == "binary":
        return "binary" + draw(st.sampled_from(["", "(1)", "(16)"]))
    if kind == "varbinary":
        return f"varbinary({draw(st.integers(1, 65535))})"
    return draw(st.sampled_from(["tinyblob", "blob", "mediumblob", "longblob"]))


_KEY_TYPES = st.sampled_from(
    ["bigint", "int unsigned", "int", "varchar(32)", "char(8)", "decimal(20,4)", "date"]
)


def _defaults(text: str) -> st.SearchStrategy[str]:
    """DEFAULT clauses a column of type `text` may have ("" for none)."""
    t = parse_mysql_type(text)
    base = t.base
    if t.is_integer:
        literals = ["0", "7"] + ([] if t.unsigned else ["-1"])
    elif base in ("float", "double", "decimal"):
        literals = ["0", "1.5"] + ([] if t.unsigned else ["-2.25"])
    elif base in ("char", "varchar"):
        literals = ["''"] + (["'ab'"] if (t.length or 1) >= 2 else [])
    elif base in ("enum", "set"):
        literals = [_quoted([t.elements[0]])]
    elif base == "date":
        literals = ["'2020-01-02'"]
    elif base in ("datetime", "timestamp"):
        literals = ["'2020-01-02 03:04:05'", "CURRENT_TIMESTAMP" + (f"({t.fsp})" if t.fsp else "")]
    elif base == "time":
        literals = ["'01:02:03'"]
    elif base == "year":
        literals = ["'2020'"]
    elif base == "bit":
        literals = ["b'1'"]
    else:
        literals = []
    return st.sampled_from(["", *(" DEFAULT " + literal for literal in literals)])


@st.composite
def tables(draw: Any) -> str:
    """A CREATE TABLE statement: a primary key of one or two columns, columns of every
    type, some NOT NULL, some with a default, a unique key and a plain key now and then."""
    key_count = draw(st.integers(1, 2))
    columns = [(f"k{i}", draw(_KEY_TYPES) + " NOT NULL") for i in range(key_count)]
    for i, text in enumerate(draw(st.lists(mysql_types(), min_size=1, max_size=8))):
        nullable = draw(st.sampled_from(["", " NOT NULL", " NULL"]))
        columns.append((f"c{i}", text + nullable + draw(_defaults(text))))
    keys = [f"PRIMARY KEY ({', '.join(f'`k{i}`' for i in range(key_count))})"]
    plain = [n for n, t in columns if n.startswith("c") and _indexable(t)]
    if plain and draw(st.booleans()):
        unique = draw(st.sampled_from(plain))
        keys.append(f"UNIQUE KEY `u_{unique}` (`{unique}`)")
    if plain and draw(st.booleans()):
        keys.append(f"KEY (`{draw(st.sampled_from(plain))}`)")
    body = ",\n  ".join([f"`{n}` {t}" for n, t in columns] + keys)
    return f"CREATE TABLE `db`.`t` (\n  {body}\n)"


def _indexable(text: str) -> bool:
    return not any(word in text for word in ("text", "blob", "json", "vector"))


# --- one write, one read, one write again ------------------------------------------------


def _write_options(protocol: str) -> dict[str, str]:
    options = {"kafka.bootstrap.servers": "unused:1", "topic": "t", **PROTOCOLS[protocol]}
    if options["protocol"] == "avro":
        options["topic"] = "t_{schema}_{table}"
        options["schema-registry"] = "http://unused:1"
    return options


def _read_options(protocol: str) -> dict[str, str]:
    written = PROTOCOLS[protocol]
    options = {"kafka.bootstrap.servers": "unused:1", "topic": "t"}
    options |= {k: v for k, v in written.items() if k in ("protocol", "encoding-format")}
    if written["protocol"] == "avro":
        options["schema-registry"] = "http://unused:1"
    return options


def _value(column: Column) -> Any:
    """A value of the column's type (the schema is under test, not the values)."""
    t = column.type
    base = t.base
    if t.is_integer or base in ("bit", "enum"):
        return 1
    if base == "set":
        return 1
    if base == "year":
        return 2024
    if base in ("float", "double"):
        return 1.0
    if base == "decimal":
        return "0" + ("." + "0" * t.scale if t.scale else "")
    if base == "date":
        return "2024-02-29"
    if base in ("datetime", "timestamp"):
        return "2024-02-29 01:02:03" + ("." + "0" * t.fsp if t.fsp else "")
    if base == "time":
        return "01:02:03" + ("." + "0" * t.fsp if t.fsp else "")
    if base == "json":
        return '{"a": 1}'
    if base == "vector":
        return "[1,2,3]" if t.length in (None, 3) else "[1]"
    if t.is_binary:
        return b"\x01" * (t.length or 0) if base == "binary" else b"\x01"
    return "x" if (t.length is None or t.length > 0) else ""


def _messages(
    options: dict[str, str], table: TableSchema, row: tuple[Any, ...], registry: FakeRegistry
) -> list[tuple[bytes | None, bytes | None]]:
    config = SinkConfig.from_options(options).codec
    encoder = build_encoder(config, table, build_ts_ms=1, topic="t", registry=registry)
    out = []
    bootstrap = encoder.encode_bootstrap()
    if bootstrap is not None:
        out.append((bootstrap.key, bootstrap.value))
    message = encoder.encode_row(RowChange(table, Op.INSERT, COMMIT_TS, row))
    out.append((message.key, message.value))
    mark = encode_watermark(config, COMMIT_TS + 1, build_ts_ms=1)
    if mark is not None:
        out.append((mark.key, mark.value))
    batcher = build_batcher(config)
    if batcher is None:
        return out
    merged = [done for key, value in out if (done := batcher.add(key or b"", value or b""))]
    last = batcher.flush()
    return merged + ([last] if last else [])


@attrs.frozen
class RoundTrip:
    written: TableSchema  # the first write's table
    read: TableSchema  # the table the read states
    spark_schema: T.StructType  # the read's DataFrame schema
    rewritten: TableSchema  # the second write's table
    first: list[tuple[bytes | None, bytes | None]]
    second: list[tuple[bytes | None, bytes | None]]
    registry: FakeRegistry


def round_trip(protocol: str, ddl: str) -> RoundTrip:
    options = _write_options(protocol)
    names = [c.name for c in _parse(ddl)]
    frame = T.StructType([T.StructField(n, T.StringType()) for n in names])
    written = make_plan(
        SinkConfig.from_options({**options, "table-ddl": ddl}), frame, COMMIT_TS, batch_id=None
    ).tables.template
    row = tuple(_value(c) for c in written.columns)
    registry = FakeRegistry()
    first = _messages(options, written, row, registry)

    config = ReadConfig.from_options(_read_options(protocol))
    log = FakeTopicLog({0: first})
    plan = plan_read(config, log, schema_for_id=registry.schema_text)
    schema = arrow_schema(plan.table)
    spark_schema = read_spark_schema(schema)
    write_plan = make_plan(SinkConfig.from_options(options), spark_schema, COMMIT_TS, batch_id=None)
    rewritten = write_plan.tables.schema_for(plan.table.database, plan.table.table)
    batches = list(
        read_range(
            config,
            plan.table,
            plan.known,
            plan.ranges[0],
            log=log,
            schema_for_id=registry.schema_text,
        )
    )
    changes = [
        change
        for batch in batches
        for change in read_changes(
            batch,
            layout=InputLayout().bind(schema.names),
            tables=lambda database, name: rewritten,
            default_database=None,
            default_table=None,
            default_commit_ts=COMMIT_TS,
            time_zone="UTC",
        )
    ]
    assert len(changes) == 1
    second = _messages(options, rewritten, changes[0].row, registry)
    return RoundTrip(written, plan.table, spark_schema, rewritten, first, second, registry)


def _parse(ddl: str) -> tuple[Column, ...]:
    from ticdc_sink.ddl import parse_table_ddl

    return parse_table_ddl(ddl).columns


# --- the parts of the messages that carry the schema ---------------------------------------

Record = tuple[bytes | None, bytes | None]


def _simple_parts(records: list[Record], registry: FakeRegistry) -> list[Any]:
    """Simple: the BOOTSTRAP whole; of the row, its table id and schema version."""
    bootstrap, row = records[0][1], records[1][1]
    assert bootstrap is not None and row is not None
    if row.startswith(b"{"):
        message = json.loads(row)
        return [bootstrap, message["tableID"], message["schemaVersion"]]
    return [bootstrap, row[:40]]  # Avro: version, type, database, table, tableID, version


def _avro_parts(records: list[Record], registry: FakeRegistry) -> list[Any]:
    """avro: the key and value schemas registered, by the ids the records carry."""
    key, value = records[0]
    return [registry.texts[int.from_bytes(data[1:5], "big")] for data in (key, value) if data]


def _debezium_parts(records: list[Record], registry: FakeRegistry) -> list[Any]:
    """debezium: the key's and the value's `schema`."""
    key, value = records[0]
    return [json.loads(key or b"{}").get("schema"), json.loads(value or b"{}")["schema"]]


def _canal_parts(records: list[Record], registry: FakeRegistry) -> list[Any]:
    """canal-json: the column types, MySQL's and JDBC's, and the primary key."""
    message = json.loads(records[0][1] or b"{}")
    return [message["mysqlType"], message["sqlType"], message["pkNames"]]


def _open_parts(records: list[Record], registry: FakeRegistry) -> list[Any]:
    """open-protocol: each column's type code and flags, in the row event."""
    key, value = records[0]
    events = zip(_length_prefixed((key or b"")[8:]), _length_prefixed(value or b""), strict=True)
    for event_key, event_value in events:
        if json.loads(event_key)["t"] == 1:
            columns = json.loads(event_value)["u"]
            return [{name: (c["t"], c["f"]) for name, c in columns.items()}]
    raise AssertionError("no row event")


def _length_prefixed(data: bytes) -> list[bytes]:
    parts, at = [], 0
    while at < len(data):
        length = int.from_bytes(data[at : at + 8], "big")
        parts.append(data[at + 8 : at + 8 + length])
        at += 8 + length
    return parts


SCHEMA_PARTS: dict[str, Callable[[list[Record], FakeRegistry], list[Any]]] = {
    "simple": _simple_parts,
    "avro": _avro_parts,
    "debezium": _debezium_parts,
    "canal-json": _canal_parts,
    "open-protocol": _open_parts,
}


# --- what a protocol does not carry ------------------------------------------------------

_ENUM_INDEX = MySQLType("smallint", unsigned=True)
_SET_BITMASK = MySQLType("bigint", unsigned=True)
_BINARY = MySQLType("varbinary", 255)


def _members_and_binary_length(t: MySQLType, table: TableSchema) -> MySQLType | None:
    """Type names without members or lengths: an ENUM reads as its index, a SET as its
    bitmask (no members to write them with), a BINARY as varbinary(255) (its length is
    not carried, and a BINARY of another length would pad the values)."""
    return {"enum": _ENUM_INDEX, "set": _SET_BITMASK, "binary": _BINARY}.get(t.base)


def _binary_length(t: MySQLType, table: TableSchema) -> MySQLType | None:
    """`tidb_type` names BINARY without its length: varbinary(255), as above."""
    return _BINARY if t.base == "binary" else None


def _decimal_precision(t: MySQLType, table: TableSchema) -> MySQLType | None:
    """A DECIMAL in string mode carries no precision: decimal(65,30), whose default (the
    schema's `default`) has 30 digits after the point."""
    return MySQLType("decimal", 65, 30, unsigned=t.unsigned) if t.base == "decimal" else None


def _timestamp_fsp(t: MySQLType, table: TableSchema) -> MySQLType | None:
    """A TIMESTAMP's fsp is not carried (ZonedTimestamp): timestamp(6), whose default is
    then written with 6 fraction digits."""
    return MySQLType("timestamp", decimal=6) if t.base == "timestamp" else None


def _debezium_tidb(t: MySQLType, table: TableSchema) -> MySQLType | None:
    return _binary_length(t, table) or _timestamp_fsp(t, table)


def _bare_whole_types(t: MySQLType, table: TableSchema) -> MySQLType | None:
    """content-compatible writes whole types, but a bare name (`datetime`, `text`) looks
    the same as a base name: where no column's type shows parameters, the read cannot
    tell, and a DATETIME / TIMESTAMP / TIME of fsp 0 reads as fsp 6."""
    whole = any("(" in full_mysql_type(c) for c in table.columns)
    if whole or t.base not in ("datetime", "timestamp", "time") or t.fsp:
        return None
    return MySQLType(t.base, decimal=6)


#: The types each protocol reads as another type, so that a write of the read sends that
#: type instead (docs/guides/reading.md, "What each protocol keeps"). Every other difference
#: between the table written and the table read is one the protocol's messages do not show.
LOSSES: dict[str, Callable[[MySQLType, TableSchema], MySQLType | None]] = {
    "avro-string": _decimal_precision,
    "debezium": _timestamp_fsp,
    "debezium-tidb": _debezium_tidb,
    "canal-json": _members_and_binary_length,
    "canal-json-compatible": _bare_whole_types,
    "open-protocol": _members_and_binary_length,
}


def _as_read(table: TableSchema, protocol: str) -> TableSchema:
    """`table` with each column of a type `protocol` loses in the type it reads as."""
    lost = LOSSES.get(protocol, lambda t, table: None)
    columns = []
    for column in table.columns:
        instead = lost(column.type, table)
        if instead is not None:
            t = resolve_type(instead)
            column = attrs.evolve(column, type=t, default=normalize_default(column.default, t))
        columns.append(column)
    return attrs.evolve(table, columns=tuple(columns))


@pytest.mark.parametrize("protocol", sorted(PROTOCOLS))
@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ddl=tables())
def test_a_write_of_a_read_states_the_table_read_and_sends_its_schema(
    protocol: str, ddl: str
) -> None:
    trip = round_trip(protocol, ddl)
    read, rewritten = trip.read, trip.rewritten
    # The writer derives exactly the table the read states, from its Spark schema.
    assert (rewritten.columns, rewritten.indexes) == (read.columns, read.indexes)
    assert rewritten.pk_clustered == read.pk_clustered
    if read.version:
        assert rewritten.version == read.version
    if read.table_id:
        assert rewritten.table_id == read.table_id
    # The messages carry the schema written, less what LOSSES says the protocol loses.
    parts = SCHEMA_PARTS[PROTOCOLS[protocol]["protocol"]]
    expected = parts(trip.first, trip.registry)
    if protocol in LOSSES:
        as_read = _as_read(trip.written, protocol)
        row = tuple(_value(c) for c in as_read.columns)
        registry = FakeRegistry()
        expected = parts(_messages(_write_options(protocol), as_read, row, registry), registry)
    assert parts(trip.second, trip.registry) == expected


#: What Simple does not carry: a FLOAT / DOUBLE's scale (TiCDC writes no decimal for them:
#: float(7,2) reads as float(7,0), float(12,0) as float); where an integer primary key that
#: is the row handle stood among the keys (TiCDC appends it last; it reads first); the
#: CLUSTERED marker of a primary key. None of these changes a message: the schema version
#: is carried.
def _simple_kept(table: TableSchema) -> TableSchema:
    columns = tuple(
        attrs.evolve(c, type=canonical_type(attrs.evolve(c.type, decimal=None)))
        if c.type.base in ("float", "double")
        else c
        for c in table.columns
    )
    indexes = table.indexes
    if table.pk_is_handle:
        indexes = tuple(sorted(indexes, key=lambda i: not i.primary))
    clustered = False if table.pk_clustered is False and table.primary_key else None
    if table.pk_clustered is False and not any(
        table.column(c).type.is_integer for c in table.primary_key[:1]
    ):
        clustered = None
    return attrs.evolve(table, columns=columns, indexes=indexes, pk_clustered=clustered)


@pytest.mark.parametrize("protocol", ["simple", "simple-avro"])
@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ddl=tables())
def test_simple_reads_the_table_written_and_writes_it_with_its_version(
    protocol: str, ddl: str
) -> None:
    trip = round_trip(protocol, ddl)
    assert trip.rewritten == _simple_kept(trip.written)
    assert trip.rewritten.version == trip.written.version
    assert trip.rewritten.table_id == trip.written.table_id
