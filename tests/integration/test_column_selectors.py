"""`[sink] column-selectors` through Spark `local[2]`, Kafka and the schema registry: the
changefeeds and tables of tiflow's `tests/integration_tests/kafka_column_selector`
(canal-json) and `kafka_column_selector_avro` (avro), read back with `ticdc_sink.decode`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.apicurio import confluent_client
from ticdc_sink import tso
from ticdc_sink.codec.avro.decoder import AvroDecoder
from ticdc_sink.codec.canal_json.decoder import CanalJsonDecoder
from ticdc_sink.decode import DecodedRow

pytestmark = pytest.mark.integration

# tiflow tests/integration_tests/kafka_column_selector/conf/changefeed.toml
CHANGEFEED = """
[sink]
column-selectors = [
    {matcher = ['test.t1'], columns = ['a', 'b']},
    {matcher = ['test.*'], columns = ["*", "!b"]},

    {matcher = ['test1.t1'], columns = ['column*', '!column1']},
]
"""

# kafka_column_selector/data/data.sql: three rows in each table
VALUES = [(1, 2, 3), (2, 3, 4), (3, 4, 5)]
TS = tso.compose(1_700_000_000_000)


def _write(df: Any, broker: Any, config: Path, **options: str) -> None:
    writer = (
        df.coalesce(1)
        .write.format("ticdc")
        .mode("append")
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("config", str(config))
        .option("partition-num", "1")
    )
    for name, value in options.items():
        writer = writer.option(name, value)
    writer.save()


def _canal_rows(broker: Any, topic: str) -> list[DecodedRow]:
    decoder = CanalJsonDecoder()
    decoded = (decoder.decode_message(r.key, r.value) for r in broker.consume_all(topic))
    return [e for e in decoded if isinstance(e, DecodedRow)]


def test_canal_json_sends_the_selected_columns(spark, broker, topics, tmp_path: Path) -> None:
    config = tmp_path / "changefeed.toml"
    config.write_text(CHANGEFEED)
    # kafka_column_selector's sink-uri: protocol=canal-json&enable-tidb-extension=true
    topic = topics("column-selector-test")
    uri = f"kafka://{broker.bootstrap}/{topic}?protocol=canal-json&enable-tidb-extension=true"
    test_tables = spark.createDataFrame(
        [("test", t, "c", TS + i, *v) for t in ("t1", "t2", "t3") for i, v in enumerate(VALUES)],
        "_database string, _table string, _op string, _commit_ts bigint, a int, b int, c int",
    )
    _write(test_tables, broker, config, **{"sink-uri": uri, "primary-key": "a"})
    test1 = spark.createDataFrame(
        [("c", TS + i, *v) for i, v in enumerate(VALUES)],
        "_op string, _commit_ts bigint, column0 int, column1 int, column2 int",
    )
    _write(
        test1,
        broker,
        config,
        **{"sink-uri": uri, "primary-key": "column0", "database": "test1", "table": "t1"},
    )
    rows = _canal_rows(broker, topic)
    by_table: dict[str, list[dict[str, Any] | None]] = {}
    for row in rows:
        by_table.setdefault(f"{row.database}.{row.table}", []).append(row.data)
    assert by_table == {
        "test.t1": [{"a": a, "b": b} for a, b, _ in VALUES],
        "test.t2": [{"a": a, "c": c} for a, _, c in VALUES],
        "test.t3": [{"a": a, "c": c} for a, _, c in VALUES],
        "test1.t1": [{"column0": x, "column2": z} for x, _, z in VALUES],
    }


def test_avro_registers_and_sends_the_selected_columns(
    spark, broker, topics, registry, tmp_path: Path
) -> None:
    # tiflow tests/integration_tests/kafka_column_selector_avro/conf/changefeed.toml
    config = tmp_path / "changefeed.toml"
    config.write_text(
        '[sink]\ncolumn-selectors = [\n    {matcher = [\'test.*\'], columns = ["*", "!b"]},\n]\n'
    )
    df = spark.createDataFrame(
        [("c", TS + i, *v) for i, v in enumerate(VALUES)],
        "_op string, _commit_ts bigint, a int, b int, c int",
    )
    _write(
        df,
        broker,
        config,
        protocol="avro",
        **{
            "schema-registry": registry.url,
            "topic": topics("colsel_{schema}_{table}"),
            "database": "test",
            "table": "t1",
            "primary-key": "a",
        },
    )
    client = confluent_client(registry.url)
    topic = topics("colsel_test_t1")
    schema = client.get_latest_version(f"{topic}-value").schema.schema_str
    assert [f["name"] for f in json.loads(schema)["fields"]] == ["a", "c"]
    decoder = AvroDecoder(lambda schema_id: client.get_schema(schema_id).schema_str)
    rows = [decoder.decode_message(r.key, r.value) for r in broker.consume_all(topic)]
    assert [row.data for row in rows] == [{"a": a, "c": c} for a, _, c in VALUES]


def test_a_selection_dropping_the_key_fails_before_any_task(
    spark, broker, topics, tmp_path: Path
) -> None:
    config = tmp_path / "changefeed.toml"
    config.write_text("[[sink.column-selectors]]\nmatcher = ['test.t1']\ncolumns = ['b', 'c']\n")
    df = spark.createDataFrame(
        [("c", TS, 1, 2, 3)], "_op string, _commit_ts bigint, a int, b int, c int"
    )
    with pytest.raises(Exception) as caught:
        _write(
            df,
            broker,
            config,
            protocol="canal-json",
            **{
                "topic": topics("colsel_refused"),
                "database": "test",
                "table": "t1",
                "primary-key": "a",
            },
        )
    assert "keeps neither the primary key nor a unique key of table test.t1; add a" in str(
        caught.value
    )
