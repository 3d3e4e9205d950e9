"""TiCDC's event-filter SQL conditions (`ignore-insert-value-expr` and its siblings) as
Arrow compute expressions, translated once on the driver and evaluated column-wise on
the executors.

TiCDC parses each condition as `select * from t where <expr>` with TiDB's parser and
evaluates it per row in the default SQL mode (tiflow `pkg/filter/expr_filter.go`); a row
is ignored when the result is exactly 1, so NULL (an unknown) never ignores a row. Here
sqlglot parses the condition (MySQL dialect) and the supported subset becomes one
`pyarrow.compute.Expression` with MySQL's three-valued logic:

- column names (as in MySQL, in any case; backquotes for odd names), literals: integers,
  decimals, 'strings' or "strings", NULL, TRUE, FALSE, a leading minus on a number;
- `=`, `<>` / `!=`, `<`, `<=`, `>`, `>=`, `<=>`; `AND`, `OR`, `NOT`, parentheses;
- `IS [NOT] NULL`, `[NOT] IN (literal, ...)`, `[NOT] BETWEEN literal AND literal`,
  `[NOT] LIKE 'pattern'` (`%`, `_`, `\\` escapes);
- operands compare as TiDB compares them: numbers with numbers, strings with strings
  byte by byte (TiDB's default collation, utf8mb4_bin), a numeric column with a quoted
  literal as numbers (the literal read as MySQL reads a string as a number: its longest
  numeric prefix, else 0), a DATE column with a 'YYYY-MM-DD' literal.

Anything else (functions, arithmetic, a string column against a number, time columns
other than DATE, a bare column as a condition) is a `ConfigError` naming the filter, the
expression and the part that is not supported. This module knows nothing of the sink
beyond column names and Arrow types.
"""

from __future__ import annotations

import datetime
import decimal
import re
from collections.abc import Callable, Mapping
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import sqlglot
from sqlglot import exp

from ticdc_sink.errors import ConfigError

__all__ = ["SUPPORTED", "FieldPath", "mysql_string_number", "translate_condition"]

SUPPORTED = (
    "columns, number / string / NULL / TRUE / FALSE literals, = <> != < <= > >= <=>, "
    "AND OR NOT, IS [NOT] NULL, [NOT] IN (literals), [NOT] BETWEEN, [NOT] LIKE"
)

# What a field reference resolves to: the Arrow field path of a column in the image the
# condition reads (a top-level column, or a field of the `_before` struct).
FieldPath = tuple[str, ...]


class _Unsupported(Exception):
    """A part of a condition outside the supported subset; `part` is its SQL."""

    def __init__(self, part: str, why: str) -> None:
        super().__init__(part, why)
        self.part = part
        self.why = why


# One translated operand: a boolean condition, a column (with its Arrow type) or a
# literal (a Python value; None is NULL).
_BOOL, _COLUMN, _LITERAL = "bool", "column", "literal"


class _Operand:
    __slots__ = ("kind", "expr", "type", "value", "sql")

    def __init__(
        self,
        kind: str,
        sql: str,
        expr: pc.Expression | None = None,
        type: pa.DataType | None = None,
        value: Any = None,
    ) -> None:
        self.kind = kind
        self.sql = sql
        self.expr = expr
        self.type = type
        self.value = value


def translate_condition(
    sql: str,
    columns: Mapping[str, tuple[FieldPath, pa.DataType]],
    *,
    filter_name: str,
) -> pc.Expression:
    """`sql` (a WHERE condition in TiDB's syntax) as a boolean Arrow expression that is
    true exactly where TiDB's result is 1; NULL where TiDB's is NULL.

    `columns` maps each table column name to its field path and Arrow type; names match
    in any case, as in MySQL. `filter_name` names the setting in errors.

    Raises:
        ConfigError: the condition does not parse, names an unknown column, or uses a
            part outside `SUPPORTED`; the message names the filter, the condition and the
            part.
    """
    try:
        tree = sqlglot.parse_one(sql, read="mysql")
    except sqlglot.errors.ParseError as exc:
        first = str(exc).splitlines()[0]
        raise ConfigError(
            f"{filter_name} {sql!r} is not a SQL condition TiDB would parse ({first}); write "
            "e.g. id > 10 AND name = 'x'",
            option=filter_name,
            value=sql,
        ) from None
    folded = {name.lower(): entry for name, entry in columns.items()}
    try:
        operand = _Translator(folded).operand(tree)
        if operand.kind != _BOOL:
            raise _Unsupported(operand.sql, "the expression must be a condition (a comparison)")
    except _Unsupported as exc:
        raise ConfigError(
            f"{filter_name} {sql!r}: {exc.part!r} is not supported here ({exc.why}); "
            f"supported: {SUPPORTED} (docs/guides/filters.md, 'Filters')",
            option=filter_name,
            value=sql,
        ) from None
    assert operand.expr is not None
    return operand.expr


