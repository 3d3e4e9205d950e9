"""The changefeed's `[filter]` section: which rows TiCDC would not send, decided for a
whole Arrow record batch at once.

TiCDC drops a row change (tiflow `pkg/filter/filter.go`, `ShouldIgnoreDMLEvent`) when
its table is not taken by the table-filter `rules` (default `*.*`; names compare in any
case unless the changefeed's `case-sensitive`), or when an `event-filters` rule whose
`matcher` takes the table (names compared exactly: TiCDC parses these matchers without
the case-insensitive wrapper) ignores it: by its type (`ignore-event`: `insert`,
`update`, `delete`, `all dml`; `pkg/filter/sql_event_filter.go`) or by a SQL condition on
its values (`pkg/filter/expr_filter.go`): `ignore-insert-value-expr` on an INSERT's row,
`ignore-delete-value-expr` on a DELETE's row, `ignore-update-old-value-expr` /
`ignore-update-new-value-expr` on an UPDATE's old / new row (either ignores it; an
UPDATE without old values is not ignored by the old one). A NULL result ignores nothing.

Conditions become Arrow expressions (`sql_expr`), evaluated column-wise with Acero; the
row's table, op and images come from the input's metadata columns (`InputLayout`).
DDL parts of a rule (`ignore-sql`, DDL event types) filter DDL messages, which `config`
allows only while the sink sends none. This module knows nothing of encoders or Kafka.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import pyarrow as pa
import pyarrow.compute as pc

from ticdc_sink.errors import ConfigError
from ticdc_sink.events import Op
from ticdc_sink.input_batch import OP_SPELLINGS, InputLayout
from ticdc_sink.sql_expr import translate_condition
from ticdc_sink.table_filter import TableFilter

__all__ = [
    "DML_EVENTS",
    "RULE_KEYS",
    "EventFilterRule",
    "RowFilter",
    "RowMask",
    "event_matcher",
    "filter_rules_filter",
    "parse_event_filters",
]

# tiflow pkg/filter/utils.go SupportedEventTypes: the DML ones, and what each ignores.
DML_EVENTS: dict[str, frozenset[Op]] = {
    "all dml": frozenset({Op.INSERT, Op.UPDATE, Op.DELETE}),
    "insert": frozenset({Op.INSERT}),
    "update": frozenset({Op.UPDATE}),
    "delete": frozenset({Op.DELETE}),
}

_EXPR_KEYS = (
    "ignore-insert-value-expr",
    "ignore-update-new-value-expr",
    "ignore-update-old-value-expr",
    "ignore-delete-value-expr",
)
RULE_KEYS = frozenset({"matcher", "ignore-event", "ignore-sql", *_EXPR_KEYS})


@attrs.frozen
class EventFilterRule:
    """One `[[filter.event-filters]]` rule as TiCDC spells it (`config.EventFilterRule`)."""

    matcher: tuple[str, ...]
    ignore_event: tuple[str, ...] = ()
    ignore_sql: tuple[str, ...] = ()
    ignore_insert_value_expr: str = ""
    ignore_update_new_value_expr: str = ""
    ignore_update_old_value_expr: str = ""
    ignore_delete_value_expr: str = ""

    @property
    def ddl_parts(self) -> tuple[str, ...]:
        """The DDL event types and SQL patterns of this rule (they filter DDL only)."""
        return tuple(e for e in self.ignore_event if e not in DML_EVENTS) + self.ignore_sql

    def expressions(self) -> dict[str, str]:
        """Setting name -> condition, for the conditions set."""
        return {
            key: getattr(self, key.replace("-", "_"))
            for key in _EXPR_KEYS
            if getattr(self, key.replace("-", "_"))
        }


def parse_event_filters(value: Any, option: str) -> tuple[EventFilterRule, ...]:
    """`event-filters` as the changefeed file has it (a list of tables), checked as
    TiCDC checks it: known keys, a matcher, event types TiCDC supports.

    Raises:
        ConfigError: naming the option, the rule and what is wrong.
    """
    if value is None or value == [] or value == ():
        return ()
    if isinstance(value, tuple) and all(isinstance(r, EventFilterRule) for r in value):
        return value
    if not isinstance(value, list) or not all(isinstance(r, Mapping) for r in value):
        raise ConfigError(
            f"{option} must be a list of rules, e.g. "
            '[{"matcher": ["db.t"], "ignore-event": ["delete"]}]',
            option=option,
        )
    rules = []
    for number, raw in enumerate(value, 1):
        raw = {str(k).lower(): v for k, v in raw.items()}
        unknown = sorted(set(raw) - RULE_KEYS)
        if unknown:
            raise ConfigError(
                f"{option} rule {raw!r} has unknown key {unknown[0]!r}; a rule takes "
                + ", ".join(sorted(RULE_KEYS)),
                option=option,
            )
        matcher = _strings(raw.get("matcher"), option, raw, "matcher")
        if not matcher:
            raise ConfigError(
                f"{option} rule {raw!r} needs matcher = ['db.table', ...]", option=option
            )
        events = _strings(raw.get("ignore-event"), option, raw, "ignore-event")
        for event in events:
            if event not in DML_EVENTS and event not in _DDL_EVENTS:
                raise ConfigError(
                    f"{option} rule {raw!r}: ignore-event {event!r} is not an event type "
                    f"TiCDC supports; use {', '.join(DML_EVENTS)} or a DDL type "
                    "(all ddl, create table, ...), in lower case",
                    option=option,
                    value=event,
                )
        exprs = {}
        for key in _EXPR_KEYS:
            text = raw.get(key) or ""
            if not isinstance(text, str):
                raise ConfigError(
                    f"{option} rule {raw!r}: {key} must be a SQL condition as text",
                    option=option,
                )
            exprs[key.replace("-", "_")] = text.strip()
        event_matcher(matcher, number, option)  # a pattern TiDB refuses fails here
        rules.append(
            EventFilterRule(
                matcher=tuple(matcher),
                ignore_event=tuple(events),
                ignore_sql=tuple(_strings(raw.get("ignore-sql"), option, raw, "ignore-sql")),
                **exprs,
            )
        )
    return tuple(rules)


def event_matcher(
    matcher: Sequence[str], number: int, option: str = "event-filters"
) -> TableFilter:
    """The tables a rule applies to: TiDB's table filter, names compared exactly (tiflow
    `newSQLEventFilterRule` and `newExprFilterRule` parse the matcher without TiDB's
    `CaseInsensitive`, whatever the changefeed's `case-sensitive`).

    Raises:
        ConfigError: a pattern TiDB refuses, naming the rule and the pattern.
    """
    return TableFilter(
        matcher, case_sensitive=True, option=option, label=f"{option} rule {number} matcher"
    )


def _strings(value: Any, option: str, raw: Mapping[str, Any], key: str) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ConfigError(
            f"{option} rule {dict(raw)!r}: {key} must be a list of strings", option=option
        )
    return [v.strip() for v in value]


# tiflow pkg/filter/utils.go SupportedEventTypes: all ddl, alter table, create / drop
# schema and the DDLs of ddlWhiteListMap (pkg/filter/filter.go), spelled as
# pkg/binlog-filter/filter.go spells them.
_DDL_EVENTS = frozenset(
    {
        "all ddl",
        "alter table",
        "create schema",
        "drop schema",
        "create database",
        "drop database",
        "create table",
        "drop table",
        "add column",
        "drop column",
        "create index",
        "drop index",
        "add foreign key",
        "drop foreign key",
        "truncate table",
        "modify column",
        "rebase auto id",
        "rename table",
        "set default value",
        "modify table comment",
        "rename index",
        "add table partition",
        "drop table partition",
        "create view",
        "modify table charset and collate",
        "truncate table partition",
        "drop view",
        "recover table",
        "modify schema charset and collate",
        "add primary key",
        "drop primary key",
        "alter index visibility",
        "exchange table partition",
        "reorganize table partition",
        "alter table partitioning",
        "remove table partitioning",
        "alter ttl info",
        "alter ttl remove",
        "multi schema change",
    }
)


def filter_rules_filter(rules: Sequence[str], *, case_sensitive: bool = False) -> TableFilter:
    """The tables `[filter] rules` take (tiflow `VerifyTableRules`: `*.*` when there are
    none; TiDB's `CaseInsensitive` unless the changefeed's `case-sensitive`).

    Raises:
        ConfigError: a pattern TiDB refuses, naming the pattern and where.
    """
    return TableFilter(
        rules or ("*.*",),
        case_sensitive=case_sensitive,
        option="filter-rules",
        label="option 'filter-rules'",
    )


@attrs.frozen
class RowFilter:
    """`[filter] rules` and `event-filters`, with the changefeed's `case-sensitive`."""

    rules: tuple[str, ...] = ()
    event_filters: tuple[EventFilterRule, ...] = ()
    case_sensitive: bool = False
    # Parsed once (a frozen class's derived fields): the table filter of `rules`, and each
    # event-filter rule's matcher.
    _tables: TableFilter = attrs.field(init=False, eq=False, repr=False)
    _matchers: tuple[TableFilter, ...] = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        tables = filter_rules_filter(self.rules, case_sensitive=self.case_sensitive)
        object.__setattr__(self, "_tables", tables)
        matchers = tuple(event_matcher(r.matcher, i) for i, r in enumerate(self.event_filters, 1))
        object.__setattr__(self, "_matchers", matchers)

    @property
    def active(self) -> bool:
        """Whether any row could be dropped (`*.*` alone takes every table)."""
        return bool(self.event_filters) or self.rules not in ((), ("*.*",))

    def takes(self, database: str, table: str) -> bool:
        """Whether `rules` take the table (else each of its rows is dropped)."""
        return self._tables.matches(database, table)

    def event_rules_for(self, database: str, table: str) -> tuple[int, ...]:
        """The positions (0-based) of the event-filter rules whose matcher takes the table."""
        return tuple(i for i, m in enumerate(self._matchers) if m.matches(database, table))

    def compile(self, schema: pa.Schema, layout: InputLayout) -> RowMask:
        """The filter for record batches of `schema`, conditions translated for its
        columns; done on the driver to check them, and once per task and schema.

        Raises:
            ConfigError: a condition names an unknown column or is outside the subset.
        """
        return RowMask(self, schema, layout.bind(schema.names))


