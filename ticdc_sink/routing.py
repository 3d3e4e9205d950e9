"""Where a row change goes: TiCDC's topic expressions and partition dispatchers.

This module owns the topic rules of tiflow `cdc/sink/dmlsink/mq/dispatcher/topic/
expression.go` and `event_router.go`, and the partition dispatchers of
`dispatcher/partition/*.go` with the hash of `pkg/hash/position_inertia.go`, so that
every partition number equals the one TiCDC computes (reference §2, §3). It knows no
Kafka: partition counts arrive as ints.

    TopicRouter(expr).topic_for(database, table)      -> topic name
    build_dispatcher(rule, table, columns, index)     -> PartitionDispatcher
    dispatcher.partition(change, partition_num)       -> int in [0, partition_num)
    dispatcher.batch_partitions(batch, row_ends, n)   -> the same, per message of a batch
    DispatchRule: one `[sink] dispatchers` entry, its matcher a `table_filter.TableFilter`;
        `rule_for(rules, db, table)` picks one
    target_name(rules, db, table)                     -> the (db, table) messages name
        (pingcap/ticdc's table routing, `target-schema` / `target-table`);
        `claim_target` refuses two tables named as one
    Route: a table's topic and dispatcher (`config.RoutingConfig.route` decides it)
"""

from __future__ import annotations

import enum
import math
import re
import zlib
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ticdc_sink.errors import ConfigError, InputError
from ticdc_sink.events import ChangeBatch, RowChange
from ticdc_sink.gotext import format_float
from ticdc_sink.schema import TableSchema
from ticdc_sink.table_filter import TableFilter

__all__ = [
    "KAFKA_TOPIC_MAX_LENGTH",
    "DispatchRule",
    "PartitionDispatcher",
    "PartitionRule",
    "Route",
    "TopicRouter",
    "build_dispatcher",
    "claim_target",
    "column_value_bytes",
    "rule_for",
    "target_name",
    "validate_topic_expression",
]

#: Kafka's limit on topic names (Kafka `Topic.java`; tiflow `kafkaTopicNameMaxLength`).
KAFKA_TOPIC_MAX_LENGTH = 249

# The regular expressions of tiflow topic/expression.go, matched against the whole text.
_HARD_CODED = re.compile(r"[A-Za-z0-9._-]+")
_EXPRESSION = re.compile(r"[A-Za-z0-9._-]*(\{schema\})?([A-Za-z0-9._-]*\{table\})?[A-Za-z0-9._-]*")
_AVRO_EXPRESSION = re.compile(r"[A-Za-z0-9._-]*\{schema\}[A-Za-z0-9._-]*\{table\}[A-Za-z0-9._-]*")
_FORBIDDEN = re.compile(r"[^A-Za-z0-9._-]")
# pingcap/ticdc pkg/config/sink.go validRoutingExpressionRegexp: target-schema and
# target-table are literal text with {schema} and {table}, no other braces.
_ROUTING_EXPRESSION = re.compile(r"(?:[^{}]|\{schema\}|\{table\})*")


class PartitionRule(enum.StrEnum):
    """The `partition` option: TiCDC's partition dispatcher names."""

    DEFAULT = "default"
    TABLE = "table"
    INDEX_VALUE = "index-value"
    TS = "ts"
    COLUMNS = "columns"

    @classmethod
    def parse(cls, value: str | PartitionRule) -> PartitionRule:
        """Read a rule as TiCDC does: any case, `rowid` for index-value, empty for default.

        TiCDC falls back to `table` with a warning on any other name; here that is an
        error, since a misspelt rule would silently change every partition.

        Raises:
            ConfigError: the name is none of the rules.
        """
        if isinstance(value, cls):
            return value
        name = str(value).strip().lower()
        # event_router.go GetPartitionRule: "rowid" is the deprecated index-value name;
        # an empty rule (a dispatcher with only a topic) gets the default dispatcher.
        name = {"rowid": "index-value", "": "default"}.get(name, name)
        try:
            return cls(name)
        except ValueError:
            allowed = tuple(rule.value for rule in cls)
            raise ConfigError(
                f"option 'partition' is '{value}'; use one of {', '.join(allowed)}",
                option="partition",
                value=str(value),
                allowed=allowed,
            ) from None


