"""The per-partition write loop shared by the batch and the streaming writer, and the
driver's commit step. Knows no Spark: it takes Arrow record batches and plain values, so
the whole loop runs in unit tests with a fake producer.

Watermarks never go backwards for what a consumer reads: a task refuses rows whose commit
ts is at or below the last watermark sent before its batch (`WritePlan.watermark_floor`,
unless `allow-commit-ts-below-watermark`), and the commit step records a watermark under
the checkpoint location before it sends it, so a batch that cannot record one fails before
anything of its commit is out.

    record batches -> RowChange (events) -> key-changing UPDATE split (TiCDC's Kafka rule)
      -> encoder per table (codec) -> topic and partition (routing) -> producer
      -> flush, every delivery checked -> TaskReport (travels back in the commit message)
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import attrs
import pyarrow as pa
import pyarrow.compute as pc

from ticdc_sink import claim_check, codec, schema_change, tso
from ticdc_sink.config import CodecConfig, LargeMessageHandleOption, SinkConfig
from ticdc_sink.errors import ConfigError, InputError
from ticdc_sink.events import (
    ChangeBatch,
    RowChange,
    read_change_batches,
    split_key_update,
)
from ticdc_sink.order_check import CommitOrderCheck
from ticdc_sink.producer import KafkaProducer
from ticdc_sink.routing import Route
from ticdc_sink.schema import (
    TableSchema,
    build_table_schema,
    parse_table_ddl,
    stable_table_id,
    table_schema_to_json,
)
from ticdc_sink.state import SinkState, WatermarkRecord

__all__ = [
    "TablePlan",
    "TaskReport",
    "WritePlan",
    "batch_report",
    "commit_batch",
    "key_column_indexes",
    "make_plan",
    "schema_change_query",
    "send_schema_change",
    "send_watermark",
    "split_key_update",
    "watermark_to_send",
    "write_batches",
]

logger = logging.getLogger(__name__)

ProducerFactory = Callable[..., Any]
RegistryFactory = Callable[..., Any]

# The fast path checks the bootstrap interval (send-bootstrap-interval-in-sec) at least
# every this many rows; the row path checks it before every row.
_BOOTSTRAP_CLOCK_ROWS = 1024

# TiCDC keeps this much below a topic's max.message.bytes (tiflow pkg/sink/kafka/options.go,
# maxMessageBytesOverhead).
_TOPIC_LIMIT_MARGIN = 128


@attrs.frozen
class TablePlan:
    """How to build a table's schema on an executor: the DataFrame's table columns as a
    template, renamed per `_database` / `_table` value. Built and validated on the
    driver, so a bad type fails before any task runs."""

    template: TableSchema
    fixed_table_id: int | None = None
    default_database: str | None = None
    default_table: str | None = None

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


@attrs.frozen
class TaskReport:
    """What one task tells the driver: where it wrote and how much; `diverted` counts the
    messages sent in place of one above max-message-bytes (handle-key-only, claim-check)."""

    partition_id: int
    topics: dict[str, int]
    partitions: frozenset[tuple[str, int]]
    max_commit_ts: int
    rows: int
    messages: int
    bytes: int
    topic_messages: dict[str, int] = attrs.field(factory=dict)
    topic_bytes: dict[str, int] = attrs.field(factory=dict)
    diverted: int = 0
    # Rows sent with a commit ts at or below the watermark floor, which only
    # allow-commit-ts-below-watermark lets through.
    below_watermark: int = 0
    # When the driver planned the batch this task wrote (`WritePlan.planned_at`): Spark
    # plans a micro-batch's writer again for its commit, so the commit step takes the
    # start of the batch from here.
    planned_at: float = 0.0


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
) -> WritePlan:
    """The plan of one batch, made on the driver from the DataFrame's Spark schema: the
    table template is built and an encoder compiled once here, so a bad type or an option
    the codec refuses fails before any task runs.

    Raises:
        SchemaError: the table schema cannot be derived.
        ConfigError: the codec refuses an option; partition-columns or index name what
            the table does not have.
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
    )
    # Build the template's encoder once here, so an option the codec refuses (a protocol
    # or large-message option not implemented) fails on the driver, before any task.
    codec.build_encoder(config.codec, template, build_ts_ms=build_ts_ms)
    if config.codec.large_message_handle_option is LargeMessageHandleOption.CLAIM_CHECK:
        # Fails here, before any task, when the storage cannot be opened.
        claim_check.open_store(config.codec.claim_check_storage_uri or "")
    if database and table:
        # The same for the dispatcher: partition-columns or an index the table lacks is an
        # option error, raised here rather than in every task (rows naming their own
        # tables share these columns, but the message would name the placeholder).
        config.routing.route(template)
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
        ),
        commit_ts=commit_ts,
        build_ts_ms=build_ts_ms,
        batch_id=batch_id,
        planned_at=time.time(),
        watermark_floor=watermark_floor,
    )


