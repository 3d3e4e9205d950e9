"""The per-partition write loop shared by the batch and the streaming writer. Knows no
Spark: it takes Arrow record batches and plain values, so the whole loop runs in unit
tests with a fake producer.

    record batches -> ChangeBatch per table (events) -> key-changing UPDATE split
      -> encoder per table (codec) -> topic and partition (routing) -> producer
      -> flush, every delivery checked -> TaskReport (travels back in the commit message)

A task refuses rows whose commit ts is at or below the last watermark sent before its
batch (`WritePlan.watermark_floor`), unless `allow-commit-ts-below-watermark`.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol, TypeAlias

import attrs
import pyarrow as pa
import pyarrow.compute as pc

from ticdc_sink import claim_check, codec
from ticdc_sink.codec import protocols
from ticdc_sink.codec.batch import key_changed_rows
from ticdc_sink.column_selector import select_columns
from ticdc_sink.config import (
    CodecConfig,
    LargeMessageHandleOption,
    RegistryConfig,
    SubjectNameStrategy,
)
from ticdc_sink.errors import InputError, MessageTooLargeError
from ticdc_sink.events import ChangeBatch, RowChange, split_key_update
from ticdc_sink.input_batch import InputLayout, read_change_batches
from ticdc_sink.order_check import CommitOrderCheck
from ticdc_sink.producer import KafkaProducer, PartitionStats, Producer, ProducerFactory
from ticdc_sink.routing import claim_target
from ticdc_sink.row_filter import RowMask
from ticdc_sink.schema import TableSchema
from ticdc_sink.writer import rules
from ticdc_sink.writer.bootstrap import PROCESS_BOOTSTRAPS, BootstrapSchedule, bootstrap_key
from ticdc_sink.writer.plan import TableDecision, WritePlan, decide_table, split_key_indexes
from ticdc_sink.writer.report import TaskReport

__all__ = [
    "RegistryFactory",
    "TaskRegistry",
    "TaskWriter",
    "gather_record_batches",
    "write_batches",
]

# The logger operators know from before the split into a package (docs/guides/reports.md).
logger = logging.getLogger("ticdc_sink.writer")


class TaskRegistry(codec.SchemaRegistry, Protocol):
    """A task's schema registry: the avro encoders' ids, closed when the task ends."""

    def close(self) -> None: ...


#: How a task makes its registry: `registry.ConfluentSchemaRegistry`, or a test's fake.
RegistryFactory: TypeAlias = Callable[[RegistryConfig, SubjectNameStrategy], TaskRegistry]

# The fast path checks the bootstrap interval (send-bootstrap-interval-in-sec) at least
# every this many rows; the row path checks it before every row.
_BOOTSTRAP_CLOCK_ROWS = 1024

# gather_record_batches: consecutive record batches are concatenated until they hold this
# many rows per table they name (what a single table's record batch from Spark holds), and
# no more than this many rows or bytes of input, which bounds the task's memory.
GATHER_ROWS_PER_TABLE = 8192
GATHER_MAX_ROWS = 131_072
GATHER_MAX_BYTES = 32 << 20

# TiCDC keeps this much below a topic's max.message.bytes (tiflow pkg/sink/kafka/options.go,
# maxMessageBytesOverhead).
_TOPIC_LIMIT_MARGIN = 128


class _TableOutput:
    """One table's encoder, topic, dispatcher and bootstrap schedule inside one task."""

    def __init__(
        self,
        plan: WritePlan,
        schema: TableSchema,
        decision: TableDecision,
        registry: codec.SchemaRegistry | None,
        codec_config: CodecConfig | None = None,
        store: codec.ClaimCheckStore | None = None,
    ) -> None:
        assert decision.route is not None  # decided with the schema
        route = decision.route
        self.schema = schema
        self.topic = route.topic
        # The codec options for this topic: max-message-bytes may be the topic's, lower.
        self.codec = codec_config or plan.config.codec
        # column-selectors: the positions of the columns sent (None: all); the encoder
        # sees the table narrowed to them, BOOTSTRAPs describe the whole table (TiCDC's
        # come from the table info, which the selection leaves alone).
        self.selection = decision.selection
        shown = schema if self.selection is None else select_columns(schema, self.selection)
        # Table routing (target-schema / target-table): the messages name the table by
        # its target names; its topic and partitions stay those of its own (`route`).
        target = decision.target

        def build(table: TableSchema) -> codec.Encoder:
            if target != (table.database, table.table):
                table = attrs.evolve(table, database=target[0], table=target[1])
            return protocols.build_encoder(
                self.codec,
                table,
                build_ts_ms=plan.build_ts_ms,
                topic=route.topic,
                registry=registry,
                claim_check=store,
            )

        self.encoder = build(shown)
        self.encoder_table = shown
        self.bootstrap_encoder = self.encoder
        if self.selection is not None and self.codec.spec.bootstrap:
            self.bootstrap_encoder = build(schema)
        # Partitions are computed on the whole row: the dispatcher hashes the handle key
        # or the dispatcher's columns, which the selection keeps (check_selection).
        self.dispatcher = route.dispatcher
        # Decided on the whole row (unselected unique key columns included), as TiCDC
        # splits UPDATEs before its column selector runs.
        self.key_indexes = split_key_indexes(schema, self.codec)
        self.shown_key_indexes = (
            self.key_indexes if self.selection is None else split_key_indexes(shown, self.codec)
        )
        self.rows_since_bootstrap = 0
        self.last_bootstrap = float("-inf")
        # Set with the first bootstrap check: the table's entry in the process's schedule.
        self.bootstrap_key: bytes | None = None

    def shown(self, batch: ChangeBatch) -> ChangeBatch:
        """The batch as the encoder renders it: the selected columns only, with the
        UPDATEs to split decided on the whole rows."""
        if self.selection is None:
            return batch
        positions = self.selection
        return attrs.evolve(
            batch,
            table=self.encoder_table,
            columns=[batch.columns[i] for i in positions],
            before_columns=[batch.before_columns[i] for i in positions]
            if batch.before_columns
            else [],
            split_rows=tuple(key_changed_rows(batch, self.key_indexes)),
        )

    def shown_event(self, event: RowChange) -> RowChange:
        """One event (already split on the whole row) as the encoder renders it."""
        if self.selection is None:
            return event
        positions = self.selection

        def pick(image: tuple[Any, ...] | None) -> tuple[Any, ...] | None:
            return None if image is None else tuple(image[i] for i in positions)

        return attrs.evolve(
            event, table=self.encoder_table, row=pick(event.row), before=pick(event.before)
        )


