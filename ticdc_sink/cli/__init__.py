"""`ticdc-sink` / `python -m ticdc_sink`: see what the sink writes, without writing code.

    ticdc-sink demo [--protocol P] [-o option=value ...] [--bootstrap-servers H:P]
                                          local broker (or yours), a DataFrame of changes
                                          written through format("ticdc"), the decoded
                                          messages printed
    ticdc-sink decode --bootstrap-servers H:P --topic T [--protocol P] [--follow] ...
                                          decode every message of a topic
                                          (--follow-claim-check: read claim-check
                                          files back into full rows)
    ticdc-sink dry-run --table-ddl "CREATE TABLE ..." [--protocol P] [-o option=value ...]
                                          one example message of each kind, no Kafka
    ticdc-sink check [-o option=value ...] [--table db.t] [--key col=value ...]
                                          validate options; show topics and partitions
    ticdc-sink reports CHECKPOINT [--format table|jsonl]
                                          the batch reports kept under a checkpoint location
    ticdc-sink --version                  ticdc-sink <version>

Every command takes `--protocol P` and `-o NAME=VALUE` alike (`decode` the options that say
how to read messages). Errors exit with status 2 and one line on stderr; a reader that
goes away (`decode ... | head`) ends the command quietly.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import functools
import json
import os
import sys
import time
from collections.abc import Callable, Generator, Iterable, Sequence
from typing import Any

import attrs
import pyarrow as pa
from pyspark.sql.types import StructField, StructType

import ticdc_sink
from ticdc_sink import codec, schema_change, tso
from ticdc_sink._local_broker import LocalBroker
from ticdc_sink.claim_check import read_claim_check
from ticdc_sink.codec.mysql import ValueKind, value_kind
from ticdc_sink.column_selector import ColumnSelector, select_columns
from ticdc_sink.config import (
    CodecConfig,
    FrozenMap,
    SinkConfig,
    is_secret,
    mask_uri,
    spell_option,
    version_settings,
)
from ticdc_sink.ddl import parse_table_ddl
from ticdc_sink.decode import DecodedRow, Decoder, decode_record, decoder_for
from ticdc_sink.decode.sniff import misread_hint
from ticdc_sink.errors import (
    ConfigError,
    DecodeError,
    InputError,
    MessageTooLargeError,
    SchemaError,
    TiCDCSinkError,
)
from ticdc_sink.events import Op, RowChange
from ticdc_sink.input_batch import read_change_batches
from ticdc_sink.kafka_settings import check_client_config, producer_settings
from ticdc_sink.kafka_topics import DEFAULT_PARTITION_NUM
from ticdc_sink.read.consumer import TopicLog
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.record import Record
from ticdc_sink.read.rows import arrow_schema as read_arrow_schema
from ticdc_sink.registry import ConfluentSchemaRegistry
from ticdc_sink.routing import DispatchRule, PartitionRule
from ticdc_sink.row_filter import DML_EVENTS, EventFilterRule
from ticdc_sink.schema import TableSchema
from ticdc_sink.state import SinkState
from ticdc_sink.writer.plan import TableDecision, WritePlan, decide_table, make_plan

__all__ = ["DEMO_PROTOCOLS", "main"]

# The exit status of a command whose reader went away (a closed pipe), as for any Unix
# tool killed by SIGPIPE (128 + 13).
_CLOSED_PIPE = 141
# The commit ts of every example (dry-run) and --key row (check): fixed, so the output is too.
_EXAMPLE_TS = tso.compose(1_700_000_000_000)


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except BrokenPipeError:
        _silence_stdout()
        return _CLOSED_PIPE
    except (TiCDCSinkError, ValueError, OSError) as exc:
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"ticdc-sink {args.command}: {text}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _silence_stdout() -> None:
    """After a closed pipe: point stdout at /dev/null, so that the interpreter's last
    flush at exit does not report the pipe again."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


# -- arguments ----------------------------------------------------------------------------


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number")
    return value


def _partition_number(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is not a partition number (0, 1, ...)")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number of seconds")
    return value


