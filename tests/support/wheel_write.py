"""One simple and one avro write through Spark `local[2]`, run by the wheel smoke
(tests/support/wheel_smoke.py) with the interpreter of the environment that holds only the
built wheel: `python -I wheel_write.py BOOTSTRAP REGISTRY`, in a directory outside the
checkout, so the driver and the Python workers import the installed wheel and nothing else.

Prints where the driver and a Python worker imported `ticdc_sink` from, one line each.
"""

from __future__ import annotations

import os
import sys

__all__ = ["CHANGES", "main"]

# (_op, id, name, _before): an insert, an update with its old row, a delete.
CHANGES = [
    ("c", 1, "alice", None),
    ("u", 1, "alicia", (1, "alice")),
    ("d", 1, "alicia", None),
]


def main(bootstrap: str, registry: str) -> None:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    import ticdc_sink

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("ticdc-sink-wheel-smoke")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        # No register call: the wheel's pyspark_ticdc module registers format("ticdc").
        print(ticdc_sink.__file__)
        in_worker = spark.sparkContext.parallelize([0], 1).map(
            lambda _: __import__("ticdc_sink").__file__
        )
        print(in_worker.collect()[0])
        changes = spark.createDataFrame(
            CHANGES, "_op string, id bigint, name string, _before struct<id: bigint, name: string>"
        ).coalesce(1)
        for protocol, topic, options in (
            ("simple", "smoke_simple", {}),
            ("avro", "smoke_avro_{schema}_{table}", {"schema-registry": registry}),
        ):
            writer = (
                changes.write.format("ticdc")
                .mode("append")
                .option("kafka.bootstrap.servers", bootstrap)
                .option("topic", topic)
                .option("protocol", protocol)
                .option("partition-num", "1")
                .option("database", "shop")
                .option("table", "users")
                .option("primary-key", "id")
            )
            for name, value in options.items():
                writer = writer.option(name, value)
            writer.save()
    finally:
        spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:])
