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

Which schema is the newest goes by its place in the log, never by its version number:
TiDB's versions are TSOs, but the sink derives one from a hash of the schema
(`schema.stable_version`) when no TiDB version is given, and TiCDC's own consumer keys
table infos by their exact version and orders DDLs by commit ts (tiflow v8.5
`pkg/sink/codec/simple/decoder.go`, `memoryTableInfoProvider`; `cmd/kafka-consumer/
writer.go`, `appendDDL`). Within a partition the later message is the newer; across
partitions, the one after the larger commit ts (`_Place`).

This module knows decoded events and offset ranges; nothing of Spark.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

import attrs

from ticdc_sink.codec.protocols import find_protocol
from ticdc_sink.decode import DecodedBootstrap, DecodedDDL, DecodedRow, DecodedWatermark
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
from ticdc_sink.read.offsets import OffsetRange, TopicPartition
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.rows import same_columns
from ticdc_sink.schema import TableSchema

__all__ = ["Discovery", "choose_table", "discover_tables", "is_selected"]

Version = tuple[str, str, int]


@attrs.frozen
class Discovery:
    """What the driver found: every table schema, the oldest first by its newest place in
    the log, and the schema versions (database, table, version) of the first rows it met."""

    tables: tuple[TableSchema, ...]
    row_versions: frozenset[Version] = frozenset()


@attrs.frozen(order=True)
class _Place:
    """Where a schema stands in the log: the largest commit ts at or before it in its
    partition (rows, watermarks and DDLs carry one, a BOOTSTRAP none), then its offset,
    then `after` (0: the table a DDL changes, 1: anything else). Within a partition this
    is log order; across partitions, commit ts order, as TiCDC sends each DDL and
    watermark to every partition."""

    ts: int
    offset: int
    after: int


@attrs.define
class _Read:
    """One read of a partition, in offset order: the last offset read and the largest
    commit ts so far."""

    partition: TopicPartition
    last: int = -1
    ts: int = 0


@attrs.frozen
class _Met:
    """A version met in a partition: its offset, `after`, the largest commit ts at or
    before it in the read that met it, and its table (None: a Simple row, which names its
    version only)."""

    partition: TopicPartition
    offset: int
    after: int
    ts: int
    table: TableSchema | None


