"""Read a TiCDC topic and write its changes again, to another topic in another protocol:
a Simple topic (as TiCDC writes it) becomes a Canal-JSON one, with the same rows,
operations and commit ts, and the table's schema carried over from the read.

    python examples/read_then_write.py --bootstrap-servers 127.0.0.1:9092

The script writes the Simple topic itself first, standing in for TiCDC.
"""

from __future__ import annotations

import argparse

from pyspark.sql import SparkSession

# (id, fruit, qty, op, the row before an UPDATE): canal-json sends an UPDATE's old values
CHANGES = [
    (1, "apple", 3, "INSERT", None),
    (2, "pear", 5, "INSERT", None),
    (1, "apple", 4, "UPDATE", (1, "apple", 3)),
]
SCHEMA = (
    "id bigint, fruit string, qty int, _op string, _before struct<id:bigint, fruit:string, qty:int>"
)


def _read(spark: SparkSession, bootstrap_servers: str, topic: str, **options: str):
    return (
        spark.read.format("ticdc")
        .option("kafka.bootstrap.servers", bootstrap_servers)
        .option("topic", topic)
        .options(**options)
        .load()
    )


def main(spark: SparkSession, bootstrap_servers: str, topic: str = "rtw") -> dict[str, int]:
    """Write `<topic>_simple`, copy it to `<topic>_canal` in canal-json, and count both."""
    source, target = f"{topic}_simple", f"{topic}_canal"
    (
        spark.createDataFrame(CHANGES, SCHEMA)
        .coalesce(1)  # one partition: the two changes of id 1 stay in order
        .write.format("ticdc")
        .mode("append")
        .option("kafka.bootstrap.servers", bootstrap_servers)
        .option("topic", source)
        .option("database", "shop")
        .option("table", "stock")
        .option("column-types", '{"fruit": "varchar(20) NOT NULL"}')
        .option("primary-key", "id")
        .save()
    )
    changes = _read(spark, bootstrap_servers, source)
    # The read's columns carry the table (types, key): the write needs no table options.
    (
        changes.write.format("ticdc")
        .mode("append")
        .option("kafka.bootstrap.servers", bootstrap_servers)
        .option("topic", target)
        .option("protocol", "canal-json")
        .option("enable-tidb-extension", "true")  # canal-json carries commit ts with it
        .save()
    )
    copied = _read(spark, bootstrap_servers, target, protocol="canal-json")
    columns = ["id", "fruit", "qty", "_op", "_commit_ts"]
    return {
        "read": changes.count(),
        "written": copied.count(),
        "different": changes.select(columns).exceptAll(copied.select(columns)).count(),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap-servers", required=True, help="host:port[,host:port]")
    parser.add_argument("--topic", default="rtw", help="topic prefix")
    args = parser.parse_args()
    session = SparkSession.builder.master("local[2]").appName("ticdc-read-write").getOrCreate()
    print(main(session, args.bootstrap_servers, args.topic))
    session.stop()