# Flags that are sink options by another spelling: `--protocol avro` is `-o protocol=avro`.
_FLAG_OPTIONS = {
    "protocol": "protocol",
    "encoding_format": "encoding-format",
    "schema_registry": "schema-registry",
    "time_zone": "time-zone",
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ticdc-sink",
        description="Write, decode and check TiCDC-format change events on Kafka.",
    )
    parser.add_argument(
        "--version", action="version", version=f"ticdc-sink {ticdc_sink.__version__}"
    )
    commands = parser.add_subparsers(dest="command", required=True)

    sink_options = argparse.ArgumentParser(add_help=False)
    sink_options.add_argument(
        "-o",
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a sink option, as given to .option() (repeat)",
    )
    options = argparse.ArgumentParser(add_help=False, parents=[sink_options])
    options.add_argument(
        "--protocol",
        help=f"{_or_list([s.name for s in codec.protocol_specs()])} (-o protocol=)",
    )
    protocol_options = argparse.ArgumentParser(add_help=False)
    protocol_options.add_argument(
        "--encoding-format", help="simple: json or avro (-o encoding-format=)"
    )
    protocol_options.add_argument(
        "--schema-registry", help="avro: the registry URL (-o schema-registry=)"
    )
    protocol_options.add_argument(
        "--time-zone", help="the zone TIMESTAMP values are written in (-o time-zone=)"
    )

    demo = commands.add_parser(
        "demo",
        parents=[sink_options],
        help="write a small change stream to a local broker and print it decoded",
    )
    demo.add_argument(
        "--protocol",
        help=f"{_or_list(DEMO_PROTOCOLS)} (-o protocol=; avro needs a schema registry, "
        "which the demo has none of)",
    )
    demo.add_argument("--topic", default="demo_{schema}_{table}", help="topic expression")
    demo.add_argument(
        "--bootstrap-servers",
        metavar="H:P",
        help="your Kafka brokers (host:port[,host:port]) instead of a local Tansu",
    )
    demo.set_defaults(run=run_demo)

    decode = commands.add_parser(
        "decode", parents=[options, protocol_options], help="decode every message of a topic"
    )
    decode.add_argument("--bootstrap-servers", required=True, help="host:port[,host:port]")
    decode.add_argument("--topic", required=True)
    decode.add_argument("--format", choices=("table", "jsonl"), default="table")
    decode.add_argument(
        "--partition", type=_partition_number, action="append", help="only these partitions"
    )
    decode.add_argument("--limit", type=_positive_int, help="stop after this many messages")
    decode.add_argument(
        "--from-beginning",
        action="store_true",
        help="with --follow: read the topic from its start (without --follow it always is)",
    )
    decode.add_argument("--follow", action="store_true", help="keep reading new messages")
    decode.add_argument(
        "--idle",
        type=_positive_float,
        default=1.5,
        help="without --follow: stop after this quiet time",
    )
    decode.add_argument(
        "--timeout", type=_positive_float, default=10.0, help="seconds to reach the brokers"
    )
    decode.add_argument(
        "--follow-claim-check",
        action="store_true",
        help="simple, canal-json, open-protocol: read claim-check locations back into full rows",
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
        sub = commands.add_parser(name, parents=[options, protocol_options], help=help_text)
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
                "--partitions",
                type=_positive_int,
                help="partition count to assume (default partition-num)",
            )
            sub.set_defaults(run=run_check)
        else:
            sub.set_defaults(run=run_dry_run)

    reports = commands.add_parser(
        "reports", help="print the batch reports kept under a checkpoint location"
    )
    reports.add_argument("checkpoint", metavar="CHECKPOINT", help="the checkpointLocation")
    reports.add_argument("--format", choices=("table", "jsonl"), default="table")
    reports.add_argument("--limit", type=_positive_int, help="only the last N reports")
    reports.set_defaults(run=run_reports)
    return parser


def _or_list(names: list[str] | tuple[str, ...]) -> str:
    """`a, b or c`."""
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else "".join(names)


def _given_options(args: argparse.Namespace) -> dict[str, str]:
    """The `-o NAME=VALUE` options and the flags that are options (`--protocol`), by
    option name (lowercase, as Spark passes them)."""
    options: dict[str, str] = {}
    for item in args.option:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"-o {item!r}: give NAME=VALUE, e.g. -o protocol=debezium")
        options[name.strip().lower()] = value
    for attribute, option in _FLAG_OPTIONS.items():
        value = getattr(args, attribute, None)
        if value is None:
            continue
        flag = "--" + attribute.replace("_", "-")
        if option in options and options[option] != value:
            raise ValueError(
                f"{flag} {value} and -o {option}={options[option]} disagree; give it once"
            )
        options[option] = value
    return options


# -- decode ------------------------------------------------------------------------------

# The options that say how to read a topic; the rest are the writer's.
_DECODE_OPTIONS = (
    "protocol",
    "encoding-format",
    "time-zone",
    "claim-check-raw-value",
    "large-message-handle-compression",
)


def run_decode(args: argparse.Namespace) -> int:
    options = _given_options(args)
    if args.claim_check_raw_value:
        options["claim-check-raw-value"] = "true"
    with contextlib.ExitStack() as cleanup:
        decoder = _decoder(options, args.follow_claim_check, cleanup)
        protocol = options.get("protocol", "simple")
        live = args.follow and sys.stderr.isatty()
        count = 0
        records = cleanup.enter_context(contextlib.closing(_records(args)))
        for record in records:
            if count == 0 and args.format == "table":
                print(f"{'partition':>9} {'offset':>8}  event")
            count += 1
            print(_render(record, decoder, args.format, protocol), flush=args.follow)
            if live:
                print(f"\r{count} messages", end="", file=sys.stderr, flush=True)
            if args.limit and count >= args.limit:
                break
    if args.format == "table" and not args.follow:
        print(f"{count} messages from topic {args.topic}")
    return 0


def _decoder(
    options: dict[str, str], follow_claim_check: bool, cleanup: contextlib.ExitStack
) -> Decoder:
    """The decoder the options ask for; a registry client (avro) is closed by `cleanup`."""
    registry_options = {k: v for k, v in options.items() if k.startswith("schema-registry")}
    other = sorted(set(options) - set(_DECODE_OPTIONS) - set(registry_options))
    if other:
        raise ValueError(
            f"-o {other[0]}: decode takes only the options that say how to read messages: "
            f"{', '.join(_DECODE_OPTIONS)}, schema-registry and schema-registry-*"
        )
    protocol = options.get("protocol", "simple").strip().lower()
    spec = codec.find_protocol(protocol)  # an unknown one: decoder_for says so
    lookup = None
    if spec is not None and spec.needs_registry:
        if "schema-registry" not in registry_options:
            raise ValueError(
                f"decode --protocol {spec.name} needs --schema-registry URL, the registry the "
                "messages were written with"
            )
        lookup = _schema_lookup(spec.name, registry_options, cleanup)
    elif registry_options:
        takers = " or ".join(s.name for s in codec.protocol_specs() if s.needs_registry)
        raise ValueError(f"--{sorted(registry_options)[0]} applies to --protocol {takers} only")
    raw_value = options.get("claim-check-raw-value", "false").strip().lower()
    if raw_value not in ("true", "false"):
        raise ValueError(f"-o claim-check-raw-value={raw_value}: use true or false")
    return decoder_for(
        protocol,
        encoding_format=options.get("encoding-format", "json").strip().lower(),
        time_zone=options.get("time-zone", "UTC"),
        schema_for_id=lookup,
        claim_check_loader=read_claim_check if follow_claim_check else None,
        claim_check_raw_value=raw_value == "true",
        compression=options.get("large-message-handle-compression", "none"),
    )


