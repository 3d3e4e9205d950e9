"""A job that read a TiCDC topic with Spark's Kafka source, moved to `format("ticdc")`:
the same options, and the table's changes instead of Kafka records to parse.

    python examples/kafka_source_migration.py --bootstrap-servers 127.0.0.1:9092

Before, with Spark's Kafka connector (spark-sql-kafka) on the classpath:

    records = spark.read.format("kafka").options(**kafka_options).load()
    rows = (
        records.select(from_json(col("value").cast("string"), CANAL_JSON).alias("m"))
        .where("NOT m.isDdl AND m.type IN ('INSERT', 'UPDATE', 'DELETE')")
        .select(explode("m.data").alias("row"), "m.type", "m._tidb.commitTs")
        ...  # values are text: cast each column; replays are still there
    )

After, `kafka_options` unchanged (Spark's names: `subscribe`, `startingOffsets`,
`endingOffsets`, `includeHeaders`, ...), plus what the topic holds (`protocol`, the
writer's `enable-tidb-extension`): `format("ticdc")` needs no connector jar. The script
writes the Canal-JSON topic itself first, standing in for TiCDC.
"""

from __future__ import annotations

import argparse

from pyspark.sql import SparkSession

ROWS = 200


def kafka_options(bootstrap_servers: str, topic: str) -> dict[str, str]:
    """The options the job gave `format("kafka")`."""
    return {
        "kafka.bootstrap.servers": bootstrap_servers,
        "subscribe": topic,
        "startingOffsets": "earliest",
        "endingOffsets": "latest",
        "includeHeaders": "true",
    }


def main(spark: SparkSession, bootstrap_servers: str, topic: str = "migration") -> dict[str, int]:
    """Write `topic` as TiCDC would (canal-json), then read it with the Kafka source's
    options through `format("ticdc")`: the rows and what else the read gives."""
    (
        spark.range(ROWS)
        .selectExpr("id", "CAST(id * 2 AS int) AS score")
        .write.format("ticdc")
        .mode("append")
        .option("kafka.bootstrap.servers", bootstrap_servers)
        .option("topic", topic)
        .option("partition", "index-value")  # rows spread by key over the 3 partitions
        .option("protocol", "canal-json")
        .option("enable-tidb-extension", "true")
        .option("database", "shop")
        .option("table", "scores")
        .option("primary-key", "id")
        .save()
    )
    rows = (
        spark.read.format("ticdc")
        .options(**kafka_options(bootstrap_servers, topic))
        .option("protocol", "canal-json")
        .option("enable-tidb-extension", "true")
        .option("kafka-columns", "true")  # _topic, _partition, _offset, as Kafka's columns
        .load()
    )
    rows.printSchema()  # id bigint, score int, _op, _commit_ts, ..., _headers
    return {
        "rows": rows.count(),
        "score_total": rows.agg({"score": "sum"}).first()[0],
        "partitions": rows.select("_partition").distinct().count(),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap-servers", required=True, help="host:port[,host:port]")
    parser.add_argument("--topic", default="migration", help="topic")
    args = parser.parse_args()
    session = SparkSession.builder.master("local[2]").appName("ticdc-migration").getOrCreate()
    print(main(session, args.bootstrap_servers, args.topic))
    session.stop()