def key_column_indexes(schema: TableSchema) -> tuple[int, ...]:
    """Positions of the columns TiCDC flags as unique key or handle key."""
    handle = set(schema.handle_key)
    return tuple(
        i for i, c in enumerate(schema.columns) if c.name in handle or schema.is_unique_key(c.name)
    )


class _TableOutput:
    """One table's encoder, topic, dispatcher and bootstrap schedule inside one task."""

    def __init__(
        self,
        plan: WritePlan,
        schema: TableSchema,
        route: Route,
        registry: codec.SchemaRegistry | None,
        codec_config: CodecConfig | None = None,
        store: codec.ClaimCheckStore | None = None,
    ) -> None:
        self.schema = schema
        self.topic = route.topic
        # The codec options for this topic: max-message-bytes may be the topic's, lower.
        self.codec = codec_config or plan.config.codec
        self.encoder = codec.build_encoder(
            self.codec,
            schema,
            build_ts_ms=plan.build_ts_ms,
            topic=route.topic,
            registry=registry,
            claim_check=store,
        )
        self.dispatcher = route.dispatcher
        self.key_indexes = key_column_indexes(schema)
        self.rows_since_bootstrap = 0
        self.last_bootstrap = float("-inf")


class _TaskWriter:
    def __init__(
        self,
        plan: WritePlan,
        producer: Any,
        partition_id: int,
        registry: codec.SchemaRegistry | None = None,
    ) -> None:
        self.plan = plan
        self.producer = producer
        self.registry = registry
        self.partition_id = partition_id
        self.schemas: dict[tuple[str, str], TableSchema] = {}
        self.outputs: dict[tuple[str, str], _TableOutput] = {}
        self.partition_counts: dict[str, int] = {}
        self.order = CommitOrderCheck()
        self.rows = 0
        self.diverted = 0
        self.below_watermark = 0
        self.max_commit_ts = 0
        codec_config = plan.config.codec
        self.store: codec.ClaimCheckStore | None = None
        if codec_config.large_message_handle_option is LargeMessageHandleOption.CLAIM_CHECK:
            self.store = claim_check.open_store(codec_config.claim_check_storage_uri or "")
        self.codecs: dict[str, CodecConfig] = {}
        self.bootstrap_on = (
            codec_config.spec.bootstrap
            and codec_config.send_bootstrap_interval_in_sec > 0
            and codec_config.send_bootstrap_in_msg_count > 0
        )

    def schema_for(self, database: str, table: str) -> TableSchema:
        """One TableSchema object per table for the whole task (encoders key on it)."""
        schema = self.schemas.get((database, table))
        if schema is None:
            schema = self.schemas[(database, table)] = self.plan.tables.schema_for(database, table)
        return schema

    def output_for(self, schema: TableSchema) -> _TableOutput:
        key = (schema.database, schema.table)
        out = self.outputs.get(key)
        if out is None:
            route = self.plan.config.routing.route(schema)
            out = self.outputs[key] = _TableOutput(
                self.plan, schema, route, self.registry, self.codec_for(route.topic), self.store
            )
        return out

    def codec_for(self, topic: str) -> CodecConfig:
        """The codec options for `topic`: max-message-bytes lowered to the topic's
        `max.message.bytes` - 128 where the brokers report it, as TiCDC does at start."""
        config = self.codecs.get(topic)
        if config is None:
            config = self.plan.config.codec
            # Producers that cannot describe topics (test fakes) keep the option's value;
            # a protocol without an encoder-side size check (debezium, as tiflow) need not ask.
            describe = getattr(self.producer, "topic_max_message_bytes", None)
            if describe is not None and config.spec.size_check:
                self.partition_count(topic)  # creates a missing topic first
                topic_limit = describe(topic)
                if topic_limit is not None:
                    limit = max(1, topic_limit - _TOPIC_LIMIT_MARGIN)
                    if limit < config.max_message_bytes:
                        # TiCDC warns when the topic's limit is not above the option.
                        log = (
                            logger.warning
                            if topic_limit <= config.max_message_bytes
                            else logger.debug
                        )
                        log(
                            "topic %s max.message.bytes is %d: max-message-bytes %d lowered to %d",
                            topic,
                            topic_limit,
                            config.max_message_bytes,
                            limit,
                        )
                        config = attrs.evolve(config, max_message_bytes=limit)
            self.codecs[topic] = config
        return config

    def partition_count(self, topic: str) -> int:
        n = self.partition_counts.get(topic)
        if n is None:
            n = self.partition_counts[topic] = self.producer.partition_count(topic)
        return n

    def send(self, topic: str, partition: int, message: codec.Message) -> None:
        self.producer.send(topic, partition, message.key, message.value)
        if message.diverted:
            self.diverted += 1

    def maybe_bootstrap(self, out: _TableOutput) -> None:
        """Simple protocol: a BOOTSTRAP before the table's first row in this task, then
        every `send-bootstrap-interval-in-sec` or `send-bootstrap-in-msg-count` rows."""
        if not self.bootstrap_on:
            return
        cfg = self.plan.config.codec
        now = time.monotonic()
        due = (
            out.last_bootstrap == float("-inf")
            or out.rows_since_bootstrap >= cfg.send_bootstrap_in_msg_count
            or now - out.last_bootstrap >= cfg.send_bootstrap_interval_in_sec
        )
        if not due:
            return
        message = out.encoder.encode_bootstrap()
        if message is not None:
            n = self.partition_count(out.topic)
            for partition in range(n) if cfg.send_bootstrap_to_all_partition else (0,):
                self.send(out.topic, partition, message)
        out.rows_since_bootstrap = 0
        out.last_bootstrap = now

    def check_order(self, change: RowChange) -> None:
        schema = change.table
        image = change.row if change.row is not None else change.before
        indexes = schema.handle_key_indexes
        if not indexes or image is None:
            return
        self.order.check_row(schema, tuple(image[i] for i in indexes), change.commit_ts)

    def check_watermark(self, batch: ChangeBatch) -> None:
        """Rows at or below the watermark floor (the last watermark sent before this
        batch) are refused, or counted when allow-commit-ts-below-watermark is set. The
        batch's default commit ts is chosen above the floor, so only a `_commit_ts`
        column can fall below it.

        Raises:
            InputError: naming the table, the key and commit ts of the first such row,
                and the watermark.
        """
        floor = self.plan.watermark_floor
        if floor is None or batch.commit_ts is None:
            return
        # uint64: every TSO fits (events.py refuses commit ts below 1), whatever the type.
        commit_ts = pc.cast(batch.commit_ts, pa.uint64())
        low = pc.less_equal(commit_ts, pa.scalar(floor, pa.uint64()))
        count = pc.sum(low).as_py() or 0
        if not count:
            return
        if self.plan.config.input.allow_commit_ts_below_watermark:
            self.below_watermark += count
            return
        first = pc.index(low, True).as_py()
        table = batch.table
        name = f"{table.database}.{table.table}"
        key = ", ".join(
            f"{table.columns[i].name}={_value_at(batch.columns[i], first)!r}"
            for i in table.handle_key_indexes
        )
        column = self.plan.config.input.commit_ts_column
        ts = commit_ts[first].as_py()
        raise InputError(
            f"row of {name} with key ({key or 'no handle key'}) has commit ts {ts}, "
            f"at or below watermark {floor} that an earlier batch sent "
            f"({count} such rows in this record batch); a consumer would read it after a "
            f"watermark that promised no more. Keep {column!r} above the last watermark "
            "(see README, Delivery guarantees), or set allow-commit-ts-below-watermark=true "
            "to send such rows anyway",
            table=name,
            column=column,
            value=ts,
        )

    def write_change(self, change: RowChange, *, checked: bool = False) -> None:
        """One row's messages; `checked`: its commit-ts order was already checked."""
        if not checked:
            self.check_order(change)
        out = self.output_for(change.table)
        self.maybe_bootstrap(out)
        n = self.partition_count(out.topic)
        for event in split_key_update(change, out.key_indexes):
            partition = out.dispatcher.partition(event, n)
            self.send(out.topic, partition, out.encoder.encode_row(event))
        out.rows_since_bootstrap += 1
        self.rows += 1
        self.max_commit_ts = max(self.max_commit_ts, change.commit_ts)

    def write_batch(self, batch: ChangeBatch) -> None:
        """All rows of one table's batch: the same messages, partitions, bootstraps and
        order checks as `write_change` per row, with the messages rendered column-wise
        (`encode_batch`) and the rest (values it left to the row path, messages above
        max-message-bytes) taken from `encode_row`, before anything is sent."""
        out = self.output_for(batch.table)
        self.check_order_batch(batch)
        encoded = out.encoder.encode_batch(batch, out.key_indexes)
        events: list[RowChange] | None = None
        from_rows = encoded.row_path_messages(out.codec.max_message_bytes)
        if from_rows:
            events = batch.to_events(out.key_indexes)
            for i in from_rows:
                message = out.encoder.encode_row(events[i])
                encoded.replace(i, message)
                if message.diverted:
                    self.diverted += 1
        values = encoded.values
        keys = encoded.keys
        row_ends = encoded.row_ends
        # Asked only now: a refused row fails the batch before the topic is even created.
        n = self.partition_count(out.topic)
        constant = out.dispatcher.constant_partition(n)
        partitions: list[int] | None = None
        if constant is None:
            if events is None:
                events = batch.to_events(out.key_indexes)
            partition = out.dispatcher.partition
            partitions = [partition(event, n) for event in events]
        rows = batch.rows
        topic = out.topic
        start = 0
        while start < rows:
            stop = rows
            if self.bootstrap_on:
                self.maybe_bootstrap(out)
                due = self.plan.config.codec.send_bootstrap_in_msg_count - out.rows_since_bootstrap
                stop = min(rows, start + max(due, 1), start + _BOOTSTRAP_CLOCK_ROWS)
            first = start if row_ends is None else (row_ends[start - 1] if start else 0)
            last = stop if row_ends is None else row_ends[stop - 1]
            self._send_run(topic, constant, partitions, encoded.key, keys, values, first, last)
            out.rows_since_bootstrap += stop - start
            start = stop
        self.rows += rows
        if batch.commit_ts is None:
            top = batch.default_commit_ts
        else:
            top = pc.max(batch.commit_ts).as_py()
        self.max_commit_ts = max(self.max_commit_ts, top)

    def _send_run(
        self,
        topic: str,
        constant: int | None,
        partitions: list[int] | None,
        key: bytes | None,
        keys: list[bytes | None] | None,
        values: list[bytes | None],
        first: int,
        last: int,
    ) -> None:
        """Messages [first, last) of a batch: one `send_many` to a constant partition,
        else one `send` each to its own."""
        send_many = getattr(self.producer, "send_many", None)
        run_keys = None if keys is None else keys[first:last]
        if partitions is None and send_many is not None:
            assert constant is not None
            send_many(topic, constant, key, values[first:last], keys=run_keys)
            return
        send = self.producer.send
        for i in range(first, last):
            partition = constant if partitions is None else partitions[i]
            send(topic, partition, key if keys is None else keys[i], values[i])

    def check_order_batch(self, batch: ChangeBatch) -> None:
        """`check_order` for every row of a batch, in order."""
        indexes = batch.table.handle_key_indexes
        if indexes:
            self.order.check_batch(
                batch.table,
                [batch.columns[i] for i in indexes],
                batch.commit_ts,
                batch.default_commit_ts,
                batch.rows,
            )

    def report(self) -> TaskReport:
        """Counts come from the producer's delivery reports: acknowledged, not just sent."""
        delivered = self.producer.delivered
        topic_messages: dict[str, int] = {}
        topic_bytes: dict[str, int] = {}
        for (topic, _partition), stats in delivered.items():
            topic_messages[topic] = topic_messages.get(topic, 0) + stats.messages
            topic_bytes[topic] = topic_bytes.get(topic, 0) + stats.bytes
        return TaskReport(
            partition_id=self.partition_id,
            topics=dict(self.partition_counts),
            partitions=frozenset(delivered),
            max_commit_ts=self.max_commit_ts,
            rows=self.rows,
            messages=sum(topic_messages.values()),
            bytes=sum(topic_bytes.values()),
            topic_messages=topic_messages,
            topic_bytes=topic_bytes,
            diverted=self.diverted,
            below_watermark=self.below_watermark,
            planned_at=self.plan.planned_at,
        )


