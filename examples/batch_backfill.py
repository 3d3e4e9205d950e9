"""Backfill: a table's snapshot written to Kafka once, as TiCDC would have sent its rows,
then read back and counted.

    python examples/batch_backfill.py --bootstrap-servers 127.0.0.1:9092

The table is `shop.orders`, described by its `SHOW CREATE TABLE` text; the rows go to the
topic `backfill_shop_orders` (TiCDC's topic expression `backfill_{schema}_{table}`) in
the Simple protocol, over 3 partitions, one watermark per partition after them.
"""

from __future__ import annotations

import argparse

from pyspark.sql import SparkSession

ROWS = 1000
TABLE_DDL = """CREATE TABLE orders (
  id bigint NOT NULL,
  customer varchar(40) NOT NULL,
  amount decimal(10,2) DEFAULT NULL,
  PRIMARY KEY (id)
)"""


def main(spark: SparkSession, bootstrap_servers: str, topic: str = "backfill") -> dict[str, int]:
    """Write the snapshot to `<topic>_shop_orders` and read it back: the counts."""
    snapshot = spark.range(1, ROWS + 1).selectExpr(
        "id",
        "concat('customer-', id % 50) AS customer",
        "CAST(id * 1.25 AS decimal(10,2)) AS amount",
    )
    (
        snapshot.write.format("ticdc")
        .mode("append")
        .option("kafka.bootstrap.servers", bootstrap_servers)
        .option("topic", topic + "_{schema}_{table}")
        .option("partition-num", "3")
        .option("database", "shop")
        .option("table", "orders")
        .option("table-ddl", TABLE_DDL)  # types, NOT NULL and the key, as TiDB has them
        .save()
    )
    read = (
        spark.read.format("ticdc")
        .option("kafka.bootstrap.servers", bootstrap_servers)
        .option("topic", f"{topic}_shop_orders")
        .load()
    )
    counts = read.selectExpr(
        "count(*) AS read",
        "count_if(_op = 'INSERT') AS inserts",
        "count(DISTINCT _commit_ts) AS commit_ts",  # one job, one commit ts
    ).first()
    return {"written": snapshot.count(), **counts.asDict()}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap-servers", required=True, help="host:port[,host:port]")
    parser.add_argument("--topic", default="backfill", help="topic prefix")
    args = parser.parse_args()
    session = SparkSession.builder.master("local[2]").appName("ticdc-backfill").getOrCreate()
    print(main(session, args.bootstrap_servers, args.topic))
    session.stop()