def _schema_lookup(
    protocol: str, registry_options: dict[str, str], cleanup: contextlib.ExitStack
) -> Callable[[int], str]:
    """Writer schemas by id from the registry. An id the registry does not know fails
    only its message (reported on its line); a registry that cannot be reached fails the
    command."""
    # The sink's own option parsing: credentials in the URL, schema-registry-user, TLS.
    config = SinkConfig.from_options(
        {"kafka.bootstrap.servers": "decode", "topic": "decode", "protocol": protocol}
        | registry_options
    )
    registry = ConfluentSchemaRegistry(config.registry, config.codec.subject_name_strategy)
    cleanup.callback(registry.close)
    return registry.decoder_schema_text


def _records(args: argparse.Namespace) -> Generator[Record, None, None]:
    # The reader's consumer (ticdc_sink.read.consumer), as format("ticdc") reads.
    config = ReadConfig(
        args.bootstrap_servers,
        args.topic,
        poll_timeout_s=args.timeout,
        broker_timeout_s=args.timeout,
    )
    with TopicLog(config) as log:
        if args.follow:
            yield from log.follow(args.partition, from_beginning=args.from_beginning)
            return
        yield from log.read_until_idle(
            args.partition, idle_s=args.idle, timeout_s=max(args.timeout, args.idle + 1)
        )


def _render(record: Record, decoder: Decoder, fmt: str, protocol: str) -> str:
    """One message, decoded (a line per event: an open-protocol message may hold
    several); a message that is not of `protocol` is reported, not fatal."""
    try:
        events = decode_record(decoder, record.key, record.value)
    except (DecodeError, ValueError) as exc:
        problem = str(exc).splitlines()[0] + misread_hint(decoder, record.key, record.value)
        if fmt == "jsonl":
            return json.dumps(
                {"partition": record.partition, "offset": record.offset, "error": problem}
            )
        return f"{record.partition:>9} {record.offset:>8}  not {protocol}: {problem}"
    lines = []
    for event in events:
        if fmt == "jsonl":
            data: dict[str, Any] = {"partition": record.partition, "offset": record.offset}
            data["event"] = type(event).__name__.removeprefix("Decoded").upper()
            data.update(attrs.asdict(event, recurse=True, value_serializer=_plain))
            lines.append(json.dumps(data, default=str, ensure_ascii=False))
        else:
            lines.append(f"{record.partition:>9} {record.offset:>8}  {event.describe()}")
    return "\n".join(lines)


def _plain(_instance: Any, _field: Any, value: Any) -> Any:
    if isinstance(value, Op):
        return value.value
    if isinstance(value, bytes):
        return value.hex()
    return value


def print_topic(bootstrap: str, topic: str, decoder: Decoder) -> None:
    """Print every message of a topic, partition by partition, decoded."""
    with TopicLog(ReadConfig(bootstrap, topic, poll_timeout_s=30.0)) as log:
        records = log.read_until_idle(None, idle_s=1.0, timeout_s=30.0)
    print(f"topic {topic}: {len(records)} messages")
    for partition in sorted({r.partition for r in records}):
        print(f"  partition {partition}")
        for record in (r for r in records if r.partition == partition):
            for event in decode_record(decoder, record.key, record.value):
                print(f"    offset {record.offset:>3}  {event.describe()}")


# -- dry-run and check: options and the table -------------------------------------------


def _sink_options(args: argparse.Namespace) -> dict[str, str]:
    options = _given_options(args)
    if args.config:
        options["config"] = args.config
    if args.sink_uri:
        options["sink-uri"] = args.sink_uri
    return options


# What dry-run and check assume for an option the sink needs but these commands do not:
# neither sends anything, so no broker, topic or registry is needed to show the output.
_ASSUMED = {
    "kafka.bootstrap.servers": "dry-run:9092",
    "topic": "{schema}_{table}",
    "schema-registry": "http://dry-run:8081",
}


def _resolve(options: dict[str, str], assumable: Iterable[str]) -> tuple[SinkConfig, set[str]]:
    """The configuration of `options`, with a stand-in (`_ASSUMED`) for each option of
    `assumable` that the sink would report as not set; returns which were assumed."""
    assumed: dict[str, str] = {}
    while True:
        try:
            return SinkConfig.from_options({**options, **assumed}), set(assumed)
        except ConfigError as exc:
            name = exc.option
            # Only "not set" (no value): a stand-in must never replace a value given in
            # the sink-uri or the config file.
            if (
                name is None
                or name not in assumable
                or name in assumed
                or name in options
                or exc.value
            ):
                raise
            assumed[name] = _ASSUMED[name]


