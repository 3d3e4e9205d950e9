"""Reading every protocol with `spark.read.format("ticdc")`, through Spark, Kafka and the
schema registry: a DataFrame of every MySQL type the writer supports, and a change
stream of INSERTs, UPDATEs and DELETEs across 3 partitions, written with the sink and read
back. Simple's read is the reference (test_read.py proves it lossless); each other
protocol reads the same, less what it cannot carry, stated here column by column and in
docs/guides/reading.md."""

from __future__ import annotations

import base64
import hashlib
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import attrs
import orjson
import pytest

from tests.support.spark_read import produce, read_topic, write_frame
from tests.support.tables import CHANGES, CHANGES_SCHEMA, all_types_frame, all_types_options
from tests.support.topics import TopicNames
from ticdc_sink.codec.row_key import row_key
from ticdc_sink.ddl import parse_column_definition

pytestmark = pytest.mark.integration

PROTOCOLS = ["avro", "debezium", "debezium-avro", "canal-json", "open-protocol"]

# The values each protocol reads instead of Simple's (column -> value read).
VALUE_LOSSES: dict[str, dict[str, Any]] = {
    "avro": {},
    # A DECIMAL travels as a JSON double: its value to 17 digits, not its scale.
    "debezium": {"c_decimal": "-12345678.125"},
    # Exact DECIMAL (precise mode) and BIGINT UNSIGNED as text (string mode, with tidb_type).
    "debezium-avro": {},
    # No precision in mysqlType: DECIMAL reads as its text; ENUM / SET as the index /
    # bitmask canal-json writes (no members in the message); BIT as bit(64).
    "canal-json": {
        "c_decimal": "-12345678.1250",
        "c_enum": 2,
        "c_set": Decimal(5),
        "c_bit": Decimal(21),
    },
    # The same as canal-json: type codes and flags only.
    "open-protocol": {
        "c_decimal": "-12345678.1250",
        "c_enum": 2,
        "c_set": Decimal(5),
        "c_bit": Decimal(21),
    },
}
# The `mysql_type` each protocol reads instead of the written one (`decode.types`).
TYPE_LOSSES: dict[str, dict[str, str]] = {
    # tidb_type INT stands for every integer type up to INT (INT UNSIGNED of an Avro int
    # for the unsigned ones up to MEDIUMINT), TEXT for char/varchar/text, BLOB for every
    # binary type; no fsp for temporal types.
    "avro": {
        "c_tinyint": "int",
        "c_tinyint_u": "mediumint unsigned",
        "c_smallint": "int",
        "c_mediumint": "int",
        "c_char": "longtext",
        "c_varchar": "longtext",
        "c_text": "longtext",
        "c_binary": "longblob",
        "c_varbinary": "longblob",
        "c_blob": "longblob",
        "c_datetime": "datetime(6)",
        "c_time": "time(6)",
    },
    # No lengths, no DECIMAL precision; the connect name gives DATETIME fsp <= 3 or 6.
    "debezium": {
        "c_decimal": "decimal(65,30)",
        "c_char": "char(255)",
        "c_varchar": "varchar(16383)",
        "c_binary": "varbinary(255)",
        "c_varbinary": "varbinary(65535)",
        "c_time": "time(6)",
    },
    "canal-json": {
        "c_decimal": "decimal(65,30)",
        "c_char": "char(255)",
        "c_varchar": "varchar(16383)",
        "c_binary": "varbinary(255)",
        "c_varbinary": "varbinary(65535)",
        "c_datetime": "datetime(6)",
        "c_time": "time(6)",
        "c_bit": "bit(64)",
        "c_enum": "smallint unsigned",
        "c_set": "bigint unsigned",
    },
}
TYPE_LOSSES["open-protocol"] = TYPE_LOSSES["canal-json"]
# As debezium, but the Avro decimal logical type keeps DECIMAL's precision and scale.
TYPE_LOSSES["debezium-avro"] = {
    k: v for k, v in TYPE_LOSSES["debezium"].items() if k != "c_decimal"
}


def _options(protocol: str, registry: Any) -> tuple[dict[str, str], dict[str, str]]:
    """(write options, read options) of `protocol`."""
    written = {"protocol": protocol, "enable-tidb-extension": "true"}
    read = {"protocol": protocol}
    if protocol in ("avro", "debezium-avro"):
        written["schema-registry"] = read["schema-registry"] = registry.url
    if protocol == "debezium-avro":
        written["avro-bigint-unsigned-handling-mode"] = "string"
    return written, read


def _topic(name: str, protocol: str) -> tuple[str, str]:
    """(the topic written, the topic read): avro's topic names the table."""
    if protocol == "avro":
        return f"{name}_avro_{{schema}}_{{table}}", f"{name}_avro_"
    return f"{name}_{protocol}", f"{name}_{protocol}"