class TaskWriter:
    def __init__(
        self,
        plan: WritePlan,
        producer: Producer,
        partition_id: int,
        registry: codec.SchemaRegistry | None = None,
        bootstraps: BootstrapSchedule | None = None,
    ) -> None:
        self.plan = plan
        self.producer: Producer = producer
        if plan.config.codec.spec.batching:
            self.producer = _BatchingProducer(producer, self._batcher_for)
        self.registry = registry
        # None: a schedule of this task's own, as if it were the worker's first task.
        self.bootstraps = BootstrapSchedule() if bootstraps is None else bootstraps
        self.partition_id = partition_id
        self.schemas: dict[tuple[str, str], TableSchema] = {}
        self.outputs: dict[tuple[str, str], _TableOutput] = {}
        # The (schema, table) each table's messages name, and which table took it.
        self.targets: dict[tuple[str, str], tuple[str, str]] = {}
        self.partition_counts: dict[str, int] = {}
        self.order = CommitOrderCheck()
        self.rows = 0
        self.diverted = 0
        self.below_watermark = 0
        self.filtered = 0
        self.max_commit_ts = 0
        codec_config = plan.config.codec
        self.store: codec.ClaimCheckStore | None = None
        if codec_config.large_message_handle_option is LargeMessageHandleOption.CLAIM_CHECK:
            self.store = claim_check.open_store(codec_config.claim_check_storage_uri or "")
        self.codecs: dict[str, CodecConfig] = {}
        # The topics whose max.message.bytes lowered max-message-bytes, with that setting.
        self.topic_limits: dict[str, int] = {}
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
            # The decision `ticdc-sink check` prints for the table (writer.plan).
            decision = decide_table(self.plan.config, schema.database, schema.table, schema)
            claim_target(self.targets, key, decision.target)
            out = self.outputs[key] = _TableOutput(
                self.plan,
                schema,
                decision,
                self.registry,
                self.codec_for(decision.topic),
                self.store,
            )
        return out

    def codec_for(self, topic: str) -> CodecConfig:
        """The codec options for `topic`: max-message-bytes lowered to the topic's
        `max.message.bytes` - 128 where the brokers report it, as TiCDC does at start."""
        config = self.codecs.get(topic)
        if config is None:
            config = self.plan.config.codec
            # debezium has no encoder-side size check (tiflow), so it need not ask.
            if config.spec.size_check:
                self.partition_count(topic)  # creates a missing topic first
                topic_limit = self.producer.topic_max_message_bytes(topic)
                if topic_limit is not None:
                    limit = max(1, topic_limit - _TOPIC_LIMIT_MARGIN)
                    if limit < config.max_message_bytes:
                        if topic_limit <= config.max_message_bytes:
                            _warn_lowered(topic, topic_limit, config.max_message_bytes, limit)
                        config = attrs.evolve(config, max_message_bytes=limit)
                        self.topic_limits[topic] = topic_limit
            self.codecs[topic] = config
        return config

    def topic_limit_error(self, error: MessageTooLargeError) -> MessageTooLargeError:
        """`error` again, naming the topic's max.message.bytes and the option's value
        when the topic's limit was the one exceeded (`codec_for` lowered it)."""
        for out in self.outputs.values():
            name = f"{out.schema.database}.{out.schema.table}"
            limit = self.topic_limits.get(out.topic)
            if name == error.table and limit is not None and error.topic is None:
                return MessageTooLargeError(
                    table=error.table,
                    key=error.key,
                    size=error.size,
                    limit=error.limit,
                    topic=out.topic,
                    topic_max_message_bytes=limit,
                    max_message_bytes=self.plan.config.codec.max_message_bytes,
                )
        return error

    def _batcher_for(self, topic: str) -> codec.MessageBatcher:
        batcher = protocols.build_batcher(self.codec_for(topic))
        assert batcher is not None  # the protocol batches: asked before
        return batcher

    def look_up_topics(self, batches: list[ChangeBatch]) -> None:
        """The partition counts of the topics of a record batch's tables, when several are
        new to this task, in one metadata lookup (and one CreateTopics for the missing
        ones, one DescribeConfigs for their limits) instead of a few round trips per
        topic. A single new topic is looked up when first needed, after its rows are
        encoded."""
        routing = self.plan.config.routing
        topics = {
            rules.topic_for(routing, b.table.database, b.table.table)
            for b in batches
            if (b.table.database, b.table.table) not in self.outputs
        }
        new = sorted(topics.difference(self.partition_counts))
        if len(new) > 1:
            self.partition_counts.update(self.producer.partition_counts(new))
            # codec_for asks each new topic's max.message.bytes: one request for all.
            if self.plan.config.codec.spec.size_check:
                self.producer.topics_max_message_bytes(new)

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
        """Simple protocol: a BOOTSTRAP before the table's first row in this worker process
        (or after a schema change), then every `send-bootstrap-interval-in-sec` or
        `send-bootstrap-in-msg-count` rows, counted across the process's tasks."""
        if not self.bootstrap_on:
            return
        cfg = self.plan.config.codec
        # tiflow simple bootstrap_worker.go: every partition, or only partition 0 when
        # send-bootstrap-to-all-partition is false.
        n = self.partition_count(out.topic) if cfg.send_bootstrap_to_all_partition else 1
        if out.bootstrap_key is None:
            out.bootstrap_key = bootstrap_key(
                self.plan.config.kafka.bootstrap_servers, out.topic, n, out.codec, out.schema
            )
            mark = self.bootstraps.last(out.bootstrap_key)
            if mark is not None:
                out.last_bootstrap, out.rows_since_bootstrap = mark
        now = self.bootstraps.clock()
        due = (
            out.last_bootstrap == float("-inf")
            or out.rows_since_bootstrap >= cfg.send_bootstrap_in_msg_count
            or now - out.last_bootstrap >= cfg.send_bootstrap_interval_in_sec
        )
        if not due:
            return
        message = out.bootstrap_encoder.encode_bootstrap()
        if message is not None:
            self.producer.send_many(out.topic, list(range(n)), message.key, [message.value] * n)
        out.rows_since_bootstrap = 0
        out.last_bootstrap = now

    def record_bootstraps(self) -> None:
        """Hand this task's bootstrap schedule to the process's, once the broker
        acknowledged every message: a failed task's retry sends its BOOTSTRAPs again."""
        self.bootstraps.record(
            {
                out.bootstrap_key: (out.last_bootstrap, out.rows_since_bootstrap)
                for out in self.outputs.values()
                if out.bootstrap_key is not None
            }
        )

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
            "(see docs/guides/delivery.md), or set allow-commit-ts-below-watermark=true "
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
            self.send(out.topic, partition, out.encoder.encode_row(out.shown_event(event)))
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
        shown = out.shown(batch)
        encoded = out.encoder.encode_batch(shown, out.shown_key_indexes)
        events: list[RowChange] | None = None
        from_rows = encoded.row_path_messages(out.codec.max_message_bytes)
        if from_rows:
            events = shown.to_events(out.shown_key_indexes)
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
            partitions = out.dispatcher.batch_partitions(batch, row_ends, n)
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
        """Messages [first, last) of a batch: one `send_many`, to a constant partition or
        each to its own (`partitions`)."""
        run_keys = None if keys is None else keys[first:last]
        where = constant if partitions is None else partitions[first:last]
        assert where is not None
        self.producer.send_many(topic, where, key, values[first:last], keys=run_keys)

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

    def filter_rows(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """The record batches without the rows the changefeed's `[filter]` drops (counted
        in `filtered`); the filter is compiled once per input schema."""
        spec = rules.row_filter(self.plan.config)
        if not spec.active:
            yield from batches
            return
        masks: dict[pa.Schema, RowMask] = {}
        layout = self.plan.config.input.layout()
        tables = self.plan.tables
        for batch in batches:
            mask = masks.get(batch.schema)
            if mask is None:
                mask = masks[batch.schema] = spec.compile(batch.schema, layout)
            keep = mask.keep(batch, tables.default_database, tables.default_table)
            if keep is not None:
                self.filtered += keep.false_count
                batch = batch.filter(keep)
            yield batch

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
            filtered=self.filtered,
            planned_at=self.plan.planned_at,
        )


