"""The changefeed's `[sink] column-selectors`: which columns of which tables TiCDC sends.

TiCDC v8.5 (tiflow `cdc/sink/dmlsink/mq/transformer/columnselector/column_selector.go`)
takes the first selector whose `matcher` (table-filter patterns, `table_filter.TableFilter`;
names in any case unless `case-sensitive`) takes a row's table, and sets every column its
`columns` patterns (TiDB's column filter, `pkg/util/table-filter/column_filter.go`:
wildcards, quoting and `/regex/` as in table patterns, `!` excludes, the last matching
pattern decides, names in any case; `table_filter.ColumnFilter`) do not take to nil,
before the partition is computed. Every protocol's encoder skips a nil column exactly as
if the table did not have it (simple `formatColumns` / `collectColumns`, avro
`columns2AvroSchema` and `avroEncode`, debezium `writeDebeziumFieldValues` and its
schema, canal-json `fillColumns` and `sqlType`, open-protocol
`rowChangeColumns2CodecColumns`), so a selection is a projection of the table
(`select_columns`); TiCDC's BOOTSTRAP and DDL messages still describe the whole table.
UPDATEs that change a key are split before the selection (tiflow splits them in the table
sink), so the writer decides the split on the whole row.

`check_selection` is TiCDC's `VerifyTables`, with this sink's stricter rules: see its
docstring. This module knows nothing of encoders or Kafka.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from ticdc_sink.errors import ConfigError
from ticdc_sink.schema import TableSchema
from ticdc_sink.table_filter import ColumnFilter, TableFilter

__all__ = [
    "ColumnSelector",
    "check_selection",
    "parse_column_selectors",
    "select_columns",
    "selector_for",
]

_OPTION = "column-selectors"
_KEYS = frozenset({"matcher", "columns"})


@attrs.frozen
class ColumnSelector:
    """One `[[sink.column-selectors]]` entry as TiCDC spells it (`config.ColumnSelector`),
    with its position in the list (1-based, for messages)."""

    matcher: tuple[str, ...]
    columns: tuple[str, ...]
    number: int = 1
    case_sensitive: bool = False
    _tables: TableFilter = attrs.field(init=False, eq=False, repr=False)
    _columns: ColumnFilter = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        # Parsed once, here: a bad pattern fails when the option is read.
        object.__setattr__(
            self,
            "_tables",
            TableFilter(
                self.matcher,
                case_sensitive=self.case_sensitive,
                option=_OPTION,
                label=f"column-selectors entry {self.number} matcher",
            ),
        )
        object.__setattr__(
            self,
            "_columns",
            ColumnFilter(
                self.columns,
                option=_OPTION,
                label=f"column-selectors entry {self.number} columns",
            ),
        )

    def describe(self) -> str:
        return (
            f"column-selectors entry {self.number} (matcher {list(self.matcher)!r}, "
            f"columns {list(self.columns)!r})"
        )

    def table_filter(self) -> TableFilter:
        return self._tables

    def keeps(self, column: str) -> bool:
        """Whether the column is selected (TiDB `ColumnFilterRules.MatchColumn`: names in
        any case, the last matching pattern decides, blanks and `#` comments skipped)."""
        return self._columns.matches(column)


def parse_column_selectors(value: Any) -> tuple[ColumnSelector, ...]:
    """`column-selectors`: TiCDC's list of `{matcher, columns}` tables (TOML), or the same
    as JSON text (an option or sink-uri parameter).

    Raises:
        ValueError: not such a list, an unknown key, an empty matcher or a bad pattern
            (config turns it into a ConfigError naming the option).
    """
    if value is None or value == "" or value == []:
        return ()
    if isinstance(value, tuple) and all(isinstance(s, ColumnSelector) for s in value):
        return value
    example = '[{"matcher": ["db.orders"], "columns": ["id", "amount*"]}]'
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise ValueError(f"use a JSON list of selectors, e.g. {example}") from None
    if not isinstance(value, list) or not all(isinstance(s, Mapping) for s in value):
        raise ValueError(f"use a list of selectors, e.g. {example}")
    selectors = []
    for number, raw in enumerate(value, 1):
        unknown = sorted(set(raw) - _KEYS)
        if unknown:
            raise ValueError(
                f"entry {number} has unknown key {unknown[0]!r}; an entry takes matcher and columns"
            )
        matcher = _strings(raw.get("matcher"))
        columns = _strings(raw.get("columns"))
        if not matcher:
            raise ValueError(f"entry {number} needs matcher = ['db.table', ...]")
        try:
            selectors.append(ColumnSelector(matcher, columns, number))
        except ConfigError as exc:
            raise ValueError(exc.message) from None
    return tuple(selectors)


def _strings(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"matcher and columns are lists of strings, not {value!r}")
    return tuple(value)


def selector_for(
    selectors: Sequence[ColumnSelector], database: str, table: str
) -> ColumnSelector | None:
    """The first selector whose matcher takes the table (tiflow `ColumnSelector.Apply`)."""
    for selector in selectors:
        if selector.table_filter().matches(database, table):
            return selector
    return None


def check_selection(
    selectors: Sequence[ColumnSelector],
    table: TableSchema,
    dispatcher_columns: Sequence[str] = (),
) -> tuple[int, ...] | None:
    """The positions of the columns sent for `table` (None when no selector takes it:
    every column is sent), checked as TiCDC's `VerifyTables` checks them, and more.

    TiCDC's rules: a column the `columns` partition dispatcher hashes must be selected;
    the primary key must be selected, or every column of one unique key (TiCDC
    `verifyIndices`: a table without a primary key passes). This sink's rules on top:
    the handle key columns must be selected, since every protocol keys its messages on
    them (TiCDC would send such rows without a key, and its open-protocol encoder fails
    on them); and at least one column.

    Raises:
        ConfigError: naming the table, the selector and the columns to add.
    """
    selector = selector_for(selectors, table.database, table.table)
    if selector is None:
        return None
    positions = tuple(i for i, c in enumerate(table.columns) if selector.keeps(c.name))
    kept = {table.columns[i].name for i in positions}
    name = f"{table.database}.{table.table}"

    def fail(problem: str, add: Sequence[str]) -> ConfigError:
        return ConfigError(
            f"{selector.describe()} {problem}; add {', '.join(add)} to its columns",
            option=_OPTION,
            value=json.dumps(list(selector.columns)),
        )

    if not positions:
        raise fail(f"selects no column of table {name}", [table.columns[0].name])
    for column in dispatcher_columns:
        match = next((c.name for c in table.columns if c.name.lower() == column.lower()), column)
        if match not in kept:
            raise fail(
                f"drops column {match!r} of table {name}, which the columns partition "
                "dispatcher hashes",
                [match],
            )
    pk = table.primary_key
    uniques = [i.columns for i in table.indexes if i.unique and not i.primary]
    if pk and not set(pk) <= kept and not any(set(u) <= kept for u in uniques):
        # tiflow: "no primary key columns or unique key columns obtained after filter out"
        raise fail(
            f"keeps neither the primary key nor a unique key of table {name}",
            [c for c in pk if c not in kept],
        )
    missing = [c for c in table.handle_key if c not in kept]
    if missing:
        raise fail(
            f"drops handle key column(s) {', '.join(missing)} of table {name}, on which "
            "every message is keyed",
            missing,
        )
    return positions


def select_columns(table: TableSchema, positions: Sequence[int]) -> TableSchema:
    """The table as the encoders see it under a selection: only the selected columns, in
    table order. Indexes are kept whole (a column keeps the key flags TiCDC gives it from
    the whole table); `check_selection` made sure the handle key is among the columns."""
    return attrs.evolve(table, columns=tuple(table.columns[i] for i in positions))