def _base_type(text: str | None) -> str | None:
    """A `mysql_type` without charset, collation and the lengths TiDB implies
    (`tinyint(4)`, `text(65535)`, `date(10)`), as the closest types are written."""
    if text is None:
        return None
    t = attrs.evolve(parse_column_definition(text).type, charset=None, collation=None)
    if t.is_integer or t.base in ("date", "json", "text", "blob"):
        t = attrs.evolve(t, length=None)
    return t.to_sql()


@pytest.fixture(scope="module")
def reference(spark: Any, broker: Any) -> dict[str, Any]:
    """Simple's read of the all-types frame: every row by id, and the `mysql_type`s."""
    topic = TopicNames()("rp_types_simple")
    write_frame(all_types_frame(spark), broker, topic, **all_types_options())
    result = read_topic(spark, broker, topic)
    return {
        "rows": {r["id"]: r.asDict() for r in result.collect()},
        "types": {f.name: f.metadata.get("mysql_type") for f in result.schema.fields},
    }


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_every_type_reads_back_as_simple_reads_it_less_the_protocols_losses(
    spark: Any, broker: Any, registry: Any, topics: Any, reference: dict[str, Any], protocol: str
) -> None:
    written, read = _options(protocol, registry)
    topic, read_name = _topic(topics("rp_types"), protocol)
    write_frame(all_types_frame(spark), broker, topic, **all_types_options(), **written)
    if protocol == "avro":
        read_name += "types_all"
    if protocol in ("debezium", "debezium-avro"):
        read["time-zone"] = "Asia/Shanghai"  # TIMESTAMPs travel in UTC
    result = read_topic(spark, broker, read_name, **read)
    types = {f.name: f.metadata.get("mysql_type") for f in result.schema.fields}
    expected_types = {
        name: TYPE_LOSSES[protocol].get(name, _base_type(text))
        for name, text in reference["types"].items()
    }
    assert {name: _base_type(text) for name, text in types.items()} == expected_types
    rows = {r["id"]: r.asDict() for r in result.collect()}
    losses = VALUE_LOSSES[protocol]
    assert rows[1] == {k: losses.get(k, v) for k, v in reference["rows"][1].items()} | {
        "_commit_ts": rows[1]["_commit_ts"]
    }
    assert rows[2] == reference["rows"][2] | {"_commit_ts": rows[2]["_commit_ts"]}
    assert rows[1]["_commit_ts"] == rows[2]["_commit_ts"] > 0


def _expected_changes(protocol: str) -> list[tuple[Any, ...]]:
    """CHANGES as the sink writes and `protocol` carries them: an UPDATE of the primary
    key is a DELETE and an INSERT (TiCDC's Kafka sink splits it); avro carries no old
    row, and its DELETE is a tombstone with the key columns only and no commit ts."""
    ops = {"c": "INSERT", "u": "UPDATE", "d": "DELETE"}
    out = []
    for op, ts, key, name, amount, before in CHANGES:
        if op == "u" and before[0] != key:
            out.append(("DELETE", ts, *before, None))
            out.append(("INSERT", ts, key, name, amount, None))
        else:
            out.append((ops[op], ts, key, name, amount, tuple(before) if before else None))
    if protocol == "avro":  # (with avro-include-before-value: every old row, as the others)
        out = [
            ("DELETE", 0, c[2], None, None, None) if c[0] == "DELETE" else (*c[:5], None)
            for c in out
        ]
    return sorted(out, key=lambda c: (c[1], c[0], c[2]))


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_change_stream_across_3_partitions_reads_back(
    spark: Any, broker: Any, registry: Any, topics: Any, protocol: str
) -> None:
    written, read = _options(protocol, registry)
    topic, read_name = _topic(topics("rp_changes"), protocol)
    df = spark.createDataFrame(CHANGES, CHANGES_SCHEMA)
    options = {"database": "shop", "table": "items", "primary-key": "id"}
    options |= {"partition": "index-value", "partition-num": "3", **written}
    write_frame(df, broker, topic, **options)
    if protocol == "avro":
        read_name += "shop_items"
    result = read_topic(spark, broker, read_name, **read)
    assert result.rdd.getNumPartitions() == 1  # 3 small Kafka partitions: one task
    got = [
        (
            r["_op"],
            r["_commit_ts"],
            r["id"],
            r["name"],
            None if r["amount"] is None else Decimal(str(r["amount"])),
            None if r["_before"] is None else tuple(r["_before"][c] for c in ("id", "name")),
        )
        for r in result.collect()
    ]
    expected = [(*c[:5], None if c[5] is None else c[5][:2]) for c in _expected_changes(protocol)]
    assert sorted(got, key=lambda c: (c[1], c[0], c[2])) == expected
    befores = {
        (r["id"], r["_commit_ts"]): Decimal(str(r["_before"]["amount"]))
        for r in result.collect()
        if r["_before"] is not None
    }
    assert befores == {
        (c[2], c[1]): c[5][2] for c in _expected_changes(protocol) if c[5] is not None
    }


