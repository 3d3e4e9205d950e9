"""`python -m ticdc_sink` / `ticdc-sink`: the demo, and a decoder for topics.

python -m ticdc_sink demo                 start a local broker, write a DataFrame of
                                          inserts, updates and deletes through
                                          format("ticdc"), print the decoded messages
python -m ticdc_sink decode --bootstrap-servers H:P --topic T [--protocol P]
                                          print the decoded messages of a topic
                                          (--follow-claim-check: read claim-check
                                          files back into full rows)
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from ticdc_sink._local_broker import LocalBroker
from ticdc_sink.claim_check import read_claim_check
from ticdc_sink.decode import Decoder, decoder_for
from ticdc_sink.producer import read_topic

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ticdc-sink", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="write a small change stream to a local broker")
    demo.add_argument("--topic", default="demo_{schema}_{table}", help="topic expression")
    demo.add_argument(
        "--protocol",
        default="simple",
        choices=("simple", "debezium", "canal-json"),
        help="protocol to write and decode (avro needs a schema registry; see README)",
    )
    decode = commands.add_parser("decode", help="print the decoded messages of a topic")
    decode.add_argument("--bootstrap-servers", required=True)
    decode.add_argument("--topic", required=True)
    decode.add_argument("--protocol", default="simple")
    decode.add_argument("--encoding-format", default="json", help="simple: json or avro")
    decode.add_argument("--schema-registry", help="avro: the registry URL")
    decode.add_argument("--time-zone", default="UTC", help="debezium: zone of TIMESTAMPs")
    decode.add_argument(
        "--follow-claim-check",
        action="store_true",
        help="simple, canal-json: read claim-check locations back into full rows",
    )
    decode.add_argument(
        "--claim-check-raw-value",
        action="store_true",
        help="the sink wrote claim-check files with claim-check-raw-value=true",
    )
    args = parser.parse_args(argv)
    if args.command == "demo":
        return run_demo(args.topic, args.protocol)
    schema_for_id = None
    if args.schema_registry:
        from confluent_kafka.schema_registry import SchemaRegistryClient

        client = SchemaRegistryClient({"url": args.schema_registry})

        def schema_for_id(schema_id: int) -> str:
            return client.get_schema(schema_id).schema_str

    decoder = decoder_for(
        args.protocol,
        encoding_format=args.encoding_format,
        time_zone=args.time_zone,
        schema_for_id=schema_for_id,
        claim_check_loader=read_claim_check if args.follow_claim_check else None,
        claim_check_raw_value=args.claim_check_raw_value,
    )
    print_topic(args.bootstrap_servers, args.topic, decoder)
    return 0


def print_topic(bootstrap: str, topic: str, decoder: Decoder) -> None:
    """Print every message of a topic, partition by partition, decoded."""
    records = read_topic(bootstrap, topic)
    print(f"topic {topic}: {len(records)} messages")
    for partition in sorted({r.partition for r in records}):
        print(f"  partition {partition}")
        for record in (r for r in records if r.partition == partition):
            event = decoder.decode_message(record.key, record.value)
            print(f"    offset {record.offset:>3}  {event.describe()}")


def run_demo(topic_expression: str, protocol: str = "simple") -> int:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    import ticdc_sink

    with LocalBroker() as broker:
        print(f"local broker (Tansu) on {broker.bootstrap}")
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
            print("writing 5 changes (3 inserts, 1 update, 1 delete) to shop.users ...")
            (
                changes.coalesce(1)
                .write.format("ticdc")
                .mode("append")
                .option("kafka.bootstrap.servers", broker.bootstrap)
                .option("topic", topic_expression)
                .option("protocol", protocol)
                .option("partition-num", "2")
                .option("database", "shop")
                .option("table", "users")
                .option("primary-key", "id")
                .save()
            )
        finally:
            spark.stop()
        topic = topic_expression.replace("{schema}", "shop").replace("{table}", "users")
        print_topic(broker.bootstrap, topic, decoder_for(protocol))
    return 0