def write_batches(
    batches: Iterable[pa.RecordBatch],
    plan: WritePlan,
    *,
    partition_id: int = 0,
    producer_factory: ProducerFactory = KafkaProducer,
    registry_factory: RegistryFactory | None = None,
) -> TaskReport:
    """Write one Spark partition: encode every row, send it, and return only after the
    broker acknowledged every message.

    Raises:
        InputError: a row cannot become a change event.
        MessageTooLargeError: an encoded message is above max-message-bytes.
        RegistryError: the schema registry refused a schema or was unreachable.
        DeliveryError: the broker was unreachable or refused a message.
    """
    config = plan.config
    registry = None
    if config.codec.spec.needs_registry:
        if registry_factory is None:
            # Imported here: the registry client pulls in an HTTP stack only avro needs.
            from ticdc_sink.registry import ConfluentSchemaRegistry as registry_factory
        registry = registry_factory(config.registry, config.codec.subject_name_strategy)
    producer = producer_factory(config.kafka)
    try:
        task = _TaskWriter(plan, producer, partition_id, registry)
        for group in _change_batches(batches, plan, task.schema_for, task.check_watermark):
            if isinstance(group, ChangeBatch):
                task.write_batch(group)
            else:
                task.write_change(group)
        producer.flush()
        report = task.report()
    finally:
        producer.close()
        if registry is not None:
            registry.close()
    logger.info(
        "ticdc task %s wrote %d rows as %d messages (%d bytes, %d diverted as large) to %d "
        "partitions; max commit ts %d",
        partition_id,
        report.rows,
        report.messages,
        report.bytes,
        report.diverted,
        len(report.partitions),
        report.max_commit_ts,
    )
    return report


