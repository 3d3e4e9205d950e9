"""TiCDC's own messages (the golden files of `tests/golden/<protocol>/`, see each
SOURCE.md) produced into a topic as they are, and read with `spark.read.format("ticdc")`:
the rows they hold, with their ops, commit ts and before images; resolved, watermark and
DDL messages are no rows. (avro's golden files are schemas, not messages.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.spark_read import produce, read_topic
from ticdc_sink.codec.open_protocol.message import frame

pytestmark = pytest.mark.integration

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def _file(protocol: str, name: str) -> bytes:
    return (GOLDEN / protocol / name).read_bytes().strip()


def _rows(result: Any) -> list[tuple[Any, ...]]:
    columns = [f.name for f in result.schema.fields if not f.name.startswith("_")]
    return [
        (
            r["_op"],
            r["_commit_ts"],
            r["_database"],
            r["_table"],
            {c: r[c] for c in columns},
            None if r["_before"] is None else r["_before"].asDict(),
        )
        for r in result.collect()
    ]


def test_canal_json_golden_messages(spark: Any, broker: Any, topics: Any) -> None:
    values = ["insert_tp_int", "update_tp_int", "delete_tp_int", "watermark", "ddl_query"]
    records = [(b"", _file("canal_json", f"{v}.value.json")) for v in values]
    produce(broker, topics("golden_canal_json"), records)
    result = read_topic(
        spark, broker, topics("golden_canal_json"), protocol="canal-json", table="tp_int"
    )
    types = {f.name: f.metadata.get("mysql_type") for f in result.schema.fields[:6]}
    assert types == {
        "id": "int NOT NULL",
        "c_tinyint": "tinyint",
        "c_smallint": "smallint",
        "c_mediumint": "mediumint",
        "c_int": "int",
        "c_bigint": "bigint",
    }
    before = dict(zip(types, (2, 127, 32767, 8388607, 2147483647, 2**63 - 1), strict=True))
    after = before | {"c_tinyint": 0, "c_int": 0}
    # Only the INSERT was written with the TiDB extension, so only it has a commit ts.
    assert _rows(result) == [
        ("INSERT", 429918007904436226, "test", "tp_int", before, None),
        ("UPDATE", 0, "test", "tp_int", after, before),
        ("DELETE", 0, "test", "tp_int", after, None),
    ]


def test_debezium_golden_messages(spark: Any, broker: Any, topics: Any) -> None:
    cases = ["insert_schema", "update_schema", "delete_schema", "watermark_schema"]
    records = [
        (_file("debezium", f"tiflow_{c}.key.json"), _file("debezium", f"tiflow_{c}.value.json"))
        for c in cases
    ]
    produce(broker, topics("golden_debezium"), records)
    result = read_topic(spark, broker, topics("golden_debezium"), protocol="debezium")
    # an int16 field, the key (so NOT NULL)
    assert result.schema["tiny"].metadata == {"mysql_type": "smallint NOT NULL"}
    assert _rows(result) == [
        ("INSERT", 1, "test", "table1", {"tiny": 1}, None),
        ("UPDATE", 1, "test", "table1", {"tiny": 1}, {"tiny": 2}),
        ("DELETE", 1, "test", "table1", {"tiny": 2}, None),
    ]


def test_open_protocol_golden_messages(spark: Any, broker: Any, topics: Any) -> None:
    key = _file("open_protocol", "insert_varchar_pk.key.json")
    records = [
        frame(
            _file("open_protocol", "ddl_create_table.key.json"),
            _file("open_protocol", "ddl_create_table.value.json"),
        ),
        frame(key, _file("open_protocol", "insert_blob_text_utf8.value.json")),
        frame(_file("open_protocol", "resolved.key.json"), b""),
    ]
    produce(broker, topics("golden_open_protocol"), records)
    result = read_topic(spark, broker, topics("golden_open_protocol"), protocol="open-protocol")
    types = {f.name: f.metadata.get("mysql_type") for f in result.schema.fields[:4]}
    assert types == {
        "c_blob": "blob",
        "c_char": "char(255)",
        "c_text": "text",
        "id": "int NOT NULL",
    }
    image = {"c_blob": "测".encode(), "c_char": "测", "c_text": "测", "id": 1}
    assert _rows(result) == [("INSERT", 424242424242424242, "test", "t", image, None)]