def _text(value: str | None, flag: str) -> str | None:
    """A flag's value, or the file's text for `@file`."""
    if not value or not value.startswith("@"):
        return value
    path = value[1:]
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as exc:
        raise ValueError(f"{flag} {value}: the file cannot be read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise ValueError(f"{flag} {value}: the file is not UTF-8 text") from None


def _planned(args: argparse.Namespace, config: SinkConfig) -> tuple[SinkConfig, WritePlan] | None:
    """The writer's plan of the table of `--table-ddl`, `--columns` or the option
    `table-ddl`: `writer.make_plan`, as the driver makes it before any task (table schema,
    encoder, dispatcher, column selection and event-filter conditions checked), over a
    DataFrame of the table's columns typed as a read of the table gives them (the writer's
    input contract) with the op and before columns. Returns the configuration planned
    with (the DDL and, when nothing names the database, `db`) and the plan; None without
    a table."""
    ddl = _text(args.table_ddl, "--table-ddl") or config.input.table_ddl
    if not ddl and args.columns:
        ddl = _ddl_from_columns(_text(args.columns, "--columns") or "")
        try:
            parse_table_ddl(ddl)
        except SchemaError as exc:
            raise ValueError(f"--columns: a type is not a MySQL type ({exc.message})") from None
    if not ddl:
        return None
    parsed = parse_table_ddl(ddl)
    reserved = {name.lower(): option for option, name in _metadata_columns(config).items()}
    for column in parsed.columns:
        option = reserved.get(column.name.lower())
        if option is not None:
            raise ValueError(
                f"column {column.name!r} is the name of a metadata column ({option}), which the "
                f"sink never writes as a table column; rename the column or set {option}"
            )
    database = config.input.database or (None if parsed.database else "db")
    planned = attrs.evolve(
        config, input=attrs.evolve(config.input, table_ddl=ddl, database=database)
    )
    table = TableSchema(parsed.database or database or "db", parsed.table or "t", parsed.columns)
    fields = list(read_arrow_schema(table))[: len(table.columns)]
    layout = planned.input.layout()
    arrow = pa.schema(
        [
            *fields,
            pa.field(layout.op_column, pa.string()),
            pa.field(layout.before_column, pa.struct(fields)),
        ]
    )
    frame = StructType([StructField(f.name, _spark_type(f.type), f.nullable) for f in arrow])
    # As the driver: the event-filter conditions are compiled only when a filter is set.
    filter_schema = arrow if planned.row_filter().active else None
    plan = make_plan(
        planned, frame, _EXAMPLE_TS, batch_id=None, arrow_schema=filter_schema, open_store=False
    )
    return planned, plan


def _spark_type(arrow_type: pa.DataType) -> Any:
    from pyspark.sql.pandas.types import from_arrow_type

    return from_arrow_type(arrow_type)


def _metadata_columns(config: SinkConfig) -> dict[str, str]:
    """Metadata column names by the option that sets them (`op-column`: `_op`)."""
    layout = attrs.asdict(config.input.layout())
    return {field.replace("_", "-"): name for field, name in layout.items()}


_COLUMNS_EXAMPLE = '[{"name": "id", "type": "bigint", "key": true}, {"name": "v", "type": "text"}]'


def _ddl_from_columns(text: str) -> str:
    """`--columns` as a CREATE TABLE statement: a JSON list of {name, type, key, nullable}."""
    try:
        columns = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"--columns is not JSON ({exc}); give e.g. {_COLUMNS_EXAMPLE}") from None
    if not isinstance(columns, list) or not columns:
        raise ValueError(f"--columns: give a non-empty JSON list, e.g. {_COLUMNS_EXAMPLE}")
    parts, keys, seen = [], [], set()
    for i, column in enumerate(columns):
        if not isinstance(column, dict) or set(column) - {"name", "type", "key", "nullable"}:
            raise ValueError(
                f"--columns entry {i + 1} is {json.dumps(column)}; each is an object with "
                'name, type and optional key and nullable, e.g. {"name": "id", "type": "bigint"}'
            )
        name, kind = column.get("name"), column.get("type")
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"--columns entry {i + 1} has no name: {json.dumps(column)}")
        if not isinstance(kind, str) or not kind.strip():
            raise ValueError(
                f"--columns: column {name!r} has no type; give its MySQL type, e.g. "
                '"type": "bigint" or "varchar(20)"'
            )
        if name.lower() in seen:
            raise ValueError(f"--columns: column {name!r} is given twice")
        seen.add(name.lower())
        key, nullable = column.get("key", False), column.get("nullable", not column.get("key"))
        if not isinstance(key, bool) or not isinstance(nullable, bool):
            raise ValueError(f"--columns: key and nullable of {name!r} are true or false")
        quoted = "`" + name.replace("`", "``") + "`"
        parts.append(f"{quoted} {kind}{'' if nullable else ' NOT NULL'}")
        if key:
            keys.append(quoted)
    if keys:
        parts.append(f"PRIMARY KEY ({', '.join(keys)})")
    return f"CREATE TABLE `t` ({', '.join(parts)})"


# -- dry-run -------------------------------------------------------------------------------


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


class _ExampleStore:
    """Claim-check files of a dry run: kept in memory, nothing is written."""

    def __init__(self, uri: str) -> None:
        self.base = mask_uri(uri).split("?", 1)[0].rstrip("/")
        self.files: dict[str, bytes] = {}

    def location(self, name: str) -> str:
        return f"{self.base}/{name}"

    def write(self, name: str, data: bytes) -> None:
        self.files[self.location(name)] = data

    def read(self, location: str) -> bytes:
        return self.files[location]


