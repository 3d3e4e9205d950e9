"""A streaming CDC write: change rows (inserts, updates with their old values, deletes)
arrive in a folder round after round, and one streaming query writes each round to Kafka
as TiCDC change events, one commit ts and one watermark per micro-batch; then the topic is
read back and its changes counted.

    python examples/streaming_cdc.py --bootstrap-servers 127.0.0.1:9092

Each round runs the query with `Trigger.AvailableNow` from the same checkpoint, as a
scheduled job would; a query left running (`.trigger(processingTime="10 seconds")`)
writes the same messages.
"""

from __future__ import annotations

import argparse
import tempfile

from pyspark.sql import SparkSession

# The changes each round brings: (id, name, op, old name) of shop.users.
ROUNDS = [
    [(i, f"user-{i}", "INSERT", None) for i in range(1, 11)],
    [(i, f"user-{i}-renamed", "UPDATE", f"user-{i}") for i in range(1, 6)]
    + [(i, None, "DELETE", f"user-{i}") for i in (9, 10)],
]
SCHEMA = "id bigint, name string, _op string, old_name string"


def main(spark: SparkSession, bootstrap_servers: str, topic: str = "cdc") -> dict[str, int]:
    """Write every round through one streaming query, then read `<topic>_shop_users`
    back: how many changes of each kind it holds."""
    work = tempfile.mkdtemp(prefix="ticdc-streaming-cdc-")
    for changes in ROUNDS:
        spark.createDataFrame(changes, SCHEMA).write.mode("append").parquet(f"{work}/in")
        query = (
            spark.readStream.schema(SCHEMA)
            .parquet(f"{work}/in")
            # a DELETE's table columns hold the deleted row; an UPDATE's _before its old row
            .selectExpr(
                "id",
                "coalesce(name, old_name) AS name",
                "_op",
                "CASE WHEN _op = 'UPDATE' THEN named_struct('id', id, 'name', old_name) "
                "END AS _before",
            )
            .writeStream.format("ticdc")
            .option("kafka.bootstrap.servers", bootstrap_servers)
            .option("topic", topic + "_{schema}_{table}")
            .option("database", "shop")
            .option("table", "users")
            .option("primary-key", "id")
            .option("checkpointLocation", f"{work}/checkpoint")
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
    read = (
        spark.read.format("ticdc")
        .option("kafka.bootstrap.servers", bootstrap_servers)
        .option("topic", f"{topic}_shop_users")
        .load()
    )
    counts = read.selectExpr(
        "count_if(_op = 'INSERT') AS inserts",
        "count_if(_op = 'UPDATE') AS updates",
        "count_if(_op = 'DELETE') AS deletes",
        "count_if(_before IS NOT NULL) AS with_before",
        "count(DISTINCT _commit_ts) AS commit_ts",  # one per micro-batch
    ).first()
    return counts.asDict()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap-servers", required=True, help="host:port[,host:port]")
    parser.add_argument("--topic", default="cdc", help="topic prefix")
    args = parser.parse_args()
    session = SparkSession.builder.master("local[2]").appName("ticdc-streaming").getOrCreate()
    print(main(session, args.bootstrap_servers, args.topic))
    session.stop()
