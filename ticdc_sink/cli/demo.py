"""`ticdc-sink demo`: a local broker (or yours) and Spark, a small change stream written
through `format("ticdc")`, the topic printed decoded, with the wall time of each part."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time

import ticdc_sink
from ticdc_sink._local_broker import LocalBroker
from ticdc_sink.cli.arguments import given_options, or_list
from ticdc_sink.cli.decode import print_topic, written_with
from ticdc_sink.codec import protocols
from ticdc_sink.config import SinkConfig
from ticdc_sink.writer import rules

__all__ = [
    "DEMO_PROTOCOLS",
    "run_demo",
]


# Options the demo sets itself: its brokers, topic and table.
_DEMO_SETS = ("kafka.bootstrap.servers", "topic", "database", "table", "primary-key")
# The protocols the demo writes: not those that need a schema registry (the demo's broker
# has none). `demo --help` lists these.
DEMO_PROTOCOLS = tuple(s.name for s in protocols.protocol_specs() if not s.needs_registry)


def run_demo(args: argparse.Namespace) -> int:
    """Start a local broker and Spark, write the demo's changes, print the topic decoded,
    and the wall time of the whole command and of its parts (from the start of this
    function: a Spark start takes most of it)."""
    started = time.monotonic()
    options = given_options(args)
    protocol = options.setdefault("protocol", "simple").strip().lower()
    if protocol not in DEMO_PROTOCOLS:
        raise ValueError(
            f"demo --protocol {protocol}: use {or_list(DEMO_PROTOCOLS)} (avro needs a schema "
            "registry; dry-run --protocol avro shows its messages)"
        )
    for name in _DEMO_SETS:
        if name in options:
            raise ValueError(
                f"-o {name}: the demo sets it itself (use --bootstrap-servers for the brokers, "
                "--topic for the topic)"
            )
    options = {
        "kafka.bootstrap.servers": args.bootstrap_servers or "demo:9092",
        "topic": args.topic,
        "partition-num": "2",
        "database": "shop",
        "table": "users",
        "primary-key": "id",
        **options,
    }
    config = SinkConfig.from_options(options)  # a bad option fails here, before Spark starts
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    with contextlib.ExitStack() as stack:
        brokers = args.bootstrap_servers
        if brokers is None:
            brokers = stack.enter_context(LocalBroker()).bootstrap
            print(f"local broker (Tansu) on {brokers}")
        else:
            print(f"Kafka brokers {brokers}")
        options["kafka.bootstrap.servers"] = brokers
        spark = (
            SparkSession.builder.master("local[2]")
            .appName("ticdc-sink-demo")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
        spark_ready = time.monotonic()
        try:
            ticdc_sink.register(spark)
            changes = spark.createDataFrame(
                [
                    ("c", 1, "alice", 30, "91.50", None),
                    ("c", 2, "bob", 25, "78.00", None),
                    ("c", 3, "carol", 41, "88.25", None),
                    ("u", 2, "bob", 26, "80.00", (2, "bob", 25, "78.00")),
                    ("d", 3, "carol", 41, "88.25", None),
                ],
                "_op string, id bigint, name string, age int, score string, "
                "_before struct<id: bigint, name: string, age: int, score: string>",
            ).selectExpr(
                "_op",
                "id",
                "name",
                "age",
                "cast(score as decimal(5,2)) as score",
                "case when _before is null then null else named_struct('id', _before.id, "
                "'name', _before.name, 'age', _before.age, "
                "'score', cast(_before.score as decimal(5,2))) end as _before",
            )
            print(f"writing 5 changes (3 inserts, 1 update, 1 delete) to shop.users as {protocol}")
            writer = changes.coalesce(1).write.format("ticdc").mode("append")
            for name, value in options.items():
                writer = writer.option(name, value)
            writer.save()
            written = time.monotonic()
        finally:
            spark.stop()
        topic = rules.topic_for(config.routing, "shop", "users")
        decoder = protocols.decoder_for(protocol, written_with(config.codec))
        print_topic(brokers, topic, decoder)
    done = time.monotonic()
    print(
        f"done in {done - started:.1f} s: broker and Spark started in "
        f"{spark_ready - started:.1f} s, changes written in {written - spark_ready:.1f} s, "
        f"Spark stopped and the topic read in {done - written:.1f} s"
    )
    return 0
