"""`ticdc-sink` / `python -m ticdc_sink`: see what the sink writes, without writing code.

    ticdc-sink demo [--protocol P]        local broker, a DataFrame of changes written through
                                          format("ticdc"), the decoded messages printed
    ticdc-sink decode --bootstrap-servers H:P --topic T [--protocol P] [--follow] ...
                                          decode every message of a topic
                                          (--follow-claim-check: read claim-check
                                          files back into full rows)
    ticdc-sink dry-run --table-ddl "CREATE TABLE ..." [-o option=value ...]
                                          one example message of each kind, no Kafka
    ticdc-sink check [-o option=value ...] [--table db.t] [--key col=value ...]
                                          validate options; show topics and partitions

Errors exit with status 2 and one line on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import attrs

from ticdc_sink import codec, schema_change, tso
from ticdc_sink._local_broker import LocalBroker
from ticdc_sink.claim_check import read_claim_check
from ticdc_sink.codec.mysql import ValueKind, value_kind
from ticdc_sink.config import FrozenMap, SinkConfig
from ticdc_sink.decode import Decoder, decoder_for
from ticdc_sink.errors import DecodeError, TiCDCSinkError
from ticdc_sink.events import Op, RowChange
from ticdc_sink.producer import Record, read_topic
from ticdc_sink.routing import TopicRouter, build_dispatcher
from ticdc_sink.schema import (
    TableSchema,
    parse_table_ddl,
    stable_table_id,
    stable_version,
)

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except (TiCDCSinkError, ValueError, OSError) as exc:
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"ticdc-sink {args.command}: {text}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ticdc-sink",
        description="Write, decode and check TiCDC-format change events on Kafka.",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser(
        "demo", help="write a small change stream to a local broker and print it decoded"
    )
    demo.add_argument("--topic", default="demo_{schema}_{table}", help="topic expression")
    demo.add_argument(
        "--protocol",
        default="simple",
        choices=("simple", "debezium", "canal-json"),
        help="protocol to write and decode (avro needs a schema registry)",
    )
    demo.set_defaults(run=lambda a: run_demo(a.topic, a.protocol))

    decode = commands.add_parser("decode", help="decode every message of a topic")
    decode.add_argument("--bootstrap-servers", required=True, help="host:port[,host:port]")
    decode.add_argument("--topic", required=True)
    decode.add_argument("--protocol", default="simple", help="simple, avro, debezium or canal-json")
    decode.add_argument("--encoding-format", default="json", help="simple: json or avro")
    decode.add_argument("--schema-registry", help="avro: the registry URL")
    decode.add_argument("--time-zone", default="UTC", help="debezium: zone of TIMESTAMPs")
    decode.add_argument("--format", choices=("table", "jsonl"), default="table")
    decode.add_argument("--partition", type=int, action="append", help="only these partitions")
    decode.add_argument("--limit", type=int, help="stop after this many messages")
    decode.add_argument(
        "--from-beginning",
        action="store_true",
        help="with --follow: read the topic from its start (without --follow it always is)",
    )
    decode.add_argument("--follow", action="store_true", help="keep reading new messages")
    decode.add_argument(
        "--idle", type=float, default=1.5, help="without --follow: stop after this quiet time"
    )
    decode.add_argument("--timeout", type=float, default=10.0, help="seconds to reach the brokers")
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
    decode.set_defaults(run=run_decode)

    for name, help_text in (
        ("dry-run", "print one example message of each kind; no Kafka, no registry"),
        ("check", "validate options and show topics and partitions"),
    ):
        sub = commands.add_parser(name, help=help_text)
        sub.add_argument(
            "-o",
            "--option",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help="a sink option, as given to .option() (repeat)",
        )
        sub.add_argument("--sink-uri", help="TiCDC sink URI (kafka://host:port/topic?...)")
        sub.add_argument("--config", help="TiCDC changefeed TOML file ([sink] is read)")
        sub.add_argument("--table-ddl", help="CREATE TABLE statement (or @file)")
        sub.add_argument(
            "--columns",
            help='JSON list of columns, e.g. [{"name":"id","type":"bigint","key":true}] (or @file)',
        )
        if name == "check":
            sub.add_argument("--table", action="append", default=[], help="db.table (repeat)")
            sub.add_argument(
                "--key", action="append", default=[], metavar="COLUMN=VALUE", help="row values"
            )
            sub.add_argument(
                "--partitions", type=int, help="partition count to assume (default partition-num)"
            )
            sub.set_defaults(run=run_check)
        else:
            sub.set_defaults(run=run_dry_run)
    return parser


# -- decode ------------------------------------------------------------------------------


def run_decode(args: argparse.Namespace) -> int:
    decoder = decoder_for(
        args.protocol,
        encoding_format=args.encoding_format,
        time_zone=args.time_zone,
        schema_for_id=_registry_lookup(args.schema_registry),
        claim_check_loader=read_claim_check if args.follow_claim_check else None,
        claim_check_raw_value=args.claim_check_raw_value,
    )
    live = args.follow and sys.stderr.isatty()
    count = 0
    for record in _records(args):
        if args.partition and record.partition not in args.partition:
            continue
        if count == 0 and args.format == "table":
            print(f"{'partition':>9} {'offset':>8}  event")
        count += 1
        print(_render(record, decoder, args.format, args.protocol), flush=args.follow)
        if live:
            print(f"\r{count} messages", end="", file=sys.stderr, flush=True)
        if args.limit and count >= args.limit:
            break
    if args.format == "table" and not args.follow:
        print(f"{count} messages from topic {args.topic}")
    return 0


# librdkafka logs connection failures to stderr itself; the command reports them once.
_QUIET = {"log_level": "0"}


def _records(args: argparse.Namespace) -> Iterator[Record]:
    if not args.follow:
        yield from read_topic(
            args.bootstrap_servers,
            args.topic,
            idle_s=args.idle,
            timeout_s=max(args.timeout, args.idle + 1),
            client_config=_QUIET,
        )
        return
    import confluent_kafka

    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": args.bootstrap_servers,
            "group.id": "ticdc-sink-decode",
            "enable.auto.commit": "false",
            **_QUIET,
        }
    )
    try:
        metadata = consumer.list_topics(args.topic, timeout=args.timeout)
        topic = metadata.topics.get(args.topic)
        if topic is None or topic.error is not None:
            raise DecodeError(f"topic {args.topic} does not exist on {args.bootstrap_servers}")
        start = (
            confluent_kafka.OFFSET_BEGINNING if args.from_beginning else confluent_kafka.OFFSET_END
        )
        consumer.assign(
            [confluent_kafka.TopicPartition(args.topic, p, start) for p in sorted(topic.partitions)]
        )
        while True:
            message = consumer.poll(0.5)
            if message is None:
                continue
            if message.error() is not None:
                raise DecodeError(f"reading {args.topic}: {message.error()}")
            stamp = message.timestamp()
            yield Record(
                message.partition(),
                message.offset(),
                message.key(),
                message.value(),
                stamp[1] if stamp[0] else None,
            )
    finally:
        consumer.close()


def _render(record: Record, decoder: Decoder, fmt: str, protocol: str) -> str:
    """One message, decoded; a message that is not of `protocol` is reported, not fatal."""
    try:
        event = decoder.decode_message(record.key, record.value)
    except (TiCDCSinkError, ValueError) as exc:
        problem = str(exc).splitlines()[0]
        if fmt == "jsonl":
            return json.dumps(
                {"partition": record.partition, "offset": record.offset, "error": problem}
            )
        return f"{record.partition:>9} {record.offset:>8}  not {protocol}: {problem}"
    if fmt == "jsonl":
        data = {"partition": record.partition, "offset": record.offset, "event": type(event)}
        data["event"] = type(event).__name__.removeprefix("Decoded").upper()
        data.update(attrs.asdict(event, recurse=True, value_serializer=_plain))
        return json.dumps(data, default=str, ensure_ascii=False)
    return f"{record.partition:>9} {record.offset:>8}  {event.describe()}"


def _plain(_instance: Any, _field: Any, value: Any) -> Any:
    if isinstance(value, Op):
        return value.value
    if isinstance(value, bytes):
        return value.hex()
    return value


def _registry_lookup(url: str | None) -> Callable[[int], str] | None:
    if not url:
        return None
    from confluent_kafka.schema_registry import SchemaRegistryClient

    client = SchemaRegistryClient({"url": url})
    return lambda schema_id: client.get_schema(schema_id).schema_str


def print_topic(bootstrap: str, topic: str, decoder: Decoder) -> None:
    """Print every message of a topic, partition by partition, decoded."""
    records = read_topic(bootstrap, topic)
    print(f"topic {topic}: {len(records)} messages")
    for partition in sorted({r.partition for r in records}):
        print(f"  partition {partition}")
        for record in (r for r in records if r.partition == partition):
            event = decoder.decode_message(record.key, record.value)
            print(f"    offset {record.offset:>3}  {event.describe()}")


# -- dry-run and check -------------------------------------------------------------------


def _options(args: argparse.Namespace) -> dict[str, str]:
    options: dict[str, str] = {}
    if args.config:
        options["config"] = args.config
    if args.sink_uri:
        options["sink-uri"] = args.sink_uri
    for item in args.option:
        name, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"-o {item!r}: give NAME=VALUE, e.g. -o protocol=debezium")
        options[name.strip().lower()] = value
    if not (args.sink_uri or args.config):
        # Neither is needed to see messages or routing; the URI or file may set them.
        options.setdefault("kafka.bootstrap.servers", "dry-run:9092")
        options.setdefault("topic", "{schema}_{table}")
    return options


def _text(value: str | None) -> str | None:
    if value and value.startswith("@"):
        with open(value[1:], encoding="utf-8") as f:
            return f.read()
    return value


def _table(args: argparse.Namespace, config: SinkConfig) -> TableSchema:
    """The table of `--table-ddl`, `--columns` or the `table-ddl` option."""
    ddl = _text(args.table_ddl) or config.input.table_ddl
    if not ddl and args.columns:
        ddl = _ddl_from_columns(json.loads(_text(args.columns) or "[]"))
    if not ddl:
        raise ValueError("give the table: --table-ddl 'CREATE TABLE ...' or --columns '[...]'")
    parsed = parse_table_ddl(ddl)
    database = config.input.database or parsed.database or "db"
    table = config.input.table or parsed.table
    return TableSchema(
        database,
        table,
        parsed.columns,
        parsed.indexes,
        table_id=config.input.table_id or stable_table_id(database, table),
        version=config.input.schema_version
        or stable_version(parsed.columns, parsed.indexes, parsed.pk_clustered),
        pk_clustered=parsed.pk_clustered,
    )


def _ddl_from_columns(columns: list[dict[str, Any]]) -> str:
    if not isinstance(columns, list) or not all(
        isinstance(c, dict) and "name" in c for c in columns
    ):
        raise ValueError('--columns: give a JSON list like [{"name": "id", "type": "bigint"}]')
    parts = []
    for c in columns:
        null = "" if c.get("nullable", not c.get("key")) else " NOT NULL"
        parts.append(f"`{c['name']}` {c.get('type', 'text')}{null}")
    keys = [f"`{c['name']}`" for c in columns if c.get("key")]
    if keys:
        parts.append(f"PRIMARY KEY ({', '.join(keys)})")
    return f"CREATE TABLE `t` ({', '.join(parts)})"


def _example_value(column: Any, variant: int) -> Any:
    """A plausible mounter value (ticdc_sink.events) of the column's type."""
    t = column.type
    match value_kind(column):
        case ValueKind.INT if t.base == "year":
            return 2024 + variant
        case ValueKind.INT | ValueKind.UINT:
            return 1 if t.base == "tinyint" and t.length == 1 else 1 + variant
        case ValueKind.FLOAT32 | ValueKind.FLOAT64:
            return 1.5 + variant
        case ValueKind.DECIMAL:
            return f"{12 + variant}.{'5' * t.scale}" if t.scale else str(12 + variant)
        case ValueKind.DATE:
            return f"2024-01-0{2 + variant}"
        case ValueKind.DATETIME | ValueKind.TIMESTAMP:
            fraction = "." + "1" * t.fsp if t.fsp else ""
            return f"2024-01-02 03:04:0{5 + variant}{fraction}"
        case ValueKind.TIME:
            return f"01:02:0{3 + variant}"
        case ValueKind.ENUM | ValueKind.SET:
            return 1 if t.elements else 0
        case ValueKind.BIT:
            return 1
        case ValueKind.JSON:
            return '{"a": ' + str(1 + variant) + "}"
        case ValueKind.VECTOR:
            return "[1,2]"
        case ValueKind.BINARY:
            return bytes([1, 2 + variant])
    return "example" if variant == 0 else "example-old"