_NUMERIC_PREFIX = re.compile(r"\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def mysql_string_number(text: str) -> float:
    """A string as MySQL reads it as a number: its longest numeric prefix after leading
    spaces ('12abc' is 12, 'abc' is 0)."""
    match = _NUMERIC_PREFIX.match(text)
    return float(match.group(0)) if match else 0.0


def _is_numeric(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)


def _is_string(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def _null_bool() -> pc.Expression:
    return pc.scalar(pa.scalar(None, pa.bool_()))


_COMPARE: dict[type, Callable[[Any, Any], pc.Expression]] = {
    exp.EQ: pc.equal,
    exp.NEQ: pc.not_equal,
    exp.LT: pc.less,
    exp.LTE: pc.less_equal,
    exp.GT: pc.greater,
    exp.GTE: pc.greater_equal,
}


class _Translator:
    def __init__(self, columns: Mapping[str, tuple[FieldPath, pa.DataType]]) -> None:
        self.columns = columns

    def operand(self, node: exp.Expr) -> _Operand:
        sql = node.sql(dialect="mysql")
        if node.args.get("negate") and not isinstance(node, exp.Like):
            raise _Unsupported(sql, "write NOT before the condition")
        if isinstance(node, exp.Paren):
            return self.operand(node.this)
        if isinstance(node, exp.Column):
            if node.table:
                raise _Unsupported(sql, "name columns without a table")
            entry = self.columns.get(node.name.lower())
            if entry is None:
                raise _Unsupported(sql, "no such column in the table")
            path, arrow_type = entry
            return _Operand(_COLUMN, sql, expr=pc.field(*path), type=arrow_type)
        if isinstance(node, exp.Literal):
            if node.is_string:
                return _Operand(_LITERAL, sql, value=node.this)
            return _Operand(_LITERAL, sql, value=_number(node.this))
        if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal):
            inner = self.operand(node.this)
            if isinstance(inner.value, str):
                raise _Unsupported(sql, "minus applies to numbers")
            return _Operand(_LITERAL, sql, value=-inner.value)
        if isinstance(node, exp.Null):
            return _Operand(_LITERAL, sql, value=None)
        if isinstance(node, exp.Boolean):
            return _Operand(_LITERAL, sql, value=1 if node.this else 0)
        if isinstance(node, exp.And | exp.Or):
            left, right = self.condition(node.this), self.condition(node.expression)
            combine = _and if isinstance(node, exp.And) else _or
            return _Operand(_BOOL, sql, expr=combine(left, right))
        if isinstance(node, exp.Not):
            return _Operand(_BOOL, sql, expr=pc.invert(self.condition(node.this)))
        if isinstance(node, exp.Is):
            if not isinstance(node.expression, exp.Null):
                raise _Unsupported(sql, "IS takes NULL or NOT NULL")
            value = self.operand(node.this)
            return _Operand(_BOOL, sql, expr=pc.is_null(self.value_expr(value)))
        if type(node) in _COMPARE:
            return self.compare(node, _COMPARE[type(node)])
        if isinstance(node, exp.NullSafeEQ):
            return self.null_safe_equal(node)
        if isinstance(node, exp.In):
            return self.is_in(node)
        if isinstance(node, exp.Between):
            low = self.compare_values(node.this, node.args["low"], pc.greater_equal, sql)
            high = self.compare_values(node.this, node.args["high"], pc.less_equal, sql)
            return _Operand(_BOOL, sql, expr=_and(low, high))
        if isinstance(node, exp.Like):
            return self.like(node)
        raise _Unsupported(sql, f"{type(node).__name__.lower()} is outside the subset")

    def condition(self, node: exp.Expr) -> pc.Expression:
        operand = self.operand(node)
        if operand.kind != _BOOL:
            raise _Unsupported(operand.sql, "AND, OR and NOT take conditions")
        assert operand.expr is not None
        return operand.expr

    def value_expr(self, operand: _Operand) -> pc.Expression:
        if operand.kind == _LITERAL:
            return pc.scalar(operand.value)
        assert operand.expr is not None
        return operand.expr

    def compare(self, node: exp.Expr, op: Callable[[Any, Any], Any]) -> _Operand:
        sql = node.sql(dialect="mysql")
        return _Operand(_BOOL, sql, expr=self.compare_values(node.this, node.expression, op, sql))

    def compare_values(
        self, left_node: exp.Expr, right_node: exp.Expr, op: Any, sql: str
    ) -> pc.Expression:
        left, right = self.operand(left_node), self.operand(right_node)
        if left.kind == _LITERAL and right.kind == _LITERAL:
            raise _Unsupported(sql, "compare a column with a value")
        if (left.kind == _LITERAL and left.value is None) or (
            right.kind == _LITERAL and right.value is None
        ):
            return _null_bool()  # any comparison with NULL is NULL
        return op(*self.coerce(left, right, sql))

    def coerce(self, left: _Operand, right: _Operand, sql: str) -> tuple[Any, Any]:
        """Both sides as Arrow operands TiDB would compare the same way."""
        for side in (left, right):
            if side.kind == _BOOL:
                raise _Unsupported(sql, "compare columns and values, not conditions")
        if left.kind == _COLUMN and right.kind == _COLUMN:
            assert left.type is not None and right.type is not None
            if (_is_numeric(left.type) and _is_numeric(right.type)) or (
                _is_string(left.type) and _is_string(right.type)
            ):
                return left.expr, right.expr
            raise _Unsupported(sql, f"columns of types {left.type} and {right.type}")
        column, literal = (left, right) if left.kind == _COLUMN else (right, left)
        value = self.literal_for(column, literal.value, sql)
        return (column.expr, value) if column is left else (value, column.expr)

    def literal_for(self, column: _Operand, value: Any, sql: str) -> Any:
        """`value` as a scalar comparable with `column`, as TiDB converts it."""
        t = column.type
        assert t is not None
        if _is_numeric(t):
            if isinstance(value, str):
                value = mysql_string_number(value)
            if pa.types.is_decimal(t) and not isinstance(value, float):
                return pc.scalar(pa.scalar(decimal.Decimal(value)))
            if isinstance(value, decimal.Decimal):
                value = float(value)
            return pc.scalar(value)
        if _is_string(t):
            if isinstance(value, str):
                return pc.scalar(value)
            raise _Unsupported(
                sql, "a string column compares with quoted strings here, not with numbers"
            )
        if pa.types.is_date32(t) and isinstance(value, str):
            try:
                return pc.scalar(pa.scalar(datetime.date.fromisoformat(value.strip())))
            except ValueError:
                raise _Unsupported(sql, "a DATE compares with 'YYYY-MM-DD'") from None
        raise _Unsupported(sql, f"columns of type {t} (numbers, strings and DATE are)")

    def null_safe_equal(self, node: exp.NullSafeEQ) -> _Operand:
        sql = node.sql(dialect="mysql")
        left, right = self.operand(node.this), self.operand(node.expression)
        for side, other in ((left, right), (right, left)):
            if side.kind == _LITERAL and side.value is None:
                if other.kind != _COLUMN:
                    raise _Unsupported(sql, "compare a column with a value")
                return _Operand(_BOOL, sql, expr=pc.is_null(other.expr))
        a, b = self.coerce(left, right, sql)
        both_null = _and(pc.is_null(a), pc.is_null(b))
        either_null = _or(pc.is_null(a), pc.is_null(b))
        equal = pc.if_else(either_null, pc.scalar(False), pc.equal(a, b))
        return _Operand(_BOOL, sql, expr=_or(both_null, equal))

    def is_in(self, node: exp.In) -> _Operand:
        sql = node.sql(dialect="mysql")
        column = self.operand(node.this)
        if column.kind != _COLUMN or node.args.get("query") or not node.expressions:
            raise _Unsupported(sql, "IN takes a column and a list of values")
        values = [self.operand(item) for item in node.expressions]
        if any(v.kind != _LITERAL for v in values):
            raise _Unsupported(sql, "IN takes a list of values")
        has_null = any(v.value is None for v in values)
        scalars = [self.literal_for(column, v.value, sql) for v in values if v.value is not None]
        found: pc.Expression = pc.scalar(False)
        for scalar in scalars:
            found = _or(found, pc.coalesce(pc.equal(column.expr, scalar), pc.scalar(False)))
        # MySQL: NULL IN (...) is NULL; x IN (..., NULL) is NULL when x is not found.
        unknown = pc.is_null(column.expr)
        if has_null:
            unknown = _or(unknown, pc.invert(found))
        return _Operand(_BOOL, sql, expr=pc.if_else(unknown, _null_bool(), found))

    def like(self, node: exp.Like) -> _Operand:
        sql = node.sql(dialect="mysql")
        column, pattern = self.operand(node.this), self.operand(node.expression)
        if column.kind != _COLUMN or column.type is None or not _is_string(column.type):
            raise _Unsupported(sql, "LIKE takes a string column")
        if pattern.kind != _LITERAL or not isinstance(pattern.value, str):
            raise _Unsupported(sql, "LIKE takes a quoted pattern")
        matched = pc.match_like(column.expr, pattern.value)
        if node.args.get("negate"):  # sqlglot's NOT LIKE
            matched = pc.invert(matched)
        return _Operand(_BOOL, sql, expr=matched)


def _number(text: str) -> int | decimal.Decimal | float:
    if re.fullmatch(r"\d+", text):
        return int(text)
    if re.fullmatch(r"\d*\.\d*", text):
        return decimal.Decimal(text)
    return float(text)


def _and(a: pc.Expression, b: pc.Expression) -> pc.Expression:
    """SQL AND (Kleene: false wins over NULL), as an expression."""
    return a & b


def _or(a: pc.Expression, b: pc.Expression) -> pc.Expression:
    """SQL OR (Kleene: true wins over NULL), as an expression."""
    return a | b