def _value_at(values: Any, i: int) -> Any:
    """Row i of a converted column (an Arrow array or a list)."""
    value = values[i]
    return value.as_py() if isinstance(value, pa.Scalar) else value


def _change_batches(
    batches: Iterable[pa.RecordBatch],
    plan: WritePlan,
    tables: Callable[[str, str], TableSchema],
    check: Callable[[ChangeBatch], None],
) -> Iterator[ChangeBatch | RowChange]:
    """Each record batch as one ChangeBatch when all its rows are of one table, else (rows
    of several tables, interleaved) as RowChanges in input order. `check` sees every
    table's rows of a record batch before any of them is yielded."""
    layout = plan.config.input.layout()
    for batch in batches:
        groups = read_change_batches(
            batch,
            layout=layout,
            tables=tables,
            default_database=plan.tables.default_database,
            default_table=plan.tables.default_table,
            default_commit_ts=plan.commit_ts,
            time_zone=plan.config.codec.time_zone,
        )
        for group in groups:
            check(group)
        if len(groups) == 1 and groups[0].positions is None:
            yield groups[0]
            continue
        ordered: list[Any] = [None] * batch.num_rows
        for group in groups:
            assert group.positions is not None
            for position, change in zip(group.positions, group.to_changes(), strict=True):
                ordered[position] = change
        yield from ordered


