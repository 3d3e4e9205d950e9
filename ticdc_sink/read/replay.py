"""TiCDC's duplicate rule for one partition: a row whose commit ts is at or below the
partition's resolved ts (the largest WATERMARK ts met so far) is a replay and is dropped.

TiCDC re-sends rows after a restart of the changefeed (at-least-once), then moves on; its
own consumer drops such rows the same way (tiflow `cmd/kafka-consumer/main.go`,
`Consume`: "RowChangedEvent fallback row, ignore it" when `row.CommitTs <=
partitionResolvedTs`). A watermark below the resolved ts (a replayed one) does not move it
back.

Under watermark consistency the filter also drops a row identical to one met since the
resolved ts last rose (same commit ts, op, table and values): TiCDC re-sends, after a
restart, the rows it had sent past the last watermark, and TiCDC's rule lets those
through, since they are above it. In a table with a row key (a primary key or a unique
index over NOT NULL columns) two identical changes at one commit ts do not happen
otherwise (TiDB merges a transaction's changes of a row); a table without one can hold
identical rows, so the caller says whether the row's table has a key (`has_row_key`).
Micro-batches end where the resolved ts rises (`stream.plan_watermark_cut`), so no such
window spans two tasks. A Simple row is compared by its values as the message held them
(`DecodedRow.raw`, `PlainRow`), so a copy read column-wise and one read row by row are
the same change; an image's columns are compared by name, not in the order the message
lists them: Simple Avro's images are Go maps, which TiCDC writes in a random order each
time (tiflow `simple/avro.go` `collectColumns`, goavro's map encoder), so a re-sent row
rarely lists its columns as the first send did.

Batch reads apply the same rule from each range's start (`replay_filter`), so a batch
read and a stream of the same topic return the same rows; `replays=keep` keeps every row
message (the raw log).

This module knows decoded events and table schemas; the driver's scan and the tasks of
batch and streaming reads share it, so all count the same rows.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import orjson

from ticdc_sink.decode import DecodedRow, DecodedWatermark, PlainRow
from ticdc_sink.decode.peek import RowPeek
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.schema import TableSchema

__all__ = ["WINDOW", "ReplayFilter", "RowKeys", "has_row_key", "replay_filter"]

#: The rows since a watermark whose digests a filter remembers (16-byte digests as bytes
#: in a set: about 81 MiB when full, measured by benchmarks/bench_read_memory.py): a bound
#: on a task's memory where watermarks are rare or absent.
WINDOW = 1 << 20


def has_row_key(table: TableSchema | None) -> bool:
    """Whether rows of `table` are told apart by a key: a primary key, or a unique index
    whose columns are all NOT NULL (False when the schema is not known)."""
    if table is None:
        return False
    nullable = {c.name for c in table.columns if c.nullable}
    return any(
        index.primary or (index.unique and not nullable & set(index.columns))
        for index in table.indexes
    )


class RowKeys:
    """Whether a row's table has a row key (`has_row_key`), its schema looked up in the
    decoder once per (database, table, schema version)."""

    def __init__(self, decoder: object) -> None:
        self._lookup = getattr(decoder, "table", None)
        self._found: dict[tuple[str, str, int], bool] = {}

    @property
    def known(self) -> bool:
        """Whether the decoder knows tables' keys at all (Simple's, from its schema
        messages); else no row has one, and no row is compared with another."""
        return self._lookup is not None

    def __call__(self, row: DecodedRow | PlainRow | RowPeek) -> bool:
        version = (row.database, row.table, row.schema_version)
        found = self._found.get(version)
        if found is None:
            table = self._lookup(*version) if self._lookup else None
            found = self._found[version] = has_row_key(table)
        return found


class ReplayFilter:
    """One partition's resolved ts, and the rows let through and dropped as replays.

    `resolved_ts` starts at the resolved ts before the first message read (0: none known);
    `identical` also drops rows identical to one since the resolved ts last rose. It
    remembers a 16-byte digest of each such row, at most `window` of them (a topic with no
    watermark, such as avro's, is one window): rows past that are still checked against
    those, but not remembered, and counted in `unremembered`. Single-threaded: one per
    partition read.
    """

    def __init__(
        self, resolved_ts: int = 0, *, identical: bool = False, window: int = WINDOW
    ) -> None:
        self.resolved_ts = resolved_ts
        self.identical = identical
        self.window = window
        self.rows = 0
        self.dropped = 0
        self.unremembered = 0
        self._since: set[bytes] = set()

    def see_watermark(self, watermark: DecodedWatermark) -> bool:
        """Take a watermark; whether it raised the resolved ts."""
        if watermark.commit_ts <= self.resolved_ts:
            return False
        self.resolved_ts = watermark.commit_ts
        self._since.clear()
        return True

    def admit(self, row: DecodedRow | PlainRow | RowPeek, *, keyed: bool = False) -> bool:
        """Whether `row` is new; a replay is counted in `dropped`. `keyed`: the row's
        table has a row key, so an identical row since the resolved ts rose is a replay
        (with `identical`). A row of commit ts 0 is always new: the message does not
        carry its commit ts (an avro tombstone; avro and canal-json without
        enable-tidb-extension), so neither rule can tell a replay."""
        commit_ts = row.commit_ts
        if not (self.identical and keyed) or commit_ts == 0 or commit_ts <= self.resolved_ts:
            return self.admit_commit_ts(commit_ts)
        change = _identity(row)
        if change in self._since:
            self.dropped += 1
            return False
        if len(self._since) < self.window:
            self._since.add(change)
        else:
            self.unremembered += 1
        self.rows += 1
        return True

    def take_back_drop(self) -> None:
        """Uncount the row `admit` dropped last: it turned out not to decode, and a read
        that decodes before it asks `admit` counts such a message as bad, not replayed."""
        self.dropped -= 1

    def admit_commit_ts(self, commit_ts: int) -> bool:
        """`admit` of a row whose identity is not compared (its table has no row key, or
        the filter compares none): the commit ts rule alone."""
        if commit_ts and commit_ts <= self.resolved_ts:
            self.dropped += 1
            return False
        self.rows += 1
        return True

    def admit_commit_ts_each(self, commit_ts: Sequence[int]) -> list[bool]:
        """`admit_commit_ts` of each of a run's rows, in one pass (the resolved ts does not
        move within a run: its rows hold no watermark)."""
        resolved = self.resolved_ts
        admitted = [not ts or ts > resolved for ts in commit_ts]
        kept = sum(admitted)
        self.rows += kept
        self.dropped += len(admitted) - kept
        return admitted


def replay_filter(config: ReadConfig, resolved_ts: int = 0) -> ReplayFilter | None:
    """The filter of one task's range whose partition's resolved ts before it is
    `resolved_ts` (0: none known, as at a batch read's start); None with `replays=keep`.
    The identical-row rule holds under `consistency=watermark`."""
    if config.keep_replays:
        return None
    return ReplayFilter(resolved_ts, identical=config.watermark_consistency)


def _identity(row: DecodedRow | PlainRow | RowPeek) -> bytes:
    """A digest of what makes a replayed row the same change (not the build ts TiCDC sets
    anew). A peeked row's are those of its message decoded (`RowPeek.images`: the values
    as the message holds them, which a Simple row is compared by)."""
    if isinstance(row, PlainRow):
        change = tuple(row)  # op, commit ts, database, table, schema version, the images
    else:
        if isinstance(row, RowPeek):
            if row.images is None:
                raise ValueError("a peeked row without its images cannot be compared")
            data, old = row.images
        else:
            data, old = row.raw or (row.data, row.old)
        change = (
            row.op.value,
            row.commit_ts,
            row.database,
            row.table,
            row.schema_version,
            data,
            old,
        )
    try:  # orjson: 5x repr's speed, and a read checks every row
        text = orjson.dumps(change, default=repr, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # what orjson refuses (an int beyond 64 bits, a lone surrogate)
        text = repr(tuple(_by_name(part) for part in change)).encode("utf-8", "surrogateescape")
    return hashlib.blake2b(text, digest_size=16).digest()


def _by_name(part: object) -> object:
    """An image's columns in name order (module docstring); anything else as it is."""
    return sorted(part.items()) if isinstance(part, dict) else part