def _examples(table: TableSchema, commit_ts: int) -> list[tuple[str, RowChange]]:
    key = set(table.handle_key)
    row = tuple(_example_value(c, 0) for c in table.columns)
    before = tuple(
        value if c.name in key else _example_value(c, 1)
        for c, value in zip(table.columns, row, strict=True)
    )
    return [
        ("INSERT", RowChange(table, Op.INSERT, commit_ts, row)),
        ("UPDATE", RowChange(table, Op.UPDATE, commit_ts, row, before)),
        ("DELETE", RowChange(table, Op.DELETE, commit_ts, None, row)),
    ]


class _ExampleRegistry:
    """Schema ids for dry runs: numbered in order, nothing leaves the process."""

    def __init__(self) -> None:
        self.schemas: dict[str, int] = {}

    def schema_id(self, topic: str, record_name: str, schema: str, *, is_key: bool) -> int:
        return self.schemas.setdefault(schema, len(self.schemas) + 1)

    def schema_text(self, schema_id: int) -> str:
        return next(s for s, i in self.schemas.items() if i == schema_id)


def run_dry_run(args: argparse.Namespace) -> int:
    config = SinkConfig.from_options(_options(args))
    table = _table(args, config)
    commit_ts = tso.compose(1_700_000_000_000)
    build_ts_ms = tso.physical_ms(commit_ts)
    topic = TopicRouter(config.routing.topic).topic_for(table.database, table.table)
    registry = _ExampleRegistry()
    encoder = codec.build_encoder(
        config.codec, table, build_ts_ms=build_ts_ms, topic=topic, registry=registry
    )
    protocol = config.codec.protocol.value
    print(f"protocol {protocol}, topic {topic}, table {table.database}.{table.table}")
    messages: list[tuple[str, codec.Message | None]] = [
        (name, encoder.encode_row(change)) for name, change in _examples(table, commit_ts)
    ]
    messages.append(("BOOTSTRAP", encoder.encode_bootstrap()))
    messages.append(
        (
            "DDL (CREATE TABLE)",
            codec.encode_ddl(
                config.codec,
                table,
                None,
                schema_change.ddl_for(None, table) or "",
                commit_ts=commit_ts,
                build_ts_ms=build_ts_ms,
            ),
        )
    )
    messages.append(
        ("WATERMARK", codec.encode_watermark(config.codec, commit_ts, build_ts_ms=build_ts_ms))
    )
    decoder = decoder_for(
        protocol,
        encoding_format=config.codec.encoding_format.value,
        time_zone=config.codec.time_zone,
        schema_for_id=registry.schema_text,
    )
    for name, message in messages:
        print(f"\n== {name}")
        if message is None:
            print(f"   (protocol {protocol} sends none with these options)")
            continue
        print(f"   key:   {_shown(message.key)}")
        print(f"   value: {_shown(message.value)}")
        if _binary(message.value) or _binary(message.key):
            print(f"   decoded: {decoder.decode_message(message.key, message.value).describe()}")
    if registry.schemas:
        for schema, schema_id in registry.schemas.items():
            print(f"\n== Avro schema id {schema_id}\n{schema}")
    return 0