class _Timeline:
    """Every schema version the driver met and where (`_Place`). The reads of a partition
    need not come in offset order (from the start to the first row, then the history
    before the start), so a place counts the commit ts of the reads of its partition that
    ended before it."""

    def __init__(self) -> None:
        self._reads: dict[TopicPartition, list[_Read]] = {}
        self._met: dict[tuple[Version, TopicPartition], _Met] = {}
        self.known: dict[Version, TableSchema] = {}  # a table of each version met

    def read(self, offsets: OffsetRange) -> _Read:
        read = _Read((offsets.topic, offsets.partition))
        self._reads.setdefault(read.partition, []).append(read)
        return read

    def see(self, read: _Read, offset: int, event: object) -> None:
        """Note `event` at `offset`: its commit ts, and the schemas it carries."""
        read.last = offset
        if isinstance(event, DecodedRow | DecodedWatermark | DecodedDDL):
            read.ts = max(read.ts, event.commit_ts)
        if isinstance(event, DecodedBootstrap):
            self.meet(read, offset, _version(event.table), event.table)
        elif isinstance(event, DecodedDDL):
            if event.pre_table is not None:
                self.meet(read, offset, _version(event.pre_table), event.pre_table, after=0)
            if event.table is not None:
                self.meet(read, offset, _version(event.table), event.table)

    def meet(
        self,
        read: _Read,
        offset: int,
        version: Version,
        table: TableSchema | None = None,
        *,
        after: int = 1,
    ) -> None:
        """Note `version` (with its `table`, or a Simple row's: None) at `offset`, seen in
        `read`; a version keeps its last place in each partition."""
        if table is not None:
            self.known[version] = table
        key = (version, read.partition)
        met = self._met.get(key)
        if met is None or (offset, after) >= (met.offset, met.after):
            self._met[key] = _Met(read.partition, offset, after, read.ts, table)

    def tables(self) -> tuple[TableSchema, ...]:
        """Every table met, the oldest first by its newest place; of a version met with
        several tables (the protocols without versions: 0), the table at its newest."""
        newest: dict[Version, tuple[_Place, TableSchema]] = {}
        for (version, _), met in self._met.items():
            table = met.table if met.table is not None else self.known.get(version)
            place = self._place(met)
            if table is not None and (version not in newest or place >= newest[version][0]):
                newest[version] = (place, table)
        return tuple(table for _, table in sorted(newest.values(), key=lambda item: item[0]))

    def _place(self, met: _Met) -> _Place:
        # A partition's reads cover apart ranges: those that ended before `met` came before it.
        before = [r.ts for r in self._reads[met.partition] if r.last < met.offset]
        return _Place(max([met.ts, *before]), met.offset, met.after)


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
    timeline = _Timeline()
    found = timeline.known  # membership: whether a version's schema was met
    row_versions: set[Version] = set()
    # Skipped here without a report: the tasks meet the same messages and report them.
    skipped = BadMessages() if config.skip_bad_messages else None

    def first_row(offsets: OffsetRange) -> tuple[DecodedRow, int] | None:
        """The first row of a selected table in `offsets` and its offset, learning the
        schemas before it."""
        read = timeline.read(offsets)
        # Closed on return: the read's consumer assignment ends before the next scan's.
        with contextlib.closing(log.read(offsets)) as records:
            for record in records:
                for event in decode_events(decoder, record, offsets.topic, skipped):
                    timeline.see(read, record.offset, event)
                    if isinstance(event, DecodedRow) and is_selected(
                        config, event.database, event.table
                    ):
                        version = (event.database, event.table, event.schema_version)
                        implied = None
                        if describes_rows(decoder):
                            implied = row_table(decoder, record, offsets.topic)
                            if implied is None:
                                continue  # an avro tombstone: its key columns only
                            version = _version(implied)
                        timeline.meet(read, record.offset, version, implied)
                        row_versions.add(version)
                        return event, record.offset
        return None

    def learn(offsets: OffsetRange, wanted: Version | None = None) -> bool:
        """Learn every schema message in `offsets`; with `wanted`, stop once that version
        is known. Whether it is."""
        if offsets.empty:
            return wanted in found
        read = timeline.read(offsets)
        with contextlib.closing(log.read(offsets)) as records:
            for record in records:
                for event in decode_events(decoder, record, offsets.topic, skipped):
                    timeline.see(read, record.offset, event)
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
    return Discovery(timeline.tables(), frozenset(row_versions))


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


def _version(table: TableSchema) -> Version:
    return table.database, table.table, table.version


def is_selected(config: ReadConfig, database: str, table: str) -> bool:
    """Whether the options' `database` / `table` pick this table (unset: every table)."""
    return (config.database is None or config.database == database) and (
        config.table is None or config.table == table
    )


def choose_table(config: ReadConfig, found: Discovery) -> TableSchema:
    """The table whose columns the read returns: for each selected table, the schema of
    the first rows read (the newest of them by place in the log, `_Place`), else its
    newest schema (a DDL after the rows read does not decide); the selected tables must
    all have the same columns.

    Raises:
        SchemaError: no schema of a selected table was found, or the selected tables
            differ in columns (the message lists them and the options that pick one).
    """
    latest: dict[tuple[str, str], TableSchema] = {}
    for table in found.tables:  # the oldest first
        if is_selected(config, table.database, table.table):
            key = (table.database, table.table)
            if key not in latest or _of_rows(found, table) >= _of_rows(found, latest[key]):
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


def _of_rows(found: Discovery, table: TableSchema) -> bool:
    return _version(table) in found.row_versions


def _describe(table: TableSchema) -> str:
    columns = ", ".join(f"{c.name} {c.type.to_sql()}" for c in table.columns)
    return f"{table.database}.{table.table} ({columns})"