def _is_hard_coded(expr: str) -> bool:
    return _HARD_CODED.fullmatch(expr) is not None


def validate_topic_expression(
    expr: str, protocol: str = "", *, schema_and_table: bool = False
) -> None:
    """Check a `topic` value as TiCDC's `getTopicDispatcher` does.

    A name of only `[A-Za-z0-9._-]` is a fixed topic (it must also be a legal Kafka
    topic: not `.` or `..`, at most 249 bytes). Anything else is an expression:
    `[prefix]{schema}[middle][{table}][suffix]`, `{table}` optional; with
    `schema_and_table` (protocol avro, named by `protocol` in the message) both
    `{schema}` and `{table}` are required (fixed topics pass, as in tiflow).

    Raises:
        ConfigError: naming the option `topic`, the value and the allowed form.
    """
    if expr == "":
        raise ConfigError(
            "option 'topic' is empty; set a topic name or expression such as "
            "tidb_{schema}_{table} (or put the topic in the sink-uri path)",
            option="topic",
            value=expr,
        )
    if _is_hard_coded(expr):
        if expr in (".", "..") or len(expr) > KAFKA_TOPIC_MAX_LENGTH:
            raise ConfigError(
                f"option 'topic' is '{expr[:60]}'; a Kafka topic name is 1 to "
                f"{KAFKA_TOPIC_MAX_LENGTH} characters and not '.' or '..'",
                option="topic",
                value=expr,
            )
        return
    if schema_and_table:
        if _AVRO_EXPRESSION.fullmatch(expr) is None:
            raise ConfigError(
                f"option 'topic' is '{expr}'; with protocol {protocol} a topic expression must "
                "contain {schema} and then {table} (e.g. tidb_{schema}_{table}), other "
                "characters only A-Z a-z 0-9 . _ -",
                option="topic",
                value=expr,
            )
        return
    if _EXPRESSION.fullmatch(expr) is None:
        raise ConfigError(
            f"option 'topic' is '{expr}'; a topic expression is [prefix]{{schema}}[middle]"
            "[{table}][suffix] (e.g. tidb_{schema}_{table}), other characters only "
            "A-Z a-z 0-9 . _ -",
            option="topic",
            value=expr,
        )


class TopicRouter:
    """Maps a table to its topic by a `topic` expression (tiflow `Expression.Substitute`).

    Names are sanitised first: every code point outside `[A-Za-z0-9._-]` becomes one
    `_`; the result is cut to 249 bytes, and `.` / `..` become `_` / `__`. A fixed topic
    is returned as is (tiflow's `StaticTopicDispatcher`).
    """

    __slots__ = ("expression", "is_static")

    def __init__(self, expression: str) -> None:
        validate_topic_expression(expression, "")
        self.expression = expression
        self.is_static = _is_hard_coded(expression)

    def topic_for(self, database: str, table: str) -> str:
        if self.is_static:
            return self.expression
        topic = self.expression.replace("{schema}", _FORBIDDEN.sub("_", database))
        topic = topic.replace("{table}", _FORBIDDEN.sub("_", table))
        if len(topic) > KAFKA_TOPIC_MAX_LENGTH:  # ASCII only, so characters are bytes
            return topic[:KAFKA_TOPIC_MAX_LENGTH]
        return {".": "_", "..": "__"}.get(topic, topic)

    def __repr__(self) -> str:
        return f"TopicRouter({self.expression!r})"


# -- ColumnValueString ---------------------------------------------------------------


# Go's FormatFloat writes NaN and the infinities as words (events never gives them: MySQL
# stores neither, but the hash of any float is Go's).
_NON_FINITE = {"nan": "NaN", "inf": "+Inf", "-inf": "-Inf"}


def _float_text(value: float, bits: int) -> str:
    """Go `strconv.FormatFloat(v, 'f', -1, bits)`, NaN and infinities included."""
    if math.isfinite(value):
        return format_float(value, bits)
    return _NON_FINITE[repr(value)]