def run_dry_run(args: argparse.Namespace) -> int:
    config, assumed = _resolve(_sink_options(args), _ASSUMED)
    found = _planned(args, config)
    if found is None:
        raise ValueError("give the table: --table-ddl 'CREATE TABLE ...' or --columns '[...]'")
    config, plan = found
    table = plan.tables.template
    commit_ts = plan.commit_ts
    build_ts_ms = plan.build_ts_ms
    # What the writer does with this table's rows, decided by the writer's own code.
    decision = decide_table(config, table.database, table.table, table)
    assert decision.route is not None
    route = decision.route
    registry = _ExampleRegistry()
    options = config.codec
    store = None
    if options.claim_check_storage_uri is not None:
        store = _ExampleStore(options.claim_check_storage_uri)
    if not decision.taken:
        print(
            f"protocol {options.protocol.value}, table {table.database}.{table.table}: not "
            f"written, option 'filter-rules' does not take it (the writer drops every row of "
            "it and counts them as filtered)"
        )
        return 0
    # column-selectors: rows carry the selected columns, BOOTSTRAP and DDL the whole table.
    selection = decision.selection
    shown = table if selection is None else select_columns(table, selection)
    # Table routing: the messages name the table by its target (as the writer's tasks do).
    routed = config.routing.routed
    encoder, full_encoder = (
        codec.build_encoder(
            options,
            routed(t),
            build_ts_ms=build_ts_ms,
            topic=route.topic,
            registry=registry,
            claim_check=store,
        )
        for t in (shown, table)
    )
    protocol = options.protocol.value
    print(
        f"protocol {protocol}, topic {route.topic}, table {table.database}.{table.table}, "
        f"partition rule {route.dispatcher.rule.value}"
    )
    for line in _decision_notes(decision, table):
        print(line)
    for line in _version_lines(options):
        print(line)
    if "schema-registry" in assumed:
        print("(no schema-registry given: schema ids are numbered here, nothing is registered)")
    if codec.build_batcher(options) is not None:
        print(
            f"(each message below holds one event; the writer merges a partition's consecutive "
            f"events into one message, up to max-batch-size={options.max_batch_size} events "
            f"within max-message-bytes={options.max_message_bytes})"
        )
    makers: list[tuple[str, Callable[[], codec.Message | None]]] = [
        (name, functools.partial(encoder.encode_row, change))
        for name, change in _examples(shown, commit_ts)
    ]
    makers.append(("BOOTSTRAP", full_encoder.encode_bootstrap))
    makers.append(
        (
            "DDL (CREATE TABLE)",
            functools.partial(
                codec.encode_ddl,
                options,
                routed(table),
                None,
                schema_change.ddl_for(None, routed(table), qualified=routed(table) is not table)
                or "",
                commit_ts=commit_ts,
                build_ts_ms=build_ts_ms,
            ),
        )
    )
    makers.append(
        (
            "WATERMARK",
            functools.partial(codec.encode_watermark, options, commit_ts, build_ts_ms=build_ts_ms),
        )
    )
    decoder = decoder_for(
        protocol,
        encoding_format=options.encoding_format.value,
        time_zone=options.time_zone,
        schema_for_id=registry.schema_text,
        claim_check_loader=store.read if store is not None else None,
        claim_check_raw_value=options.claim_check_raw_value,
        compression=options.large_message_handle_compression.value,
    )
    pretty = sys.stdout.isatty()
    dropped = _ignored_ops(decision)
    for name, make in makers:
        print(f"\n== {name}")
        if name in dropped:
            print(f"   (not sent: {dropped[name]})")
            continue
        try:
            message = make()
        except MessageTooLargeError as exc:
            # What the writer would do with this message: fail the task.
            print(f"   the writer refuses it: {exc}")
            continue
        if message is None:
            print(f"   (protocol {protocol} sends none with these options)")
            continue
        if options.spec.batching:  # its events are framed to be merged (open-protocol)
            print(f"   key:   {_framed(message.key, key=True)}")
            print(f"   value: {_framed(message.value, key=False)}")
        else:
            print(f"   key:   {_shown(message.key, pretty)}")
            print(f"   value: {_shown(message.value, pretty)}")
        if message.diverted:
            print(
                f"   (above max-message-bytes: sent as {options.large_message_handle_option.value})"
            )
        if _binary(message.value) or _binary(message.key) or message.diverted:
            event = decoder.decode_message(message.key, message.value)
            print(f"   decoded: {event.describe()}")
            why = _why_not(name, event, config)
            if why:
                print(f"   ({why})")
    for location, data in store.files.items() if store is not None else ():
        print(f"\n== claim-check file {location}\n   {_shown(data, pretty)}")
    for schema, schema_id in registry.schemas.items():
        print(f"\n== Avro schema id {schema_id}\n{_indent_json(schema) if pretty else schema}")
    return 0


def _why_not(name: str, event: Any, config: SinkConfig) -> str | None:
    """Why an example decodes as another kind than it was written as, if it does."""
    if not isinstance(event, DecodedRow) or not name.startswith(("INSERT", "UPDATE", "DELETE")):
        return None
    if event.op.value == name:
        return None
    options = config.codec
    if options.spec.operation_needs_tidb_extension and not options.enable_tidb_extension:
        return (
            f"the {name} decodes as {event.op.value}: protocol {options.protocol.value} carries "
            "no operation without enable-tidb-extension=true (which adds the _tidb_op field)"
        )
    return f"the {name} decodes as {event.op.value}"


def _binary(data: bytes | None) -> bool:
    if not data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return not data.lstrip().startswith((b"{", b"["))


def _framed(data: bytes | None, *, key: bool) -> str:
    """An open-protocol key or value of one event: its big-endian words in hex, then the
    event's JSON (`codec.open_protocol.message`), or its bytes when compressed."""
    data = data or b""
    head = 16 if key else 8
    words = " | ".join(data[i : i + 8].hex(" ", 4) for i in range(0, min(head, len(data)), 8))
    body = data[head:]
    text = _shown(body, False) if _binary(body) else body.decode("utf-8")
    return f"{words} | {text}".rstrip()


