"""`ticdc-sink check`: validate the options (librdkafka's settings too), show the
configuration, the topics and partitions of the given tables and `--key` rows, and what the
writer does with each table's rows."""

from __future__ import annotations

import argparse
import json
from typing import Any

import attrs
import pyarrow as pa

from ticdc_sink.cli.planning import (
    EXAMPLE_TS,
    ddl_from_columns,
    decision_notes,
    plan_given_table,
    resolve_options,
    sink_options,
    version_lines,
)
from ticdc_sink.codec.mysql import ValueKind, value_kind
from ticdc_sink.column_selector import ColumnSelector
from ticdc_sink.config import FrozenMap, SinkConfig, spell_option
from ticdc_sink.ddl import parse_table_ddl
from ticdc_sink.errors import InputError
from ticdc_sink.events import Op, RowChange
from ticdc_sink.input_batch import read_change_batches
from ticdc_sink.kafka_settings import check_client_config, producer_settings
from ticdc_sink.kafka_topics import DEFAULT_PARTITION_NUM
from ticdc_sink.redaction import is_secret, mask_uri
from ticdc_sink.routing import DispatchRule, PartitionRule
from ticdc_sink.row_filter import EventFilterRule
from ticdc_sink.schema import TableSchema
from ticdc_sink.writer import rules
from ticdc_sink.writer.plan import decide_table

__all__ = [
    "run_check",
]


def run_check(args: argparse.Namespace) -> int:
    config, assumed = resolve_options(sink_options(args), ("kafka.bootstrap.servers", "topic"))
    warnings = check_client_config(config.kafka)
    found = plan_given_table(args, config)
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
    for line in version_lines(config.codec):
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
        for line in decision_notes(decision, schema):
            print(line)
        named = schema
        if named is None and given:
            named = _key_table(database, table, given)
        if named is None:
            continue
        route = decision.route or rules.route(planned.routing, named)
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
    parsed = parse_table_ddl(ddl_from_columns(json.dumps(columns)))
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
            default_commit_ts=EXAMPLE_TS,
            time_zone=config.codec.time_zone,
        )
    except InputError as exc:
        raise ValueError(f"--key: {exc.message}") from None
    [change] = group.to_changes()
    assert change.row is not None
    row: list[Any] = [None] * len(table.columns)
    for column, value in zip(columns, change.row, strict=True):
        row[table.column_position(column.name)] = value
    return RowChange(table, Op.INSERT, EXAMPLE_TS, tuple(row))


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
