"""The driver's planning of one batch: the table template and the options, checked
once on the driver and pickled to every task (identical for every attempt, which is what
makes replays byte-identical); and `decide_table`, what the writer does with one table's
rows (kept or filtered, event filters, topic, dispatcher, columns sent), which the tasks
apply and `ticdc-sink check` / `dry-run` print, so the two cannot disagree."""

from __future__ import annotations

import time
from typing import Any

import attrs
import pyarrow as pa

from ticdc_sink import claim_check, tso
from ticdc_sink.codec import protocols
from ticdc_sink.column_selector import ColumnSelector, selector_for
from ticdc_sink.config import CodecConfig, LargeMessageHandleOption, SinkConfig
from ticdc_sink.ddl import parse_table_ddl
from ticdc_sink.errors import ConfigError, SchemaError
from ticdc_sink.routing import DispatchRule, Route
from ticdc_sink.row_filter import EventFilterRule
from ticdc_sink.schema import TableSchema, stable_table_id
from ticdc_sink.writer import rules
from ticdc_sink.writer.table import build_table_schema, declared_table

__all__ = [
    "TableDecision",
    "TablePlan",
    "WritePlan",
    "decide_table",
    "key_column_indexes",
    "make_plan",
    "split_key_indexes",
]


@attrs.frozen
class TablePlan:
    """How to build a table's schema on an executor: the DataFrame's table columns as a
    template, renamed per `_database` / `_table` value. Built and validated on the
    driver, so a bad type fails before any task runs."""

    template: TableSchema
    fixed_table_id: int | None = None
    default_database: str | None = None
    default_table: str | None = None
    # The table a read returned (`table.declared_table`) when rows name their tables:
    # its rows keep its table id.
    declared: TableSchema | None = None

    @property
    def named_table(self) -> TableSchema | None:
        """The table when options name it; None when rows name their tables."""
        if self.default_database and self.default_table:
            return self.template
        return None

    def schema_for(self, database: str, table: str) -> TableSchema:
        if (database, table) == (self.template.database, self.template.table):
            return self.template
        table_id = self.fixed_table_id or stable_table_id(database, table)
        declared = self.declared
        if declared is not None and (database, table) == (declared.database, declared.table):
            table_id = self.fixed_table_id or declared.table_id or table_id
        return attrs.evolve(self.template, database=database, table=table, table_id=table_id)


@attrs.frozen
class WritePlan:
    """Everything a task needs, pickled once on the driver and identical for every
    attempt of every task of one batch (this is what makes replays byte-identical)."""

    config: SinkConfig
    tables: TablePlan
    commit_ts: int
    build_ts_ms: int
    batch_id: int | None = None
    planned_at: float = 0.0  # wall clock (time.time()) when planned, for batch reports
    # Rows must have a commit ts above this watermark, the last one sent before this
    # batch (`SinkState.watermark_floor`); None: none to respect.
    watermark_floor: int | None = None


# Placeholder names for the table template when `_database` / `_table` columns name the
# tables row by row; each row's own names replace them on the executors.
_ROUTED = "_routed_by_column"


def make_plan(
    config: SinkConfig,
    schema: Any,
    commit_ts: int,
    *,
    batch_id: int | None,
    watermark_floor: int | None = None,
    arrow_schema: pa.Schema | None = None,
    open_store: bool = True,
) -> WritePlan:
    """The plan of one batch, made on the driver from the DataFrame's Spark schema: the
    table template is built and an encoder compiled once here, so a bad type or an option
    the codec refuses fails before any task runs.

    Raises:
        SchemaError: the table schema cannot be derived; it has no handle key (no primary
            key, no unique key of NOT NULL columns) and `force-replicate` is not set.
        ConfigError: the codec refuses an option; partition-columns or index name what
            the table does not have; a column selector drops a key or hashed column; an
            event filter's condition cannot be translated for the input's columns
            (`arrow_schema`, the record batches' schema: checked only when given); the
            claim-check store cannot be opened (not tried without `open_store`: `ticdc-sink
            check` and `dry-run` write nothing, and opening a file:// store creates it).
    """
    inp = config.input
    build_ts_ms = tso.physical_ms(commit_ts)
    # Without a database or table option the names come from table-ddl, or row by row
    # from the `_database` / `_table` columns; the template then carries a placeholder.
    ddl = parse_table_ddl(inp.table_ddl) if inp.table_ddl else None
    fields = schema.fieldNames()
    # The metadata columns as the frame spells them (names match in any case); a frame
    # with two spellings of one fails here, before any task.
    layout = inp.layout().bind(fields)
    database = inp.database or (ddl and ddl.database)
    table = inp.table or (ddl and ddl.table)
    # A read's DataFrame names its table in the `_table` column's metadata.
    declared = declared_table(schema, layout.table_column)
    template = build_table_schema(
        database or (_ROUTED if layout.database_column in fields else None),
        table or (_ROUTED if layout.table_column in fields else None),
        schema,
        reserved=layout.reserved,
        column_types=dict(inp.column_types),
        table_ddl=inp.table_ddl,
        primary_key=inp.primary_key,
        table_id=inp.table_id,
        version=inp.schema_version,
        declared=declared,
    )
    if not template.handle_key and not config.force_replicate:
        raise _no_handle_key(template, layout.table_column)
    # Build the template's encoder once here, so an option the codec refuses (a protocol
    # or large-message option not implemented) fails on the driver, before any task.
    protocols.build_encoder(config.codec, template, build_ts_ms=build_ts_ms)
    if (
        open_store
        and config.codec.large_message_handle_option is LargeMessageHandleOption.CLAIM_CHECK
    ):
        # Fails here, before any task, when the storage cannot be opened.
        claim_check.open_store(config.codec.claim_check_storage_uri or "")
    if database and table:
        # The same for the dispatcher: partition-columns or an index the table lacks is an
        # option error, raised here rather than in every task (rows naming their own
        # tables share these columns, but the message would name the placeholder).
        rules.route(config.routing, template)
        # column-selectors: a selection that drops a key or a hashed column fails here.
        rules.column_selection(config, template)
    row_filter = rules.row_filter(config)
    if arrow_schema is not None and row_filter.active:
        # The tasks translate the same conditions for the same schema; a bad one fails here.
        row_filter.compile(arrow_schema, layout)
    if config.codec.ddl_on_first_batch and not (database and table):
        raise ConfigError(
            "option 'ddl-on-first-batch' needs the table named by the options 'database' "
            "and 'table' (or 'table-ddl'); rows naming their own tables have no first batch "
            "the driver can see",
            option="ddl-on-first-batch",
        )
    return WritePlan(
        config=config,
        tables=TablePlan(
            template,
            fixed_table_id=inp.table_id,
            default_database=database or None,
            default_table=table or None,
            declared=declared,
        ),
        commit_ts=commit_ts,
        build_ts_ms=build_ts_ms,
        batch_id=batch_id,
        planned_at=time.time(),
        watermark_floor=watermark_floor,
    )