def schema_change_query(plan: WritePlan, previous: TableSchema | None) -> str | None:
    """The DDL statement a batch announces before its rows (see `send_schema_change`), or
    None: not a DDL protocol, rows name their tables, or no change the options ask for."""
    options = plan.config.codec
    table = plan.tables.named_table
    if not options.spec.ddl or table is None:
        return None
    wanted = options.ddl_on_first_batch if previous is None else options.ddl_on_schema_change
    return schema_change.ddl_for(previous, table) if wanted else None


def send_schema_change(
    plan: WritePlan,
    previous: TableSchema | None,
    *,
    producer_factory: ProducerFactory = KafkaProducer,
) -> str | None:
    """The driver's step before a batch's tasks: when the table's schema differs from
    the one the last committed batch wrote (`previous`), or it is the table's first batch
    and `ddl-on-first-batch` is on, send the DDL message of the protocol to the table's
    topic ahead of the rows, to the partitions TiCDC sends DDL to.

    Returns the DDL text sent, or None when nothing was sent.
    """
    options = plan.config.codec
    table = plan.tables.named_table
    query = schema_change_query(plan, previous)
    if query is None or table is None:
        return None
    message = codec.encode_ddl(
        options,
        table,
        previous,
        query,
        commit_ts=plan.commit_ts,
        build_ts_ms=plan.build_ts_ms,
    )
    if message is None:
        return None
    topic = plan.config.routing.topic_for(table.database, table.table)
    producer = producer_factory(plan.config.kafka)
    try:
        for partition in codec.ddl_partitions(options, producer.partition_count(topic)):
            producer.send(topic, partition, message.key, message.value)
        producer.flush()
    finally:
        producer.close()
    logger.info("ticdc: DDL for %s.%s sent to %s: %s", table.database, table.table, topic, query)
    return query


