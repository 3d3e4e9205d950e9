"""Writes that must not announce a schema change that never happened, through Spark and the
broker: a topic read with `spark.read.format("ticdc")` and written again sends the table
schema and schema version it was written with; a stream whose micro-batches differ only in
the nullability Spark infers sends no DDL and no BOOTSTRAP of another version (issue 23).
`tests/unit/read/test_read_write_schema.py` holds the read-then-write property over every type
and protocol."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from tests.support.spark_read import read_topic, write_frame
from ticdc_sink.codec.protocols import decoder_for
from ticdc_sink.decode import DecodedBootstrap, DecodedDDL, DecodedRow

pytestmark = pytest.mark.integration

NOTES_DDL = (
    "CREATE TABLE `shop`.`notes` (`id` bigint NOT NULL, `body` text, "
    "`title` varchar(40) NOT NULL DEFAULT 'untitled', `kind` enum('a','b') DEFAULT 'b', "
    "`price` decimal(10,2) unsigned, `at` datetime(3), `flag` tinyint(1), "
    "PRIMARY KEY (`id`), UNIQUE KEY `uk_title` (`title`))"
)


def _events(broker: Any, topic: str, protocol: str = "simple") -> list[Any]:
    decoder = decoder_for(protocol)
    return [decoder.decode_message(r.key, r.value) for r in broker.consume_all(topic)]


def _schemas(events: list[Any]) -> tuple[set[Any], set[tuple[int, int]]]:
    """The tables of the BOOTSTRAPs, and the (table id, schema version) of the rows."""
    tables = {e.table for e in events if isinstance(e, DecodedBootstrap)}
    versions = {(e.table_id, e.schema_version) for e in events if isinstance(e, DecodedRow)}
    return tables, versions


def test_a_read_written_again_sends_the_schema_and_version_read(spark: Any, broker: Any) -> None:
    df = spark.createDataFrame(
        [
            (1, "first", "a title", "a", Decimal("1.50"), "2024-01-02 03:04:05.123", True),
            (2, None, "another", None, None, None, None),
        ],
        "id bigint, body string, title string, kind string, price decimal(10,2), "
        "at string, flag boolean",
    )
    write_frame(df, broker, "rw_notes_first", **{"table-ddl": NOTES_DDL})
    read = read_topic(spark, broker, "rw_notes_first")
    # The column as it was declared, not `text(65535) CHARACTER SET ...` (a mediumtext
    # when written again).
    assert read.schema["body"].metadata["mysql_type"] == "text"
    assert read.schema["title"].metadata["mysql_type"] == "varchar(40) NOT NULL DEFAULT 'untitled'"
    write_frame(read, broker, "rw_notes_second")

    first = _schemas(_events(broker, "rw_notes_first"))
    second = _schemas(_events(broker, "rw_notes_second"))
    assert len(first[0]) == 1 and len(first[1]) == 1  # one schema, one version
    assert second == first


def test_a_stream_of_batches_that_differ_in_nullability_alone_sends_no_ddl(
    spark: Any, broker: Any, tmp_path: Any
) -> None:
    # A query restarted with another projection of the same columns (allowed by Spark): a
    # literal column first (not nullable), then the same column read from the file source
    # (nullable). Debezium sends a DDL before a batch whose schema differs from the last
    # one committed; Simple a BOOTSTRAP of the new version.
    source, checkpoints = tmp_path / "in", tmp_path / "chk"
    source.mkdir()
    for protocol in ("debezium", "simple"):
        (source / f"{protocol}-0.json").write_text('{"id": 1, "v": "from a file"}\n')
        for n, projection in enumerate([("id", "'literal' AS v"), ("id", "v")]):
            (source / f"{protocol}-{n + 1}.json").write_text(f'{{"id": {n + 2}, "v": "x"}}\n')
            stream = (
                spark.readStream.schema("id bigint, v string")
                .option("pathGlobFilter", f"{protocol}-*.json")
                .json(str(source))
                .selectExpr(*projection)
            )
            query = (
                stream.writeStream.format("ticdc")
                .option("kafka.bootstrap.servers", broker.bootstrap)
                .option("topic", f"nullable_{protocol}")
                .option("protocol", protocol)
                .option("database", "shop")
                .option("table", "items")
                .option("primary-key", "id")
                .option("checkpointLocation", str(checkpoints / protocol))
                .trigger(availableNow=True)
                .start()
            )
            query.awaitTermination()
            assert query.exception() is None

    for protocol in ("debezium", "simple"):
        events = _events(broker, f"nullable_{protocol}", protocol)
        assert [e for e in events if isinstance(e, DecodedDDL)] == []
        assert sorted(e.data["id"] for e in events if isinstance(e, DecodedRow)) == [1, 2, 3]
    tables, versions = _schemas(_events(broker, "nullable_simple"))
    assert len(tables) == 1 and len(versions) == 1
