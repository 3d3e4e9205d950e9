"""Schema discovery on the driver: which table a read returns, found in the topic itself.

Simple carries table schemas in BOOTSTRAP messages (sent before a table's first row in
every partition, and periodically) and in DDL messages; every other protocol carries its
column types in each row message (the registry's value schema for avro, the envelope's
`schema` for debezium, `mysqlType`/`sqlType` for canal-json, type codes for
open-protocol), which the decoder's `row_table` turns into a table schema (as close as
the protocol tells: `ticdc_sink.decode.types`). For each partition the driver
reads from the read's start up to the first row change of a selected table; when that
row's schema did not come before it in the range, it reads every schema message of the
partition from its beginning up to the start, and when the schema is not there either,
on from the row until it is found: TiCDC's own consumer holds a Simple row until its
table's BOOTSTRAP or DDL arrives (tiflow `cmd/kafka-consumer/writer.go`,
`GetCachedEvents`), so a schema after its first row is still that row's. A row whose
schema is nowhere in the partition fails the read, naming its offset. A read that holds
no row of a selected table (startingOffsets=latest) takes the schemas of every partition's
messages before its start. The tasks then decode with every schema found here (and the
schema messages they meet themselves).

This module knows decoded events and offset ranges; nothing of Spark.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

import attrs

from ticdc_sink.codec import find_protocol
from ticdc_sink.decode import DecodedBootstrap, DecodedDDL, DecodedRow
from ticdc_sink.errors import DecodeError, SchemaError
from ticdc_sink.read.consumer import TopicLog
from ticdc_sink.read.decoding import (
    BadMessages,
    SchemaLookup,
    decode_events,
    describes_rows,
    new_decoder,
    row_table,
)
from ticdc_sink.read.offsets import OffsetRange
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.rows import same_columns
from ticdc_sink.schema import TableSchema

__all__ = ["Discovery", "choose_table", "discover_tables", "is_selected"]

Version = tuple[str, str, int]


@attrs.frozen
class Discovery:
    """What the driver found: every table schema (in the order found) and the schema
    versions (database, table, version) of the first rows it met."""

    tables: tuple[TableSchema, ...]
    row_versions: frozenset[Version] = frozenset()


def discover_tables(
    config: ReadConfig,
    log: TopicLog,
    ranges: Iterable[tuple[OffsetRange, tuple[int, int]]],
    *,
    schema_for_id: SchemaLookup | None = None,
) -> Discovery:
    """Every table schema found for each range's first row change of a table the options
    select (module docstring), and the versions of those rows.

    `ranges` pairs each range with its partition's (low, high) offsets; `schema_for_id`
    as `new_decoder`.

    Raises:
        DecodeError: a message that is not of the protocol (naming topic, partition,
            offset), unless `on-bad-message=skip`; a Simple row whose schema is nowhere
            in its partition (naming the row's offset and what to do).
    """
    decoder = new_decoder(config, schema_for_id=schema_for_id)
    found: dict[Version, TableSchema] = {}
    row_versions: set[Version] = set()
    # Skipped here without a report: the tasks meet the same messages and report them.
    skipped = BadMessages() if config.skip_bad_messages else None

    def first_row(offsets: OffsetRange) -> tuple[DecodedRow, int] | None:
        """The first row of a selected table in `offsets` and its offset, learning the
        schemas before it."""
        # Closed on return: the read's consumer assignment ends before the next scan's.
        with contextlib.closing(log.read(offsets)) as records:
            for record in records:
                for event in decode_events(decoder, record, offsets.topic, skipped):
                    _learn(found, event)
                    if isinstance(event, DecodedRow) and is_selected(
                        config, event.database, event.table
                    ):
                        if describes_rows(decoder):
                            implied = row_table(decoder, record, offsets.topic)
                            if implied is None:
                                continue  # an avro tombstone: its key columns only
                            _keep(found, implied)
                        row_versions.add((event.database, event.table, event.schema_version))
                        return event, record.offset
        return None

    def learn(offsets: OffsetRange, wanted: Version | None = None) -> bool:
        """Learn every schema message in `offsets`; with `wanted`, stop once that version
        is known. Whether it is."""
        if offsets.empty:
            return wanted in found
        with contextlib.closing(log.read(offsets)) as records:
            for record in records:
                for event in decode_events(decoder, record, offsets.topic, skipped):
                    _learn(found, event)
                if wanted in found:
                    return True
        return wanted in found

    history: list[OffsetRange] = []
    for offsets, (low, high) in ranges:
        first = None if offsets.empty else first_row(offsets)
        earlier = OffsetRange(offsets.topic, offsets.partition, low, offsets.start)
        if first is None:
            history.append(earlier)
            continue
        row, offset = first
        version = (row.database, row.table, row.schema_version)
        if describes_rows(decoder) or version in found:
            continue
        if not learn(earlier, version):
            after = OffsetRange(offsets.topic, offsets.partition, offset + 1, high)
            if not learn(after, version):
                raise _no_schema(config, row, offsets, offset)
    # A read with no rows of a selected table (startingOffsets=latest) still has a schema:
    # the one in the messages before it.
    if not any(is_selected(config, t.database, t.table) for t in found.values()):
        for earlier in history:
            learn(earlier)
    return Discovery(tuple(found.values()), frozenset(row_versions))


def _learn(found: dict[Version, TableSchema], event: object) -> None:
    if isinstance(event, DecodedBootstrap):
        _keep(found, event.table)
    elif isinstance(event, DecodedDDL):
        for table in (event.pre_table, event.table):
            if table is not None:
                _keep(found, table)


def _no_schema(
    config: ReadConfig, row: DecodedRow, offsets: OffsetRange, offset: int
) -> DecodeError:
    return DecodeError(
        f"topic {offsets.topic} partition {offsets.partition} offset {offset}: no schema of "
        f"{row.database}.{row.table} version {row.schema_version} is in the partition, "
        f"before or after this row ({config.protocol} sends one in BOOTSTRAP and DDL "
        "messages; the ones this row needs are gone, or were sent to another topic); set "
        "option startingOffsets past the rows of that version, or read another table "
        "(options database and table)"
    )


def _keep(found: dict[Version, TableSchema], table: TableSchema) -> None:
    key = (table.database, table.table, table.version)
    found.pop(key, None)
    found[key] = table


def is_selected(config: ReadConfig, database: str, table: str) -> bool:
    """Whether the options' `database` / `table` pick this table (unset: every table)."""
    return (config.database is None or config.database == database) and (
        config.table is None or config.table == table
    )


def choose_table(config: ReadConfig, found: Discovery) -> TableSchema:
    """The table whose columns the read returns: for each selected table, the schema of
    the first rows read (the newest such version), else its newest schema (a DDL after
    the rows read does not decide); the selected tables must all have the same columns.

    Raises:
        SchemaError: no schema of a selected table was found, or the selected tables
            differ in columns (the message lists them and the options that pick one).
    """
    latest: dict[tuple[str, str], TableSchema] = {}
    for table in found.tables:
        if is_selected(config, table.database, table.table):
            key = (table.database, table.table)
            if key not in latest or _rank(found, table) >= _rank(found, latest[key]):
                latest[key] = table
    if not latest:
        picked = ".".join(n for n in (config.database, config.table) if n) or "any table"
        spec = find_protocol(config.protocol)
        where = (
            f"{config.protocol} sends one in BOOTSTRAP and DDL messages before a table's rows"
            if spec is not None and spec.bootstrap
            else f"{config.protocol} carries one in each row message"
        )
        raise SchemaError(
            f"no schema of {picked} was found in {config.named_topics} ({where}); check "
            "options topic, protocol, database, table and startingOffsets"
        )
    chosen = list(latest.values())
    first = chosen[0]
    differing = [t for t in chosen[1:] if not same_columns(first, t)]
    if differing:
        listed = "; ".join(_describe(t) for t in [first, *differing])
        raise SchemaError(
            f"the tables in {config.named_topics} have different columns ({listed}); "
            "pick one with options database and table"
        )
    return first


def _rank(found: Discovery, table: TableSchema) -> tuple[bool, int]:
    return (table.database, table.table, table.version) in found.row_versions, table.version


def _describe(table: TableSchema) -> str:
    columns = ", ".join(f"{c.name} {c.type.to_sql()}" for c in table.columns)
    return f"{table.database}.{table.table} ({columns})"