def batch_report(
    reports: Iterable[TaskReport | None],
    *,
    batch_id: int | None,
    commit_ts: int,
    watermark: int | None,
    seconds: float,
) -> dict[str, Any]:
    """What the driver records after a committed batch, for operators (one JSON object):
    counts from the tasks' delivery reports, per topic, large messages diverted, rows sent
    at or below an earlier watermark (allow-commit-ts-below-watermark), the watermark sent
    (None: none sent) and the time from planning to commit."""
    done = [r for r in reports if r is not None]
    topics: dict[str, dict[str, int]] = {}
    for report in done:
        for topic, count in report.topic_messages.items():
            entry = topics.setdefault(topic, {"messages": 0, "bytes": 0})
            entry["messages"] += count
            entry["bytes"] += report.topic_bytes.get(topic, 0)
    return {
        "batch_id": batch_id,
        "commit_ts": commit_ts,
        "tasks": len(done),
        "rows": sum(r.rows for r in done),
        "messages": sum(r.messages for r in done),
        "bytes": sum(r.bytes for r in done),
        "topics": dict(sorted(topics.items())),
        "diverted": sum(r.diverted for r in done),
        "below_watermark": sum(r.below_watermark for r in done),
        "max_commit_ts": max((r.max_commit_ts for r in done), default=0),
        "watermark": watermark,
        "seconds": round(seconds, 3),
    }


def commit_batch(
    plan: WritePlan,
    reports: Iterable[TaskReport | None],
    *,
    state: SinkState | None,
    producer_factory: ProducerFactory = KafkaProducer,
) -> dict[str, Any]:
    """The driver's commit step, once every task of the batch succeeded: record the
    table's schema and the watermark under the checkpoint location, then send the
    watermark, then log and keep the batch report. Returns the report.

    Everything that can fail the batch happens before the watermark is sent, so a failed
    batch leaves no watermark: a state that cannot be written fails here with nothing
    sent. What comes after the send (marking it acknowledged, keeping the report) cannot
    fail the batch any more; a failure there is logged as a warning.

    Raises:
        ConfigError: the state under checkpointLocation cannot be read or written.
        DeliveryError: the watermark was not acknowledged.
    """
    done = [r for r in reports if r is not None]
    config = plan.config
    record = state.watermark_record() if state is not None else None
    ts = watermark_to_send(config, done, last=record, batch_id=plan.batch_id)
    table = plan.tables.named_table
    if state is not None:
        if table is not None and config.codec.spec.ddl:
            state.record_table_schema(table.database, table.table, table_schema_to_json(table))
        if ts is not None:
            state.record_watermark(ts, plan.batch_id)
    if ts is not None:
        topics = sorted({t for r in done for t in r.topics})
        send_watermark(
            config, ts, topics, build_ts_ms=plan.build_ts_ms, producer_factory=producer_factory
        )
        logger.info(
            "ticdc commit: %d rows, %d messages, %d bytes%s; watermark %d sent to topics %s",
            sum(r.rows for r in done),
            sum(r.messages for r in done),
            sum(r.bytes for r in done),
            _diverted_text(config, done),
            ts,
            ", ".join(topics),
        )
        if state is not None:
            # The watermark is out: failing the batch now would leave a watermark for a
            # failed batch, so an unrecorded acknowledgement is a warning (a re-run of
            # this micro-batch then sends the same watermark again).
            try:
                state.confirm_watermark(ts)
            except ConfigError as exc:
                logger.warning("ticdc commit: watermark %d sent, but %s", ts, exc)
    started = min((r.planned_at for r in done if r.planned_at), default=plan.planned_at)
    report = batch_report(
        done,
        batch_id=plan.batch_id,
        commit_ts=plan.commit_ts,
        watermark=ts,
        seconds=time.time() - started,
    )
    line = json.dumps(report)
    logger.info("ticdc batch report %s", line)
    if state is not None:
        name = str(plan.batch_id) if plan.batch_id is not None else f"job-{plan.commit_ts}"
        try:
            state.record_report(name, line)
        except ConfigError as exc:
            # Same reason: the batch is committed; its report is in the line above.
            logger.warning("ticdc batch report not kept: %s", exc)
    return report