@functools.cache
def _warn_lowered(topic: str, topic_limit: int, option: int, limit: int) -> None:
    # TiCDC warns when the topic's limit is not above the option; once per Python process
    # and topic here, not per task (with the default max-message-bytes, 10 MiB, every
    # topic of a broker with Kafka's default of about 1 MiB is lowered).
    logger.warning(
        "topic %s max.message.bytes is %d: max-message-bytes %d lowered to %d",
        topic,
        topic_limit,
        option,
        limit,
    )


class _BatchingProducer:
    """The task's producer for a protocol that puts several events in one Kafka message
    (`ProtocolSpec.batching`: open-protocol): each (topic, partition)'s messages go
    through a `codec.MessageBatcher` (built with the topic's codec options) and the merged
    messages are sent; `flush` sends what the batchers still hold first. Every sending
    method is defined here; the rest (partition counts, deliveries) is the producer's."""

    def __init__(
        self, producer: Producer, batcher_for: Callable[[str], codec.MessageBatcher]
    ) -> None:
        self._producer = producer
        self._batcher_for = batcher_for
        self._batchers: dict[tuple[str, int], codec.MessageBatcher] = {}

    @property
    def delivered(self) -> dict[tuple[str, int], PartitionStats]:
        return self._producer.delivered

    def partition_count(self, topic: str) -> int:
        return self._producer.partition_count(topic)

    def partition_counts(self, topics: Iterable[str]) -> dict[str, int]:
        return self._producer.partition_counts(topics)

    def topic_max_message_bytes(self, topic: str) -> int | None:
        return self._producer.topic_max_message_bytes(topic)

    def topics_max_message_bytes(self, topics: Iterable[str]) -> dict[str, int | None]:
        return self._producer.topics_max_message_bytes(topics)

    def close(self) -> None:
        self._producer.close()

    def send(self, topic: str, partition: int, key: bytes | None, value: bytes | None) -> None:
        batcher = self._batchers.get((topic, partition))
        if batcher is None:
            batcher = self._batchers[(topic, partition)] = self._batcher_for(topic)
        assert key is not None and value is not None  # every open-protocol event has both
        done = batcher.add(key, value)
        if done is not None:
            self._producer.send(topic, partition, *done)

    def send_many(
        self,
        topic: str,
        partition: int | list[int],
        key: bytes | None,
        values: list[bytes | None],
        *,
        keys: list[bytes | None] | None = None,
    ) -> None:
        for i, value in enumerate(values):
            where = partition if isinstance(partition, int) else partition[i]
            self.send(topic, where, key if keys is None else keys[i], value)

    def flush(self) -> None:
        for (topic, partition), batcher in self._batchers.items():
            done = batcher.flush()
            if done is not None:
                self._producer.send(topic, partition, *done)
        self._producer.flush()