def _binary(data: bytes | None) -> bool:
    if not data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return not data.lstrip().startswith((b"{", b"["))


def _shown(data: bytes | None) -> str:
    if data is None:
        return "null"
    if data == b"":
        return "(empty)"
    if _binary(data):
        return f"{len(data)} bytes: {data[:48].hex(' ')}{' ...' if len(data) > 48 else ''}"
    return data.decode("utf-8")


def run_check(args: argparse.Namespace) -> int:
    config = SinkConfig.from_options(_options(args))
    print("configuration (secrets masked):")
    print(json.dumps(_redacted(config), indent=2, default=str))
    for name in config.ignored:
        print(f"ignored (no meaning for this sink): {name}")
    router = TopicRouter(config.routing.topic)
    tables = [t.split(".", 1) for t in args.table] or []
    if args.table_ddl or args.columns or config.input.table_ddl:
        schema = _table(args, config)
        tables = tables or [[schema.database, schema.table]]
    else:
        schema = None
    for names in tables:
        if len(names) != 2:
            raise ValueError(f"--table {'.'.join(names)!r}: give database.table")
        database, table = names
        topic = router.topic_for(database, table)
        print(f"\ntable {database}.{table} -> topic {topic}")
        if args.key:
            if schema is None:
                raise ValueError("--key needs the table's columns: --table-ddl or --columns")
            named = attrs.evolve(schema, database=database, table=table)
            count = args.partitions or config.kafka.partition_num or 3
            partition = _partition_of(named, config, args.key, count)
            print(f"  key {', '.join(args.key)} -> partition {partition} of {count}")
    return 0