@attrs.frozen
class TableDecision:
    """What the writer does with the rows of one table.

    `taken`: whether `filter-rules` take the table (else every row is dropped and counted
    as `filtered`); `event_filters`: the `event-filters` rules (1-based number, rule) whose
    matcher takes it, which drop its rows by type or condition; `topic` and `rule`: where
    its rows go and the dispatchers rule that says so (the options' catch-all when none
    matches); `selector`: the column selector that takes it; `target`: the (schema, table)
    its messages name (pingcap/ticdc's table routing). With the table's schema:
    `route` (topic and partition dispatcher) and `selection` (the positions of the columns
    sent; None: every column)."""

    database: str
    table: str
    taken: bool
    event_filters: tuple[tuple[int, EventFilterRule], ...]
    topic: str
    rule: DispatchRule
    selector: ColumnSelector | None
    target: tuple[str, str]
    route: Route | None = None
    selection: tuple[int, ...] | None = None


def decide_table(
    config: SinkConfig, database: str, table: str, schema: TableSchema | None = None
) -> TableDecision:
    """The writer's decision for the table `database.table` (`schema`: its columns, for
    the dispatcher and the column selection).

    Raises:
        ConfigError: the dispatcher or the column selection refuses the table (an index or
            partition column it lacks, a selection dropping a key or hashed column).
    """
    row_filter = rules.row_filter(config)
    matching = row_filter.event_rules_for(database, table)
    route = selection = None
    if schema is not None:
        route = rules.route(config.routing, schema)
        selection = rules.column_selection(config, schema)
    return TableDecision(
        database=database,
        table=table,
        taken=row_filter.takes(database, table),
        event_filters=tuple((i + 1, config.event_filters[i]) for i in matching),
        topic=rules.topic_for(config.routing, database, table),
        rule=rules.dispatch_rule(config.routing, database, table),
        selector=selector_for(config.column_selectors, database, table),
        target=rules.target_of(config.routing, database, table),
        route=route,
        selection=selection,
    )


def _no_handle_key(template: TableSchema, table_column: str) -> SchemaError:
    """TiCDC replicates a table only with a handle key (tiflow `cdc/model/schema_storage.go`,
    `TableInfo.IsEligible`: a primary key, or a unique index of NOT NULL columns), unless
    the changefeed sets `force-replicate`. With it, every encoder takes the handle key
    columns TiCDC flags, none: `TableSchema.handle_key` is empty and each protocol writes
    what tiflow writes for an empty list (debezium `dbzCodec.EncodeKey`: `payload {}` and
    no key fields; avro `BatchEncoder.encodeKey`: a nil key; canal-json
    `PrimaryKeyColumnNames`: `[]`; `IndexValueDispatcher`: the table name alone)."""
    if template.table == _ROUTED or template.database == _ROUTED:
        name = f"the tables the {table_column} column names"
    else:
        name = f"table {template.database}.{template.table}"
    return SchemaError(
        f"{name} has no primary key and no unique key of NOT NULL columns, and TiCDC "
        "replicates such a table only with force-replicate; set option primary-key (e.g. "
        "primary-key=id) or declare the key in table-ddl, or set force-replicate=true to "
        "write it as TiCDC then does, its messages keyed on no column"
    )


def key_column_indexes(schema: TableSchema) -> tuple[int, ...]:
    """Positions of the columns TiCDC flags as unique key or handle key."""
    handle = set(schema.handle_key)
    return tuple(
        i for i, c in enumerate(schema.columns) if c.name in handle or schema.is_unique_key(c.name)
    )


def split_key_indexes(schema: TableSchema, codec_config: CodecConfig) -> tuple[int, ...]:
    """The columns whose change splits an UPDATE into DELETE + INSERT: the unique and
    handle key columns, or none with output-raw-change-event, which sends every UPDATE
    as it is (tiflow `cdc/model/sink.go`, `SingleTableTxn.TrySplitAndSortUpdateEvent`)."""
    if codec_config.output_raw_change_event:
        return ()
    return key_column_indexes(schema)