def _shown(data: bytes | None, pretty: bool) -> str:
    if data is None:
        return "null"
    if data == b"":
        return "(empty)"
    if _binary(data):
        return f"{len(data)} bytes: {data[:48].hex(' ')}{' ...' if len(data) > 48 else ''}"
    text = data.decode("utf-8")
    return _indent_json(text).replace("\n", "\n   ") if pretty else text


def _indent_json(text: str) -> str:
    """JSON text laid out one member per line, two spaces per level, every value exactly
    as written (no reparsing: numbers keep their digits, keys their order)."""
    out: list[str] = []
    depth = 0
    in_string = escaped = False
    for i, char in enumerate(text):
        if in_string:
            out.append(char)
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
            out.append(char)
        elif char in "{[":
            closing = "}" if char == "{" else "]"
            if text[i + 1 : i + 2] == closing:  # {} and [] stay as they are
                out.append(char)
                continue
            depth += 1
            out.append(char + "\n" + "  " * depth)
        elif char in "}]":
            if text[i - 1 : i] in "{[" and i > 0:
                out.append(char)
                continue
            depth -= 1
            out.append("\n" + "  " * depth + char)
        elif char == ",":
            out.append(",\n" + "  " * depth)
        elif char == ":":
            out.append(": ")
        elif not char.isspace():
            out.append(char)
    return "".join(out)


# -- check ---------------------------------------------------------------------------------


def run_check(args: argparse.Namespace) -> int:
    config, assumed = _resolve(_sink_options(args), ("kafka.bootstrap.servers", "topic"))
    warnings = check_client_config(config.kafka)
    found = _planned(args, config)
    plan = None
    planned = config
    if found is not None:
        planned, plan = found
    tables = [_table_name(text) for text in args.table]
    if not tables and plan is not None:
        template = plan.tables.template
        tables = [(template.database, template.table)]
    if args.key and not tables:
        raise ValueError("--key needs the table: --table db.t, --table-ddl or --columns")
    given = _key_values(args.key)
    print("configuration (secrets masked):")
    for option, text in _configuration(config, assumed):
        print(f"  {option}: {text}")
    for name in config.ignored:
        print(f"ignored (no meaning for this sink): {name}")
    for line in warnings:
        print(f"librdkafka warning: {line}")
    for line in _version_lines(config.codec):
        print(line)
    count = args.partitions or config.kafka.partition_num or DEFAULT_PARTITION_NUM
    for database, table in tables:
        # The table as the writer's tasks build it for rows naming it, and what they do
        # with its rows: the writer's own code (writer.plan), so check cannot disagree.
        schema = None if plan is None else plan.tables.schema_for(database, table)
        decision = decide_table(planned, database, table, schema)
        if not decision.taken:
            print(
                f"\ntable {database}.{table} -> not written: option 'filter-rules' does not "
                "take it (the writer drops every row of it and counts them as filtered)"
            )
            continue
        rule = decision.rule
        print(
            f"\ntable {database}.{table} -> topic {decision.topic} "
            f"(partition rule {rule.partition.value}, {_rule_text(rule)})"
        )
        for line in _decision_notes(decision, schema):
            print(line)
        named = schema
        if named is None and given:
            named = _key_table(database, table, given)
        if named is None:
            continue
        route = decision.route or planned.routing.route(named)
        dispatcher = route.dispatcher
        if dispatcher.columns:
            print(f"  partition hashes the table name and {', '.join(dispatcher.columns)}")
        if not given:
            continue
        if schema is None:
            print("  (no --table-ddl or --columns: the --key columns are taken as the key)")
        change = _key_change(named, given, dispatcher.columns, planned)
        shown = ", ".join(f"{name}={value}" for name, value in given.items())
        if dispatcher.rule is PartitionRule.TS:
            print(f"  key {shown} -> partition: the row's commit ts modulo {count} (rule ts)")
            continue
        partition = dispatcher.partition(change, count)
        print(f"  key {shown} -> partition {partition} of {count}{_count_note(args, config)}")
        if not dispatcher.columns:
            print(f"  (partition rule {dispatcher.rule.value} does not hash the key)")
    return 0


def _version_lines(options: CodecConfig) -> list[str]:
    """The TiCDC release the messages follow (`ticdc-version`) and what follows it."""
    lines = [f"TiCDC v{options.ticdc_version.value} messages (ticdc-version); following it:"]
    return lines + [f"  {line}" for line in version_settings(options)]


def _decision_notes(decision: TableDecision, schema: TableSchema | None) -> list[str]:
    """The table routing, event filters and column selection the writer applies to a
    table's rows."""
    lines = []
    if decision.target != (decision.database, decision.table):
        target = ".".join(decision.target)
        lines.append(
            f"  messages name the table {target} (dispatchers target-schema / target-table); "
            "topic and partition come from its own name"
        )
    for number, rule in decision.event_filters:
        parts = []
        dml = [e for e in rule.ignore_event if e in DML_EVENTS]
        if dml:
            parts.append(f"ignores {', '.join(dml)} rows")
        parts += [f"drops rows where {key} {text}" for key, text in rule.expressions().items()]
        lines.append(f"  event-filters rule {number} applies: {'; '.join(parts) or 'no rows'}")
    selector = decision.selector
    if selector is not None:
        if schema is not None and decision.selection is not None:
            names = ", ".join(schema.columns[i].name for i in decision.selection)
            lines.append(
                f"  columns sent: {names} (column-selectors entry {selector.number}; "
                "BOOTSTRAP and DDL messages describe every column)"
            )
        else:
            lines.append(
                f"  column-selectors entry {selector.number} selects the columns "
                f"{list(selector.columns)} (give --table-ddl or --columns to see which)"
            )
    return lines


