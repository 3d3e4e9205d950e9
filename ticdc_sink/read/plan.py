"""A batch read's plan, made once on the driver: the topics read, the offset range of every
partition of each, the table schemas found in them, and the table whose columns the read
returns; the tasks that read the ranges: with `minPartitions`, the parts the ranges split
into (`plan_parts`), small ones packed together (`plan_tasks`).

This module knows Kafka (through `TopicLog`) and schemas; nothing of Spark.
"""

from __future__ import annotations

import contextlib

import attrs

from ticdc_sink.decode import DecodedBootstrap, DecodedDDL, DecodedWatermark, Decoder
from ticdc_sink.errors import ConfigError
from ticdc_sink.read.consumer import TopicLog
from ticdc_sink.read.decoding import (
    BadMessages,
    SchemaLookup,
    decode_events,
    describes_rows,
    new_decoder,
    row_message_test,
)
from ticdc_sink.read.discover import choose_table, discover_tables
from ticdc_sink.read.evolution import describe_change
from ticdc_sink.read.offsets import OffsetRange, ending_spec, plan_ranges, starting_spec
from ticdc_sink.read.options import ReadConfig, select_topics
from ticdc_sink.read.replay import RowKeys
from ticdc_sink.read.rows import same_columns
from ticdc_sink.read.split import Part, Task, pack_parts, part_counts, split_ranges
from ticdc_sink.schema import TableSchema

__all__ = [
    "ReadPlan",
    "find_boundaries",
    "plan_parts",
    "plan_read",
    "plan_stream_start",
    "plan_tasks",
    "stream_config",
]


@attrs.frozen
class ReadPlan:
    """What every task of a read needs; picklable. `topics` are the topics read (the
    pattern's matches, for `topicPattern`)."""

    config: ReadConfig
    ranges: tuple[OffsetRange, ...]
    table: TableSchema
    known: tuple[TableSchema, ...]
    topics: tuple[str, ...] = ()


def plan_read(
    config: ReadConfig, log: TopicLog | None = None, *, schema_for_id: SchemaLookup | None = None
) -> ReadPlan:
    """Find the topics, resolve the offsets against their partitions and find the read's
    table (`schema_for_id`: avro schemas, as `new_decoder`).

    Raises:
        ConfigError: a bad startingOffsets / endingOffsets (or timestamp option), a
            starting timestamp no message is at or after, or a topicPattern that matches no
            topic.
        SchemaError: no table, or tables with different columns (see `choose_table`).
        DeliveryError: the brokers or a topic cannot be reached.
        DecodeError: a message that is not of the protocol.
    """
    owned = log is None
    source = TopicLog(config) if log is None else log
    try:
        topics = select_topics(config, source.topics() if config.topic_pattern else ())
        bounds = source.all_bounds(topics)
        lookup = source.offsets_for_times
        starting = starting_spec(config, topics, bounds, lookup, default="earliest")
        ending = ending_spec(config, topics, bounds, lookup)
        options = (config.starting_option, config.ending_option)
        ranges = plan_ranges(bounds, starting, ending, options=options)
        starts = [(r, bounds[r.topic, r.partition]) for r in ranges]
        found = discover_tables(config, source, starts, schema_for_id=schema_for_id)
    finally:
        if owned:
            source.close()
    return ReadPlan(config, tuple(ranges), choose_table(config, found), found.tables, topics)


def stream_config(config: ReadConfig) -> ReadConfig:
    """`config` for a stream: startingOffsets latest when no starting option is given,
    as Spark's Kafka source starts a stream."""
    if config.starting_option != "startingOffsets" or config.starting_offsets is not None:
        return config
    return attrs.evolve(config, starting_offsets="latest")


def plan_stream_start(plan: ReadPlan, log: TopicLog | None = None) -> ReadPlan:
    """The plan of a stream from `plan`, the plan Spark's schema came from.

    A stream given no starting option starts at the topics' end (`stream_config`), but
    Spark asks for a read's schema before it says the read is a stream, so `plan` was made
    from the earliest offsets, as a batch read's. Such a stream is planned again from the
    end; where the table has other columns there, the stream would fail at its first row
    or, under ignore-new-columns, drop columns the table had before it started: that is
    refused at the start instead.

    Raises:
        ConfigError: the table's columns at the topics' end are not those at their start
            (set startingOffsets); or as `plan_read`.
    """
    config = stream_config(plan.config)
    if config is plan.config:
        return plan
    latest = plan_read(config, log)
    if same_columns(plan.table, latest.table):
        return latest
    table = f"{latest.table.database}.{latest.table.table}"
    raise ConfigError(
        f"a stream without option startingOffsets starts at the end of {config.topic}, "
        f"where table {table} is not as at its earliest offsets, from which Spark took the "
        f"read's schema before it knew the read was a stream "
        f"({describe_change(plan.table, latest.table)} since); set option startingOffsets "
        "to latest to stream from the end with the table's columns there, or to earliest "
        "to stream the whole topic",
        option="startingOffsets",
    )


