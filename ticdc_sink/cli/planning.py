"""What `dry-run` and `check` share: the options they resolve (with stand-ins for the
brokers, topic and registry, since neither sends anything), the table of `--table-ddl` or
`--columns` planned as the writer's driver plans it, and the notes on what the writer does
with a table's rows (routing, event filters, column selection, `ticdc-version`)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable
from typing import Any

import attrs
import pyarrow as pa
from pyspark.sql.types import StructField, StructType

from ticdc_sink import tso
from ticdc_sink.cli.arguments import given_options
from ticdc_sink.config import CodecConfig, SinkConfig, version_settings
from ticdc_sink.ddl import parse_table_ddl
from ticdc_sink.errors import ConfigError, SchemaError
from ticdc_sink.read.rows import arrow_schema as read_arrow_schema
from ticdc_sink.row_filter import DML_EVENTS
from ticdc_sink.schema import TableSchema
from ticdc_sink.writer import rules
from ticdc_sink.writer.plan import TableDecision, WritePlan, make_plan

__all__ = [
    "ASSUMED",
    "EXAMPLE_TS",
    "ddl_from_columns",
    "decision_notes",
    "ignored_ops",
    "plan_given_table",
    "resolve_options",
    "sink_options",
    "version_lines",
]


# The commit ts of every example (dry-run) and --key row (check): fixed, so the output is too.
EXAMPLE_TS = tso.compose(1_700_000_000_000)


def sink_options(args: argparse.Namespace) -> dict[str, str]:
    options = given_options(args)
    if args.config:
        options["config"] = args.config
    if args.sink_uri:
        options["sink-uri"] = args.sink_uri
    return options


# What dry-run and check assume for an option the sink needs but these commands do not:
# neither sends anything, so no broker, topic or registry is needed to show the output.
ASSUMED = {
    "kafka.bootstrap.servers": "dry-run:9092",
    "topic": "{schema}_{table}",
    "schema-registry": "http://dry-run:8081",
}


def resolve_options(
    options: dict[str, str], assumable: Iterable[str]
) -> tuple[SinkConfig, set[str]]:
    """The configuration of `options`, with a stand-in (`ASSUMED`) for each option of
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
            assumed[name] = ASSUMED[name]


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


def plan_given_table(
    args: argparse.Namespace, config: SinkConfig
) -> tuple[SinkConfig, WritePlan] | None:
    """The writer's plan of the table of `--table-ddl`, `--columns` or the option
    `table-ddl`: `writer.make_plan`, as the driver makes it before any task (table schema,
    encoder, dispatcher, column selection and event-filter conditions checked), over a
    DataFrame of the table's columns typed as a read of the table gives them (the writer's
    input contract) with the op and before columns. Returns the configuration planned
    with (the DDL and, when nothing names the database, `db`) and the plan; None without
    a table."""
    ddl = _text(args.table_ddl, "--table-ddl") or config.input.table_ddl
    if not ddl and args.columns:
        ddl = ddl_from_columns(_text(args.columns, "--columns") or "")
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
    filter_schema = arrow if rules.row_filter(planned).active else None
    plan = make_plan(
        planned, frame, EXAMPLE_TS, batch_id=None, arrow_schema=filter_schema, open_store=False
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


def ddl_from_columns(text: str) -> str:
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


def version_lines(options: CodecConfig) -> list[str]:
    """The TiCDC release the messages follow (`ticdc-version`) and what follows it."""
    lines = [f"TiCDC v{options.ticdc_version.value} messages (ticdc-version); following it:"]
    return lines + [f"  {line}" for line in version_settings(options)]


def decision_notes(decision: TableDecision, schema: TableSchema | None) -> list[str]:
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


def ignored_ops(decision: TableDecision) -> dict[str, str]:
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