# pingcap/ticdc's newer settings (issue 27): (protocol, write options), each read back as
# a protocol carrying every old row reads it.
NEWER_SETTINGS = {
    "avro-include-before-value": ("avro", {"avro-include-before-value": "true"}),
    "canal-json-output-row-key": ("canal-json", {"output-row-key": "true", "table-id": "77"}),
    "canal-json-table-routing": (
        "canal-json",
        {
            "dispatchers": json.dumps(
                [{"matcher": ["shop.*"], "target-schema": "archive", "target-table": "{table}_bak"}]
            )
        },
    ),
}


@pytest.mark.parametrize("name", sorted(NEWER_SETTINGS))
def test_ticdcs_newer_settings_read_back(
    spark: Any, broker: Any, registry: Any, topics: Any, name: str
) -> None:
    protocol, extra = NEWER_SETTINGS[name]
    written, read = _options(protocol, registry)
    topic, read_name = _topic(topics(f"rp_newer_{name}"), protocol)
    df = spark.createDataFrame(CHANGES, CHANGES_SCHEMA)
    options = {"database": "shop", "table": "items", "primary-key": "id", "partition-num": "3"}
    write_frame(df, broker, topic, **options, **written, **extra)
    if protocol == "avro":
        read_name += "shop_items"
    result = read_topic(spark, broker, read_name, **read).collect()
    got = sorted(
        (
            r["_op"],
            r["_commit_ts"],
            r["id"],
            r["name"],
            None if r["amount"] is None else Decimal(str(r["amount"])),
            None if r["_before"] is None else tuple(r["_before"][c] for c in ("id", "name")),
        )
        for r in result
    )
    # every old row and every deleted row whole: as canal-json carries them
    expected = [(*c[:5], None if c[5] is None else c[5][:2]) for c in _expected_changes(name)]
    assert got == sorted(expected)
    tables = {(r["_database"], r["_table"]) for r in result}
    assert tables == {("archive", "items_bak") if "routing" in name else ("shop", "items")}
    if name == "canal-json-output-row-key":
        values = [orjson.loads(r.value) for r in broker.consume_all(topic)]
        keys = {int(v["data"][0]["id"]): v["_tidb"]["rowkey"] for v in values if v["data"]}
        assert len(keys) == 13  # ids 1..12 and 30
        assert keys == {i: base64.b64encode(row_key(77, i)).decode() for i in keys}


@pytest.mark.parametrize("protocol", ["simple", "canal-json", "open-protocol"])
def test_claim_check_rows_are_followed_back_to_the_full_row(
    spark: Any, broker: Any, topics: Any, protocol: str, tmp_path: Path
) -> None:
    # 51 200 hex digits: above max-message-bytes even compressed.
    huge = "".join(hashlib.sha256(str(i).encode()).hexdigest() for i in range(800))
    df = spark.createDataFrame([(1, "small"), (2, huge)], "id bigint, payload string")
    store = tmp_path / "claims"
    topic = topics("rp_claim")
    options = {
        "protocol": protocol,
        "enable-tidb-extension": "true",
        "database": "db",
        "table": "big",
        "primary-key": "id",
        "partition-num": "1",
        "max-message-bytes": "10000",
        "large-message-handle-option": "claim-check",
        "claim-check-storage-uri": store.as_uri(),
        "large-message-handle-compression": "lz4",
    }
    write_frame(df.coalesce(1), broker, topic, **options)
    # The files may have moved since: TiCDC's consumer, too, reads them by file name.
    moved = tmp_path / "moved"
    store.rename(moved)
    reading = {"protocol": protocol, "large-message-handle-compression": "lz4"}
    result = read_topic(
        spark, broker, topic, **reading, **{"claim-check-storage-uri": moved.as_uri()}
    )
    assert sorted((r["id"], r["payload"]) for r in result.collect()) == [(1, "small"), (2, huge)]

    with pytest.raises(Exception, match=rf"topic {topic} partition 0 offset \d+: .*claim-check"):
        read_topic(spark, broker, topic, **reading).collect()
    (stored,) = list(moved.iterdir())
    stored.unlink()
    with pytest.raises(Exception, match=rf"topic {topic} partition 0 offset \d+: .*cannot be read"):
        read_topic(
            spark, broker, topic, **reading, **{"claim-check-storage-uri": moved.as_uri()}
        ).collect()


def test_an_avro_schema_id_the_registry_does_not_know_names_its_offset(
    spark: Any, broker: Any, registry: Any, topics: Any
) -> None:
    df = spark.createDataFrame(CHANGES[:2], CHANGES_SCHEMA)
    written, read = _options("avro", registry)
    options = {"database": "shop", "table": "items", "primary-key": "id", "partition-num": "1"}
    write_frame(df, broker, topics("rp_unknown_avro_{schema}_{table}"), **options, **written)
    unknown = b"\x00" + (987654).to_bytes(4, "big") + b"\x02"
    topic = topics("rp_unknown_avro_shop_items")
    produce(broker, topic, [(None, unknown)], create=False)
    with pytest.raises(Exception, match=r"offset 2: schema id 987654 is unknown to the registry"):
        read_topic(spark, broker, topic, **read).collect()