def write_batches(
    batches: Iterable[pa.RecordBatch],
    plan: WritePlan,
    *,
    partition_id: int = 0,
    producer_factory: ProducerFactory = KafkaProducer,
    registry_factory: RegistryFactory | None = None,
    bootstraps: BootstrapSchedule = PROCESS_BOOTSTRAPS,
    rows_per_table: int = GATHER_ROWS_PER_TABLE,
) -> TaskReport:
    """Write one Spark partition: encode every row, send it, and return only after the
    broker acknowledged every message. `bootstraps`: when each table's last BOOTSTRAP
    went out, kept across the tasks of this Python process. `rows_per_table`: how far
    consecutive record batches are gathered (`gather_record_batches`).

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
            from ticdc_sink.registry import ConfluentSchemaRegistry

            registry_factory = ConfluentSchemaRegistry
        registry = registry_factory(config.registry, config.codec.subject_name_strategy)
    producer = producer_factory(config.kafka)
    try:
        task = TaskWriter(plan, producer, partition_id, registry, bootstraps)
        batches = task.filter_rows(batches)
        batches = gather_record_batches(
            batches, config.input.layout(), rows_per_table=rows_per_table
        )
        for groups in _change_batches(batches, plan, task.schema_for, task.check_watermark):
            task.look_up_topics(groups)
            for group in groups:
                task.write_batch(group)
        task.producer.flush()  # open-protocol: the batched messages still held, first
        task.record_bootstraps()
        report = task.report()
    except MessageTooLargeError as exc:
        raise task.topic_limit_error(exc) from exc.__cause__
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
) -> Iterator[list[ChangeBatch]]:
    """Each record batch as one ChangeBatch per table its rows name, tables in the order
    they first appear, each table's rows in input order (a stable split, so every table
    takes the column-wise path). `check` sees every table's rows of a record batch before
    they are yielded.

    Across tables the input order within a record batch is not kept: TiCDC keeps order per
    table (each table has its own sink), not across tables, and so does every promise of
    this sink (docs/guides/delivery.md, "Order per key")."""
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
        if groups:
            yield groups


def gather_record_batches(
    batches: Iterable[pa.RecordBatch],
    layout: InputLayout,
    *,
    rows_per_table: int = GATHER_ROWS_PER_TABLE,
    max_rows: int = GATHER_MAX_ROWS,
    max_bytes: int = GATHER_MAX_BYTES,
) -> Iterator[pa.RecordBatch]:
    """The record batches, consecutive ones of the same schema concatenated until they
    hold `rows_per_table` rows for each table the first of them names (estimated by its
    distinct `_database` and `_table` values), or `max_rows` rows, or `max_bytes` bytes.
    Rows keep their input order. A batch of one table with `rows_per_table` rows or more
    (Spark's hold 10,000) passes through as it is.

    Why: a record batch holding several tables is split by table, and each table's rows
    are converted and rendered on their own, at a fixed cost per table and batch (some 60
    Arrow calls, 3-5 ms); 20 tables in Spark's 10,000-row record batches would pay it
    every 500 rows, a single table every 10,000."""
    pending: list[pa.RecordBatch] = []
    rows = size = target = 0
    for batch in batches:
        if pending and batch.schema != pending[0].schema:
            yield _concat(pending)
            pending, rows, size = [], 0, 0
        if not pending:
            target = min(max_rows, rows_per_table * _table_count(batch, layout))
        pending.append(batch)
        rows += batch.num_rows
        size += batch.nbytes
        if rows >= target or size >= max_bytes:
            yield _concat(pending)
            pending, rows, size = [], 0, 0
    if pending:
        yield _concat(pending)


def _concat(batches: list[pa.RecordBatch]) -> pa.RecordBatch:
    """One record batch of `batches`' rows (pyarrow 18 has no `concat_batches`)."""
    if len(batches) == 1:
        return batches[0]
    table = pa.Table.from_batches(batches).combine_chunks()
    return table.to_batches()[0] if table.num_rows else batches[0]


def _table_count(batch: pa.RecordBatch, layout: InputLayout) -> int:
    """A lower bound of the tables a record batch names: the most distinct values of its
    `_database` and `_table` columns (1 without them)."""
    lowered = {name.lower(): i for i, name in enumerate(batch.schema.names)}
    count = 1
    for column in (layout.database_column, layout.table_column):
        i = lowered.get(column.lower())
        if i is not None:
            count = max(count, pc.count_distinct(batch.column(i), mode="all").as_py())
    return count