def plan_parts(
    plan: ReadPlan, log: TopicLog | None = None, *, schema_for_id: SchemaLookup | None = None
) -> tuple[list[Part], tuple[TableSchema, ...]]:
    """The parts of the read's ranges with data (`split.split_ranges`, for
    `minPartitions`), each with its partition's resolved ts before it, and the table
    schemas the tasks need: the plan's, and those met in the split ranges (a part that
    starts after a Simple schema message has not read it itself).

    A range is scanned (`find_boundaries`) only when it is to be split, and not when no
    part needs a state from before it, for a protocol whose rows carry their column types
    (no schema message to collect): under `replays=keep`, or where the writer sends no
    watermarks (the resolved ts stays 0) and no row is compared with another (the
    identical-row rule needs a table's key, which such protocols' decoders do not know:
    `replay.RowKeys`). Parts then start at Spark's cuts.

    Raises:
        DecodeError, DeliveryError: as reading the topic.
    """
    config = plan.config
    ranges = [(r, 0) for r in plan.ranges if not r.empty]
    counts = part_counts([r.end - r.start for r, _ in ranges], config.min_partitions)
    if all(count == 1 for count in counts):
        return ranges, plan.known
    decoder = new_decoder(config, plan.known, schema_for_id=schema_for_id)
    if describes_rows(decoder) and _stateless(config, decoder):
        return split_ranges(ranges, config.min_partitions, None), plan.known
    owned = log is None
    source = TopicLog(config) if log is None else log
    boundaries = {}
    known = {(t.database, t.table, t.version): t for t in plan.known}
    try:
        for (offsets, _), count in zip(ranges, counts, strict=True):
            if count > 1:
                found, tables = find_boundaries(
                    config, plan.known, offsets, source, schema_for_id=schema_for_id
                )
                boundaries[offsets.topic, offsets.partition] = found
                known.update(((t.database, t.table, t.version), t) for t in tables)
    finally:
        if owned:
            source.close()
    if config.keep_replays:  # Simple: anywhere, with the schemas met
        return split_ranges(ranges, config.min_partitions, None), tuple(known.values())
    anywhere = not config.watermark_consistency  # the resolved ts alone counts
    parts = split_ranges(ranges, config.min_partitions, boundaries, anywhere=anywhere)
    return parts, tuple(known.values())


def _stateless(config: ReadConfig, decoder: Decoder) -> bool:
    """Whether a part of a range needs no state from before it (`plan_parts`): no replay
    filter, or one whose resolved ts stays 0 and that compares no rows."""
    if config.keep_replays:
        return True
    compares_rows = config.watermark_consistency and RowKeys(decoder).known
    return not config.carries_watermarks and not compares_rows


def plan_tasks(
    plan: ReadPlan, log: TopicLog | None = None, *, schema_for_id: SchemaLookup | None = None
) -> tuple[list[Task], tuple[TableSchema, ...]]:
    """The read's Spark tasks: its parts (`plan_parts`) packed by `offsets-per-task`
    (`split.pack_parts`), and the table schemas the tasks need; a read of no data is one
    task of its first (empty) range.

    Raises:
        DecodeError, DeliveryError: as reading the topic.
    """
    parts, known = plan_parts(plan, log, schema_for_id=schema_for_id)
    if not parts:
        return [((r, 0),) for r in plan.ranges[:1]], known
    config = plan.config
    return pack_parts(parts, config.offsets_per_task, config.min_partitions), known


def find_boundaries(
    config: ReadConfig,
    known: tuple[TableSchema, ...],
    offsets: OffsetRange,
    log: TopicLog,
    *,
    schema_for_id: SchemaLookup | None = None,
) -> tuple[list[tuple[int, int]], list[TableSchema]]:
    """Where in `offsets` a part may start (`split`): the offset just after each
    watermark that raised the resolved ts (from 0 at the range's start, as a batch read's
    replay rule), with that ts; and the table schemas the range's schema messages carry.
    Row messages are skipped undecoded where the decoder can tell them
    (`decoding.row_message_test`).

    Raises:
        DecodeError: a message that is not of the protocol (unless on-bad-message=skip).
        DeliveryError: the brokers failed the read.
    """
    config = config.for_topic(offsets.topic)
    decoder = new_decoder(config, known, schema_for_id=schema_for_id)
    is_row = row_message_test(decoder)
    # Skipped here without a report: the tasks meet the same messages and report them.
    skipped = BadMessages() if config.skip_bad_messages else None
    resolved_ts = 0
    found: list[tuple[int, int]] = []
    tables: list[TableSchema] = []
    with contextlib.closing(log.read(offsets)) as records:
        for record in records:
            if is_row(record):
                continue  # no watermark, no schema
            for event in decode_events(decoder, record, config.topic, skipped):
                if isinstance(event, DecodedWatermark) and event.commit_ts > resolved_ts:
                    resolved_ts = event.commit_ts
                    found.append((record.offset + 1, resolved_ts))
                elif isinstance(event, DecodedBootstrap | DecodedDDL) and event.table is not None:
                    tables.append(event.table)
    return found, tables