def watermark_to_send(
    config: SinkConfig,
    reports: Iterable[TaskReport | None],
    *,
    last: WatermarkRecord | None,
    batch_id: int | None,
) -> int | None:
    """The watermark a committed batch sends: its max commit ts, to every partition of
    every topic it touched, unless that would not move forward (`last`, the watermark
    recorded before). A re-run of the micro-batch that recorded `last` sends it again
    only if its first run did not see it acknowledged. Logs why none is sent.

    Returns the watermark ts to send, or None.
    """
    done = [r for r in reports if r is not None]
    topics = sorted({t for r in done for t in r.topics})
    ts = max((r.max_commit_ts for r in done), default=0)
    rows = sum(r.rows for r in done)
    diverted = _diverted_text(config, done)
    below = sum(r.below_watermark for r in done)
    if below:
        logger.warning(
            "ticdc commit: %d rows had a commit ts at or below an earlier watermark and were "
            "sent (allow-commit-ts-below-watermark); consumers read them after that watermark",
            below,
        )
    if not topics or ts == 0:
        logger.info("ticdc commit: %d rows%s, no topic touched, no watermark", rows, diverted)
        return None
    if codec.encode_watermark(config.codec, ts, build_ts_ms=0) is None:
        logger.info(
            "ticdc commit: %d rows%s; protocol %s sends no watermark here",
            rows,
            diverted,
            config.codec.protocol.value,
        )
        return None
    if last is None or ts > last.ts:
        return ts
    if batch_id is not None and last.batch_id == batch_id:
        if not last.sent:
            logger.info(
                "ticdc commit: %d rows%s; re-sending watermark %d, which this micro-batch's "
                "first run recorded but did not see acknowledged",
                rows,
                diverted,
                last.ts,
            )
            return last.ts
        logger.info(
            "ticdc commit: %d rows%s; watermark %d was sent by this micro-batch's first run, "
            "not sent again",
            rows,
            diverted,
            last.ts,
        )
        return None
    log = logger.info if last.legacy else logger.warning
    log(
        "ticdc commit: %d rows%s; no watermark: the batch's max commit ts %d is not above "
        "the last watermark sent, %d",
        rows,
        diverted,
        ts,
        last.ts,
    )
    return None


def send_watermark(
    config: SinkConfig,
    ts: int,
    topics: Iterable[str],
    *,
    build_ts_ms: int,
    producer_factory: ProducerFactory = KafkaProducer,
) -> None:
    """A WATERMARK of `ts` to every partition of every topic in `topics`, acknowledged.

    Raises:
        DeliveryError: the broker was unreachable or refused a message.
    """
    message = codec.encode_watermark(config.codec, ts, build_ts_ms=build_ts_ms)
    assert message is not None  # watermark_to_send chose a protocol that sends one
    topics = list(topics)
    producer = producer_factory(config.kafka)
    try:
        for topic in topics:
            for partition in range(producer.partition_count(topic)):
                producer.send(topic, partition, message.key, message.value)
        producer.flush()
    finally:
        producer.close()


def _diverted_text(config: SinkConfig, reports: list[TaskReport]) -> str:
    """ ", N messages diverted by <option> (above max-message-bytes)" for the commit log,
    empty when the option is none."""
    option = config.codec.large_message_handle_option
    if option is LargeMessageHandleOption.NONE:
        return ""
    count = sum(r.diverted for r in reports)
    return f", {count} messages diverted by {option.value} (above max-message-bytes)"