def column_value_bytes(value: Any, *, float32: bool = False) -> bytes:
    """The bytes tiflow's `model.ColumnValueString` yields for a mounter value.

    None -> `null`; bool -> `1`/`0`; int -> decimal; float -> Go 'f' shortest (bitSize 32
    for FLOAT columns); str -> UTF-8; bytes -> raw.
    """
    if value is None:
        return b"null"
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, bool):
        return b"1" if value else b"0"
    if isinstance(value, int):
        return str(value).encode()
    if isinstance(value, float):
        return _float_text(value, 32 if float32 else 64).encode()
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    return str(value).encode()  # Go's fmt "%v" fallback


def _column_value_bytes(values: Any, *, float32: bool) -> list[bytes]:
    """`column_value_bytes` of every value of a converted column (an Arrow array or a
    list of mounter values, `events.ChangeBatch`): integers cast to text and strings
    taken as UTF-8 by Arrow, the rest value by value."""
    if isinstance(values, pa.Array):
        kind = values.type
        if pa.types.is_integer(kind):
            values = pc.cast(values, pa.string())
            kind = values.type
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            values = pc.cast(values, pa.large_binary())
            kind = values.type
        if pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
            if values.null_count:
                values = pc.fill_null(values, pa.scalar(b"null", kind))
            return values.to_pylist()
        values = values.to_pylist()
    return [column_value_bytes(value, float32=float32) for value in values]


