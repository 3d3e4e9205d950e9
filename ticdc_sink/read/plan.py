"""A batch read's plan, made once on the driver: the topics read, the offset range of every
partition of each, the table schemas found in them, and the table whose columns the read
returns.

This module knows Kafka (through `TopicLog`) and schemas; nothing of Spark.
"""

from __future__ import annotations

import attrs

from ticdc_sink.errors import ConfigError
from ticdc_sink.read.consumer import TopicLog
from ticdc_sink.read.decoding import SchemaLookup
from ticdc_sink.read.discover import choose_table, discover_tables
from ticdc_sink.read.evolution import describe_change
from ticdc_sink.read.offsets import OffsetRange, ending_spec, plan_ranges, starting_spec
from ticdc_sink.read.options import ReadConfig, select_topics
from ticdc_sink.read.rows import same_columns
from ticdc_sink.schema import TableSchema

__all__ = ["ReadPlan", "plan_read", "plan_stream_start", "stream_config"]


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