_NULL_BOOL = pa.scalar(None, pa.bool_())


class RowMask:
    """A RowFilter compiled for one input schema: `keep(batch)` gives the rows to send."""

    def __init__(self, spec: RowFilter, schema: pa.Schema, layout: InputLayout) -> None:
        self.layout = layout
        self.spec = spec
        reserved = layout.reserved
        new = {f.name: ((f.name,), f.type) for f in schema if f.name not in reserved}
        old: dict[str, tuple[tuple[str, ...], pa.DataType]] = {}
        before = layout.before_column
        if before in schema.names and pa.types.is_struct(schema.field(before).type):
            old = {f.name: ((before, f.name), f.type) for f in schema.field(before).type}
        self.has_before = bool(old)
        self.has_op = layout.op_column in schema.names
        self.rules = []
        for i, rule in enumerate(spec.event_filters):
            name = f"event-filters[{i}]"
            exprs = rule.expressions()

            def condition(key: str, columns: Mapping[str, Any]) -> Any:
                text = exprs.get(key)  # noqa: B023 (called in this iteration only)
                if not text:
                    return None
                return translate_condition(text, columns, filter_name=f"{name} {key}")  # noqa: B023

            ops = frozenset().union(*(DML_EVENTS.get(e, ()) for e in rule.ignore_event))
            self.rules.append(
                (
                    i,
                    ops,
                    condition("ignore-insert-value-expr", new),
                    condition("ignore-update-new-value-expr", new),
                    condition("ignore-update-old-value-expr", old) if old else None,
                    condition("ignore-delete-value-expr", new),
                )
            )
        if not old:
            for i, rule in enumerate(spec.event_filters):
                if rule.ignore_update_old_value_expr:
                    # Without old values no UPDATE could ever match: say so, not nothing.
                    raise ConfigError(
                        f"event-filters[{i}] ignore-update-old-value-expr needs the old "
                        f"values: a column {before!r}, a struct of the table's columns",
                        option="event-filters",
                    )

    def keep(
        self, batch: pa.RecordBatch, default_database: str | None, default_table: str | None
    ) -> pa.BooleanArray | None:
        """Which rows of `batch` TiCDC would send; None: all of them."""
        rows = batch.num_rows
        if rows == 0:
            return None
        tables, dictionary = self._table_codes(batch, default_database, default_table)
        # One decision per distinct table, spread over the rows by dictionary index.
        taken = pa.array([self.spec.takes(d, t) for d, t in dictionary], pa.bool_())
        keep = taken.take(tables)
        ops = self._ops(batch) if self.rules else None
        exprs: list[pc.Expression] = []
        applying = [self.spec.event_rules_for(d, t) for d, t in dictionary]
        for number, ignored_ops, insert, update_new, update_old, delete in self.rules:
            applies = pa.array([number in rules for rules in applying], pa.bool_())
            if not any(applies.to_pylist()):
                continue
            on_table = pc.field("__table").isin(
                pa.array([i for i, a in enumerate(applies.to_pylist()) if a], pa.int32())
            )
            ignore: pc.Expression = pc.scalar(False)
            for op in ignored_ops:
                ignore = ignore | (pc.field("__op") == _CODE[op])
            for op, condition in (
                (Op.INSERT, insert),
                (Op.UPDATE, update_new),
                (Op.UPDATE, update_old),
                (Op.DELETE, delete),
            ):
                if condition is None:
                    continue
                hit = (pc.field("__op") == _CODE[op]) & pc.coalesce(condition, pc.scalar(False))
                if condition is update_old:
                    hit = hit & pc.is_valid(pc.field(self.layout.before_column))
                ignore = ignore | hit
            exprs.append(on_table & ignore)
        if exprs:
            ignored = exprs[0]
            for more in exprs[1:]:
                ignored = ignored | more
            table = pa.Table.from_batches(
                [batch.append_column("__table", tables).append_column("__op", ops)]
            )
            # Imported here: pyarrow.acero loads pyarrow.dataset and pandas (~0.2 s), which
            # every Spark worker that unpickles the data source (reads too) would pay.
            import pyarrow.acero as acero

            decl = acero.Declaration.from_sequence(
                [
                    acero.Declaration("table_source", acero.TableSourceNodeOptions(table)),
                    acero.Declaration("project", acero.ProjectNodeOptions([ignored], ["i"])),
                ]
            )
            out = decl.to_table().column("i").combine_chunks()
            keep = pc.and_(keep, pc.invert(out))
        if keep.false_count == 0:
            return None
        return keep

    def _table_codes(
        self, batch: pa.RecordBatch, default_database: str | None, default_table: str | None
    ) -> tuple[pa.Array, list[tuple[str, str]]]:
        """Per row, an index into the list of distinct (database, table) of the batch."""
        names = batch.schema.names
        parts = []
        for column, default in (
            (self.layout.database_column, default_database),
            (self.layout.table_column, default_table),
        ):
            if column in names:
                values = pc.cast(batch.column(column), pa.string())
                parts.append(pc.fill_null(values, default or ""))
            else:
                parts.append(pa.array([default or ""] * batch.num_rows, pa.string()))
        joined = pc.binary_join_element_wise(parts[0], parts[1], "\x00").dictionary_encode()
        dictionary = [tuple(v.split("\x00", 1)) for v in joined.dictionary.to_pylist()]
        return pc.cast(joined.indices, pa.int32()), dictionary

    def _ops(self, batch: pa.RecordBatch) -> pa.Array:
        """Per row its op code (INSERT when there is no op column); an unknown spelling
        is left to the reader, which refuses it (-1 here: no rule applies)."""
        if not self.has_op:
            return pa.array([_CODE[Op.INSERT]] * batch.num_rows, pa.int8())
        lowered = pc.utf8_lower(pc.cast(batch.column(self.layout.op_column), pa.string()))
        codes = pa.array([-1] * batch.num_rows, pa.int8())
        for spelling, op in OP_SPELLINGS.items():
            codes = pc.if_else(pc.equal(lowered, spelling), _CODE[op], codes)
        return pc.fill_null(codes, -1)


_CODE = {Op.INSERT: 0, Op.UPDATE: 1, Op.DELETE: 2}