def _message_rows(row_ends: list[int] | None, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Per message, its row; and the indexes of the messages that are the DELETE half of
    a key-changing UPDATE split in two (`row_ends` as in `codec.EncodedBatch`)."""
    if row_ends is None:
        return np.arange(rows), np.zeros(0, np.int64)
    ends = np.asarray(row_ends, np.int64)
    repeats = np.diff(ends, prepend=0)
    split = np.flatnonzero(repeats == 2)
    return np.repeat(np.arange(rows), repeats), ends[split] - 2


# -- partition dispatchers -----------------------------------------------------------


def _check_partition_num(partition_num: int) -> None:
    if partition_num < 1:
        raise ConfigError(
            f"option 'partition-num' is {partition_num}; use a positive number of partitions",
            option="partition-num",
            value=str(partition_num),
        )


class PartitionDispatcher:
    """Chooses the partition of a row change of one table (tiflow `partition.Dispatcher`).

    Built once per table by `build_dispatcher`; `partition` is called per row and only
    reads precomputed state, so one instance may serve one task's rows in order.
    `columns` names the table columns whose values the partition depends on (in hash
    order; empty for `table`, `default` and `ts`).
    """

    __slots__ = ("columns", "rule", "table")

    def __init__(self, rule: PartitionRule, table: TableSchema) -> None:
        self.rule = rule
        self.table = table
        self.columns: tuple[str, ...] = ()

    def partition(self, change: RowChange, partition_num: int) -> int:
        raise NotImplementedError

    def batch_partitions(
        self, batch: ChangeBatch, row_ends: list[int] | None, partition_num: int
    ) -> list[int]:
        """`partition` of every event of `batch.to_events(...)`, in message order
        (`row_ends` as in `codec.EncodedBatch`: None for one event per row, else a
        key-changing UPDATE is a DELETE of its old image, then an INSERT), computed
        column-wise: no event objects, the same numbers and errors."""
        raise NotImplementedError

    def constant_partition(self, partition_num: int) -> int | None:
        """The partition of every row change of the table when it does not depend on the
        row (rule `table` / `default`), else None."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.rule.value}, {self.table.database}.{self.table.table})"


class _TsDispatcher(PartitionDispatcher):
    __slots__ = ()

    def partition(self, change: RowChange, partition_num: int) -> int:
        _check_partition_num(partition_num)
        return change.commit_ts % partition_num

    def batch_partitions(
        self, batch: ChangeBatch, row_ends: list[int] | None, partition_num: int
    ) -> list[int]:
        _check_partition_num(partition_num)
        rows, _ = _message_rows(row_ends, batch.rows)
        if batch.commit_ts is None:
            return [batch.default_commit_ts % partition_num] * len(rows)
        # uint64: every TSO fits (events.py refuses commit ts below 1).
        ts = pc.cast(batch.commit_ts, pa.uint64()).to_numpy(zero_copy_only=False)
        return (ts[rows] % np.uint64(partition_num)).tolist()


class _HashDispatcher(PartitionDispatcher):
    """table, default, index-value and columns: `PositionInertia` over the table name and
    the chosen columns. Each `Write(a, b)` is one CRC-32 over `a || b`, XORed into the sum;
    the CRC of each column name is computed once and continued with the value bytes."""

    __slots__ = ("_columns", "_table_crc")

    def __init__(
        self,
        rule: PartitionRule,
        table: TableSchema,
        columns: Sequence[tuple[str, int]] = (),
    ) -> None:
        super().__init__(rule, table)
        self.columns = tuple(name for name, _ in columns)
        self._table_crc = zlib.crc32(table.database.encode() + table.table.encode())
        self._columns = tuple(
            (zlib.crc32(name.encode()), pos, table.columns[pos].type.base == "float")
            for name, pos in columns
        )

    def partition(self, change: RowChange, partition_num: int) -> int:
        _check_partition_num(partition_num)
        acc = self._table_crc
        if self._columns:
            # tiflow: values from Columns, or PreColumns when there are none (DELETE).
            values = change.row if change.row is not None else change.before
            if values is None:
                raise InputError(
                    f"row change of table {self.table.database}.{self.table.table} has no "
                    f"values to compute partition rule {self.rule.value} from",
                    table=f"{self.table.database}.{self.table.table}",
                )
            for name_crc, pos, is_float32 in self._columns:
                acc ^= zlib.crc32(column_value_bytes(values[pos], float32=is_float32), name_crc)
        return acc % partition_num

    def batch_partitions(
        self, batch: ChangeBatch, row_ends: list[int] | None, partition_num: int
    ) -> list[int]:
        constant = self.constant_partition(partition_num)
        rows, deletes = _message_rows(row_ends, batch.rows)
        if constant is not None:
            return [constant] * len(rows)
        _check_partition_num(partition_num)
        sums = self._hashes(batch.columns, batch.rows)[rows]
        if len(deletes):
            # The DELETE of a split UPDATE hashes the old image (its only values).
            before = {row: j for j, row in enumerate(batch.before_rows)}
            old = [before[row] for row in rows[deletes].tolist()]
            taken = pa.array(old, pa.int64())
            columns = [
                c.take(taken) if isinstance(c, pa.Array) else [c[j] for j in old]
                for c in batch.before_columns
            ]
            sums[deletes] = self._hashes(columns, len(old))
        return (sums % np.uint32(partition_num)).tolist()

    def _hashes(self, columns: Sequence[Any], rows: int) -> np.ndarray:
        """The hash sum (before the modulo) of each of `rows` images, per column."""
        acc = np.full(rows, self._table_crc, np.uint32)
        crc32 = zlib.crc32
        for name_crc, pos, is_float32 in self._columns:
            data = _column_value_bytes(columns[pos], float32=is_float32)
            acc ^= np.fromiter((crc32(v, name_crc) for v in data), np.uint32, rows)
        return acc

    def constant_partition(self, partition_num: int) -> int | None:
        if self._columns:
            return None
        _check_partition_num(partition_num)
        return self._table_crc % partition_num


class Route(NamedTuple):
    """Where a table's row changes go: its topic and its partition dispatcher."""

    topic: str
    dispatcher: PartitionDispatcher


def build_dispatcher(
    rule: PartitionRule | str,
    table: TableSchema,
    columns: Sequence[str] = (),
    index: str | None = None,
) -> PartitionDispatcher:
    """The dispatcher of `rule` for `table`, as tiflow's `getPartitionDispatcher` builds it.

    - `default`, `table`: CRC of database+table (tiflow's default is `table`).
    - `ts`: commit ts modulo the partition count.
    - `index-value`: table, then each handle-key column (column order) as name+value; with
      `index`, that index's columns in index order (name matched in any case; it must be
      unique, as TiCDC checks at changefeed creation).
    - `columns`: table, then each of `columns` (matched in any case) as the table's own
      column name + value, in the order given.

    Raises:
        ConfigError: unknown index or column, naming the table and what exists.
    """
    rule = PartitionRule.parse(rule)
    name = f"{table.database}.{table.table}"
    positions = {column.name.lower(): pos for pos, column in enumerate(table.columns)}
    if rule is PartitionRule.TS:
        return _TsDispatcher(rule, table)
    if rule is PartitionRule.COLUMNS:
        if not columns:
            raise ConfigError(
                "option 'partition-columns' is empty; partition=columns needs the columns "
                "to hash, e.g. partition-columns=id,region",
                option="partition-columns",
                value="",
            )
        chosen = []
        for column in columns:
            pos = positions.get(column.lower())
            if pos is None:
                raise ConfigError(
                    f"option 'partition-columns' names column '{column}', which table {name} "
                    f"does not have; its columns are {', '.join(_column_names(table))}",
                    option="partition-columns",
                    value=column,
                    allowed=_column_names(table),
                )
            # tiflow columns.go: the hash takes the table's own (original-case) name.
            chosen.append((table.columns[pos].name, pos))
        return _HashDispatcher(rule, table, chosen)
    if rule is PartitionRule.INDEX_VALUE:
        if index:
            found = [i for i in table.indexes if i.name.lower() == index.lower()]
            if not found or not (found[0].unique or found[0].primary):
                allowed = tuple(i.name for i in table.indexes if i.unique or i.primary)
                what = "is not unique" if found else "does not exist"
                raise ConfigError(
                    f"option 'index' is '{index}', which {what} in table {name}; "
                    f"use a unique index: {', '.join(allowed) or '(the table has none)'}",
                    option="index",
                    value=index,
                    allowed=allowed,
                )
            # tiflow IndexByName: the index's column names (original case), index order.
            chosen = [
                (table.columns[positions[c.lower()]].name, positions[c.lower()])
                for c in found[0].columns
            ]
        else:
            # Handle-key columns in column order (tiflow index_value.go walks the row).
            keys = {c.lower() for c in table.handle_key}
            chosen = [
                (c.name, pos) for pos, c in enumerate(table.columns) if c.name.lower() in keys
            ]
        return _HashDispatcher(rule, table, chosen)
    return _HashDispatcher(rule, table)


def _column_names(table: TableSchema) -> tuple[str, ...]:
    return tuple(column.name for column in table.columns)


# -- [sink] dispatchers: table filters and rules ------------------------------------------


class DispatchRule:
    """One `[sink] dispatchers` entry: the tables it matches, their topic expression (None:
    the default topic) and partition dispatcher, and (pingcap/ticdc's table routing) the
    `target-schema` / `target-table` expressions of the names their messages carry (None:
    the table's own)."""

    __slots__ = (
        "filter",
        "topic",
        "partition",
        "columns",
        "index",
        "target_schema",
        "target_table",
    )

    def __init__(
        self,
        matcher: Sequence[str],
        *,
        topic: str | None = None,
        partition: PartitionRule | str = PartitionRule.DEFAULT,
        columns: Sequence[str] = (),
        index: str | None = None,
        case_sensitive: bool = False,
        target_schema: str | None = None,
        target_table: str | None = None,
    ) -> None:
        self.filter = TableFilter(matcher, case_sensitive=case_sensitive)
        self.topic = topic or None
        self.partition = PartitionRule.parse(partition)
        self.columns = tuple(columns)
        self.index = index or None
        self.target_schema = target_schema or None
        self.target_table = target_table or None
        for key, expression in (("target-schema", target_schema), ("target-table", target_table)):
            if expression and not _ROUTING_EXPRESSION.fullmatch(expression):
                raise ConfigError(
                    f"dispatchers rule {list(matcher)!r}: {key} {expression!r} must contain "
                    "only literal text, {schema}, and {table} (TiCDC's rule)",
                    option="dispatchers",
                )
        if self.topic is not None:
            validate_topic_expression(self.topic, "")
        if self.partition is PartitionRule.COLUMNS and not self.columns:
            raise ConfigError(
                f"dispatchers rule {list(matcher)!r} has partition 'columns' but no columns; "
                "add columns = ['a', 'b']",
                option="dispatchers",
            )

    def with_case_sensitive(self, case_sensitive: bool) -> DispatchRule:
        patterns, topic, partition, columns, index, _, target_schema, target_table = self._args()
        return _make_rule(
            patterns, topic, partition, columns, index, case_sensitive, target_schema, target_table
        )

    @property
    def routes(self) -> bool:
        """Whether the rule renames the tables it takes (pingcap/ticdc `NewRouter` keeps
        only such rules for table routing)."""
        return self.target_schema is not None or self.target_table is not None

    def target_of(self, database: str, table: str) -> tuple[str, str]:
        """The (schema, table) names of a table this rule takes, as its messages carry
        them (pingcap/ticdc routing/router.go `Route`, `substituteExpression`: `{schema}`
        then `{table}` replaced in the expression; no expression keeps the name)."""
        return (
            _substitute(self.target_schema, database, table, database),
            _substitute(self.target_table, database, table, table),
        )

    def _args(self) -> tuple[Any, ...]:
        return (
            self.filter.patterns,
            self.topic,
            self.partition.value,
            self.columns,
            self.index,
            self.filter.case_sensitive,
            self.target_schema,
            self.target_table,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DispatchRule):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self) -> tuple[Any, ...]:
        return self._args()

    def __reduce__(self) -> tuple[Any, ...]:
        return (_make_rule, self._args())

    def __repr__(self) -> str:
        routed = ""
        if self.routes:
            routed = f", target_schema={self.target_schema!r}, target_table={self.target_table!r}"
        return (
            f"DispatchRule(matcher={list(self.filter.patterns)!r}, topic={self.topic!r}, "
            f"partition={self.partition.value!r}{routed})"
        )