def _ignored_ops(decision: TableDecision) -> dict[str, str]:
    """The example kinds (INSERT, UPDATE, DELETE) an event filter's `ignore-event` drops
    for the table, with the reason."""
    dropped: dict[str, str] = {}
    for number, rule in decision.event_filters:
        for event in rule.ignore_event:
            for op in DML_EVENTS.get(event, ()):
                dropped.setdefault(
                    op.value, f"event-filters rule {number} ignores {event} rows of this table"
                )
    return dropped


def _table_name(text: str) -> tuple[str, str]:
    database, dot, table = text.partition(".")
    if not dot or not database or not table:
        raise ValueError(f"--table {text!r}: give database.table")
    return database, table


def _rule_text(rule: DispatchRule) -> str:
    patterns = list(rule.filter.patterns)
    if patterns == ["*.*"]:
        return "from options topic and partition"
    return f"from dispatchers rule {patterns}"


def _count_note(args: argparse.Namespace, config: SinkConfig) -> str:
    if args.partitions:
        return ""
    if config.kafka.partition_num:
        return " (partition-num)"
    return (
        f" (partition-num not set: {DEFAULT_PARTITION_NUM} for a topic the sink creates; an "
        "existing topic has its own count, --partitions N)"
    )


def _key_values(items: list[str]) -> dict[str, str]:
    given: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"--key {item!r}: give COLUMN=VALUE")
        given[name.strip()] = value
    return given


def _key_table(database: str, table: str, given: dict[str, str]) -> TableSchema:
    """Without the table's columns: a table of the --key columns, as text, as its primary
    key. The partition hash reads a value's text, so `id=42` hashes as the integer 42."""
    columns = [{"name": name, "type": "text", "key": True} for name in given]
    parsed = parse_table_ddl(_ddl_from_columns(json.dumps(columns)))
    return TableSchema(database, table, parsed.columns, parsed.indexes)


def _key_change(
    table: TableSchema, given: dict[str, str], hashed: tuple[str, ...], config: SinkConfig
) -> RowChange:
    """An INSERT of `table` holding the --key values, read as the writer reads a row
    (ticdc_sink.events), so a value that is not of its column's type is refused as the
    writer would; the columns neither given nor hashed stay empty."""
    by_name = {c.name.lower(): c for c in table.columns}
    for name in given:
        if name.lower() not in by_name:
            raise ValueError(
                f"--key {name}=...: table {table.database}.{table.table} has no column "
                f"{name!r}; its columns are {', '.join(table.column_names)}"
            )
    values = {name.lower(): value for name, value in given.items()}
    missing = [name for name in hashed if name.lower() not in values]
    if missing:
        raise ValueError(
            f"--key: the partition of {table.database}.{table.table} hashes "
            f"{', '.join(hashed)}; give --key {missing[0]}=VALUE"
        )
    # Only these columns are read: the others may be NOT NULL keys the user need not give.
    columns = [c for c in table.columns if c.name.lower() in values]
    batch = pa.record_batch(
        [_key_array(column, values[column.name.lower()]) for column in columns],
        names=[column.name for column in columns],
    )
    reduced = TableSchema(table.database, table.table, tuple(columns))
    try:
        [group] = read_change_batches(
            batch,
            layout=config.input.layout(),
            tables=lambda _database, _table: reduced,
            default_database=table.database,
            default_table=table.table,
            default_commit_ts=_EXAMPLE_TS,
            time_zone=config.codec.time_zone,
        )
    except InputError as exc:
        raise ValueError(f"--key: {exc.message}") from None
    [change] = group.to_changes()
    assert change.row is not None
    row: list[Any] = [None] * len(table.columns)
    for column, value in zip(columns, change.row, strict=True):
        row[table.column_position(column.name)] = value
    return RowChange(table, Op.INSERT, _EXAMPLE_TS, tuple(row))


def _key_array(column: Any, text: str) -> pa.Array:
    if value_kind(column) in (ValueKind.FLOAT32, ValueKind.FLOAT64):
        try:
            return pa.array([float(text)], pa.float64())
        except ValueError:
            raise ValueError(
                f"--key {column.name}={text}: column {column.name!r} is {column.type.base}; "
                "give a number"
            ) from None
    return pa.array([text], pa.string())


def _configuration(config: SinkConfig, assumed: set[str]) -> list[tuple[str, str]]:
    """Every option with its resolved value, as the write options reference names them; then the
    librdkafka settings the task producers use."""
    lines: list[tuple[str, str]] = []
    seen: set[str] = set()
    parts = (config.kafka, config.routing, config.codec, config.input, config.registry, config)
    for part in parts:
        for field in attrs.fields(type(part)):
            option = field.metadata.get("option")
            if option in (None, "kafka.*", "checkpointlocation") or option in seen:
                continue
            seen.add(option)
            value = getattr(part, field.name)
            lines.append((option, _option_text(option, value, field.default, assumed)))
    location = config.checkpoint_location
    lines.append(("checkpointLocation", location if location else "(not set)"))
    settings = producer_settings(config.kafka)
    for name in sorted(settings):
        if name == "bootstrap.servers":
            continue
        value = settings[name]
        text = (
            "***" if is_secret(name) else str(value).lower() if isinstance(value, bool) else value
        )
        lines.append((f"kafka.{name}", str(text)))
    return [(spell_option(option), text) for option, text in lines]


