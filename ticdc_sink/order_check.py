"""Per key, commit ts must not go backwards within a task: TiCDC consumers apply a key's
changes in commit-ts order, so rows the DataFrame delivers out of order would be applied
wrongly downstream. The check is bounded (memory must not grow with partition size), so
it sees the keys of about the last `window` rows of one task, not the whole topic.

Most record batches cannot fail: their commit ts never decreases and starts at or above
every commit ts seen before for their table (keys are per table, so other tables' commit
ts do not matter; rows of several tables arrive table by table). Those batches are only
remembered (their key columns, as given); the per-key dictionary is built from them when
a batch or row arrives that could fail, so input sorted by commit ts costs almost nothing
per row.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from itertools import repeat
from typing import Any

import attrs
import pyarrow as pa
import pyarrow.compute as pc

from ticdc_sink.errors import InputError
from ticdc_sink.schema import TableSchema

__all__ = ["DEFAULT_WINDOW", "CommitOrderCheck"]

DEFAULT_WINDOW = 65_536


@attrs.frozen
class _Remembered:
    """A batch that could not fail, kept as columns until the dictionary needs it."""

    table: TableSchema
    key_columns: list[Any]
    commit_ts: pa.Array | None
    default_commit_ts: int
    rows: int


def _as_list(values: Any) -> list[Any]:
    return values.to_pylist() if isinstance(values, pa.Array) else list(values)


class CommitOrderCheck:
    """Raises InputError when a key's commit ts goes backwards (the rows' keys are the
    table's handle-key columns, compared as Python values)."""

    def __init__(self, window: int = DEFAULT_WINDOW) -> None:
        self.window = window
        # (database, table, *key values) -> last commit ts, oldest first.
        self._seen: OrderedDict[tuple[Any, ...], int] = OrderedDict()
        self._remembered: deque[_Remembered] = deque()
        self._remembered_rows = 0
        # (database, table) -> the highest commit ts checked so far.
        self._top: dict[tuple[str, str], int] = {}

    def check_row(self, table: TableSchema, key_values: tuple[Any, ...], commit_ts: int) -> None:
        """One row, whose handle-key columns hold `key_values`."""
        self._build()
        self._check(table, (table.database, table.table, *key_values), commit_ts)

    def check_batch(
        self,
        table: TableSchema,
        key_columns: list[Any],
        commit_ts: pa.Array | None,
        default_commit_ts: int,
        rows: int,
    ) -> None:
        """Every row of a batch in order: `key_columns` are the handle-key columns (Arrow
        arrays or lists), `commit_ts` the rows' commit ts (None: all `default_commit_ts`)."""
        if not rows:
            return
        if commit_ts is None:
            low = high = default_commit_ts
            ordered = True
        else:
            low, high = pc.min_max(commit_ts).values()
            low, high = low.as_py(), high.as_py()
            ordered = (
                rows < 2
                or pc.all(pc.less_equal(commit_ts.slice(0, rows - 1), commit_ts.slice(1))).as_py()
            )
        prefix = (table.database, table.table)
        if ordered and low >= self._top.get(prefix, -1):
            self._remember(_Remembered(table, key_columns, commit_ts, default_commit_ts, rows))
            self._top[prefix] = high
            return
        self._build()
        check = self._check
        keys = zip(*map(_as_list, key_columns), strict=True)
        ts_list = self._commit_ts_list(commit_ts, default_commit_ts, rows)
        for values, ts in zip(keys, ts_list, strict=True):
            check(table, (*prefix, *values), ts)

    def _remember(self, batch: _Remembered) -> None:
        self._remembered.append(batch)
        self._remembered_rows += batch.rows
        while self._remembered_rows - self._remembered[0].rows >= self.window:
            self._remembered_rows -= self._remembered.popleft().rows
        if self._remembered_rows >= self.window:
            # Every key in the dictionary is older than the window the batches cover.
            self._seen.clear()

    def _build(self) -> None:
        """Move the remembered batches into the dictionary, oldest first."""
        seen = self._seen
        while self._remembered:
            batch = self._remembered.popleft()
            table = batch.table
            keys = zip(
                repeat(table.database),
                repeat(table.table),
                *map(_as_list, batch.key_columns),
            )
            ts = self._commit_ts_list(batch.commit_ts, batch.default_commit_ts, batch.rows)
            for key, value in zip(keys, ts, strict=True):
                seen.pop(key, None)
                seen[key] = value
            for _ in range(len(seen) - self.window):
                seen.popitem(last=False)
        self._remembered_rows = 0

    @staticmethod
    def _commit_ts_list(commit_ts: pa.Array | None, default: int, rows: int) -> list[int]:
        return [default] * rows if commit_ts is None else commit_ts.to_pylist()

    def _check(self, table: TableSchema, key: tuple[Any, ...], commit_ts: int) -> None:
        seen = self._seen
        last = seen.pop(key, None)
        if last is not None and commit_ts < last:
            names = ", ".join(
                f"{table.columns[i].name}={value!r}"
                for i, value in zip(table.handle_key_indexes, key[2:], strict=True)
            )
            raise InputError(
                f"commit ts goes backwards for key ({names}) of {table.database}."
                f"{table.table}: {commit_ts} after {last}; sort each key's changes "
                "by commit ts within a partition (repartition by key, sortWithinPartitions)",
                table=f"{table.database}.{table.table}",
            )
        seen[key] = commit_ts
        if len(seen) > self.window:
            seen.popitem(last=False)
        if commit_ts > self._top.get(key[:2], -1):
            self._top[key[:2]] = commit_ts