def _make_rule(
    matcher: Sequence[str],
    topic: str | None,
    partition: str,
    columns: Sequence[str],
    index: str | None,
    case_sensitive: bool,
    target_schema: str | None = None,
    target_table: str | None = None,
) -> DispatchRule:
    return DispatchRule(
        matcher,
        topic=topic,
        partition=partition,
        columns=columns,
        index=index,
        case_sensitive=case_sensitive,
        target_schema=target_schema,
        target_table=target_table,
    )


def _substitute(expression: str | None, database: str, table: str, default: str) -> str:
    if not expression:
        return default
    return expression.replace("{schema}", database).replace("{table}", table)


def rule_for(rules: Sequence[DispatchRule], database: str, table: str) -> DispatchRule | None:
    """The first rule whose matcher takes the table (tiflow `event_router.go`), or None:
    then the `topic` and `partition` options apply (TiCDC's appended catch-all rule)."""
    for rule in rules:
        if rule.filter.matches(database, table):
            return rule
    return None


def claim_target(
    owners: dict[tuple[str, str], tuple[str, str]],
    source: tuple[str, str],
    target: tuple[str, str],
) -> None:
    """Record in `owners` (target -> source) that the messages of table `source` name
    `target`.

    Raises:
        ConfigError: another table's messages already name it: pingcap/ticdc refuses two
            live tables routed to one name (routing/registry.go `TargetTableRegistry`,
            ErrTableRouteConflict).
    """
    owner = owners.setdefault(target, source)
    if owner != source:
        raise ConfigError(
            f"tables {owner[0]}.{owner[1]} and {source[0]}.{source[1]} are both written as "
            f"{target[0]}.{target[1]} (dispatchers target-schema / target-table); TiCDC "
            "refuses two tables routed to one name: give each table a target of its own",
            option="dispatchers",
        )


def target_name(rules: Sequence[DispatchRule], database: str, table: str) -> tuple[str, str]:
    """The (schema, table) names the messages of a table carry: those of the first rule
    with `target-schema` or `target-table` whose matcher takes it (pingcap/ticdc
    routing/router.go `NewRouter` keeps only such rules, `matchRule` takes the first),
    else its own. Its topic and partition stay those of `rule_for`, computed on its own
    names (pingcap/ticdc's event router is given the source names)."""
    for rule in rules:
        if rule.routes and rule.filter.matches(database, table):
            return rule.target_of(database, table)
    return database, table