def _option_text(option: str, value: Any, default: Any, assumed: set[str]) -> str:
    if option in assumed:
        return "(not set: the sink needs it)"
    if option == "partition-num" and value is None:
        return (
            f"{DEFAULT_PARTITION_NUM} (default, for topics the sink creates; an existing "
            "topic keeps its own count)"
        )
    if value is None or value == () or (isinstance(value, FrozenMap) and not value):
        return "(not set)"
    if is_secret(option):
        return "***"
    if option == "claim-check-storage-uri":
        text = mask_uri(str(value))
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, FrozenMap):
        text = json.dumps(dict(value))
    elif (
        isinstance(value, tuple)
        and value
        and isinstance(value[0], EventFilterRule | ColumnSelector)
    ):
        # Filters in full, as TiCDC spells them: a cut filter would hide what it drops.
        return ", ".join(json.dumps(_filter_repr(v), ensure_ascii=False) for v in value)
    elif isinstance(value, tuple):
        text = ", ".join(_rule_repr(v) if isinstance(v, DispatchRule) else str(v) for v in value)
    else:
        text = str(getattr(value, "value", value))
    if len(text) > 100:
        text = text[:97] + "..."
    return f"{text} (default)" if value == default else text


def _filter_repr(item: EventFilterRule | ColumnSelector) -> dict[str, Any]:
    """An event-filter rule or column selector as the changefeed file spells it."""
    if isinstance(item, ColumnSelector):
        return {"matcher": list(item.matcher), "columns": list(item.columns)}
    shown: dict[str, Any] = {"matcher": list(item.matcher)}
    if item.ignore_event:
        shown["ignore-event"] = list(item.ignore_event)
    if item.ignore_sql:
        shown["ignore-sql"] = list(item.ignore_sql)
    return {**shown, **item.expressions()}


def _rule_repr(rule: DispatchRule) -> str:
    text = f"{{matcher {list(rule.filter.patterns)}"
    if rule.topic:
        text += f", topic {rule.topic}"
    text += f", partition {rule.partition.value}"
    if rule.columns:
        text += f", columns {list(rule.columns)}"
    if rule.index:
        text += f", index {rule.index}"
    return text + "}"


# -- reports -------------------------------------------------------------------------------

_REPORT_COLUMNS = (
    ("batch", 7),
    ("committed (UTC)", 19),
    ("rows", 9),
    ("messages", 9),
    ("bytes", 11),
    ("diverted", 8),
    ("watermark", 18),
    ("seconds", 8),
)


def run_reports(args: argparse.Namespace) -> int:
    texts = SinkState(args.checkpoint).reports()
    if not texts:
        raise ValueError(
            f"no batch reports under {args.checkpoint}/ticdc/reports; give the "
            "checkpointLocation of a ticdc write (reports are kept after each committed batch)"
        )
    if args.limit:
        texts = texts[-args.limit :]
    if args.format == "jsonl":
        for text in texts:
            print(text.strip())
        return 0
    print("  ".join(f"{name:>{width}}" for name, width in _REPORT_COLUMNS))
    for text in texts:
        print(_report_row(text))
    return 0


def _report_row(text: str) -> str:
    try:
        report = json.loads(text)
        if not isinstance(report, dict):
            raise ValueError
    except ValueError:
        return f"(not a report: {text.strip()[:60]})"
    commit_ts = report.get("commit_ts")
    committed = "-"
    if isinstance(commit_ts, int) and commit_ts > 0:
        moment = dt.datetime.fromtimestamp(tso.physical_ms(commit_ts) / 1000, dt.UTC)
        committed = moment.strftime("%Y-%m-%d %H:%M:%S")
    batch = report.get("batch_id")
    cells = (
        "job" if batch is None else batch,
        committed,
        report.get("rows"),
        report.get("messages"),
        report.get("bytes"),
        report.get("diverted"),
        report.get("watermark"),
        report.get("seconds"),
    )
    return "  ".join(
        f"{'-' if cell is None else cell!s:>{width}}"
        for cell, (_, width) in zip(cells, _REPORT_COLUMNS, strict=True)
    )


# -- demo ----------------------------------------------------------------------------------

# Options the demo sets itself: its brokers, topic and table.
_DEMO_SETS = ("kafka.bootstrap.servers", "topic", "database", "table", "primary-key")
# The protocols the demo writes: not those that need a schema registry (the demo's broker
# has none). `demo --help` lists these.
DEMO_PROTOCOLS = tuple(s.name for s in codec.protocol_specs() if not s.needs_registry)


def run_demo(args: argparse.Namespace) -> int:
    """Start a local broker and Spark, write the demo's changes, print the topic decoded,
    and the wall time of the whole command and of its parts (from the start of this
    function: a Spark start takes most of it)."""
    started = time.monotonic()
    options = _given_options(args)
    protocol = options.setdefault("protocol", "simple").strip().lower()
    if protocol not in DEMO_PROTOCOLS:
        raise ValueError(
            f"demo --protocol {protocol}: use {_or_list(DEMO_PROTOCOLS)} (avro needs a schema "
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
        topic = config.routing.topic_for("shop", "users")
        decoder = decoder_for(
            protocol,
            encoding_format=config.codec.encoding_format.value,
            time_zone=config.codec.time_zone,
            compression=config.codec.large_message_handle_compression.value,
        )
        print_topic(brokers, topic, decoder)
    done = time.monotonic()
    print(
        f"done in {done - started:.1f} s: broker and Spark started in "
        f"{spark_ready - started:.1f} s, changes written in {written - spark_ready:.1f} s, "
        f"Spark stopped and the topic read in {done - written:.1f} s"
    )
    return 0