def _partition_of(table: TableSchema, config: SinkConfig, keys: list[str], count: int) -> int:
    given: dict[str, str] = {}
    for item in keys:
        name, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"--key {item!r}: give COLUMN=VALUE")
        given[name.strip()] = value
    values = []
    for column in table.columns:
        text = given.get(column.name)
        kind = value_kind(column)
        if text is None:
            values.append(None)
        elif kind in (ValueKind.INT, ValueKind.UINT):
            values.append(int(text))
        elif kind in (ValueKind.FLOAT, ValueKind.DOUBLE):
            values.append(float(text))
        elif kind is ValueKind.BINARY:
            values.append(text.encode())
        else:
            values.append(text)
    change = RowChange(table, Op.INSERT, tso.now(), tuple(values))
    routing = config.routing
    dispatcher = build_dispatcher(
        routing.partition, table, columns=routing.partition_columns, index=routing.index
    )
    return dispatcher.partition(change, count)


def _config_value(_instance: Any, _field: Any, value: Any) -> Any:
    if isinstance(value, FrozenMap):
        return dict(value)
    return getattr(value, "value", value)


def _redacted(config: SinkConfig) -> dict[str, Any]:
    data = attrs.asdict(config, value_serializer=_config_value)
    del data["ignored"]
    data["kafka"]["client_config"] = {
        k: v for k, v in config.kafka.redacted().items() if k != "bootstrap.servers"
    }
    if data["registry"].get("password"):
        data["registry"]["password"] = "***"
    return data


# -- demo ----------------------------------------------------------------------------------


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
        started = time.monotonic()
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
        print(f"done in {time.monotonic() - started:.1f} s")
    return 0
