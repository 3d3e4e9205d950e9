"""MySQL DDL read with sqlglot: a column type (`parse_mysql_type`), a column definition
(`parse_column_definition`, written back by `column_definition_sql`) and a `CREATE TABLE`
statement as `SHOW CREATE TABLE` prints it (`parse_table_ddl`), into the table model of
`ticdc_sink.schema`, with TiDB's rules for synonyms, lengths, charsets, defaults and keys.

Knows nothing of Kafka, Spark or any wire format.
"""

from __future__ import annotations

import decimal
import functools
import math
from typing import Any, NoReturn

import attrs
import sqlglot
from sqlglot import exp
from sqlglot.dialects.mysql import MySQL
from sqlglot.errors import SqlglotError
from sqlglot.tokens import TokenType

from ticdc_sink.errors import SchemaError
from ticdc_sink.gotext import format_float
from ticdc_sink.schema import (
    BINARY_CHARSET,
    CHARSETS,
    DEFAULT_CHARSET,
    DEFAULT_COLLATION,
    ELEMENT_TYPES,
    FLOAT_TYPES,
    INTEGER_TYPES,
    TEMPORAL_FSP_TYPES,
    Column,
    Index,
    MySQLType,
    default_collation,
    primary_key_columns,
    resolve_type,
    sql_quote,
)

__all__ = [
    "ColumnDefinition",
    "ParsedDDL",
    "column_definition_sql",
    "normalize_default",
    "parse_column_definition",
    "parse_mysql_type",
    "parse_table_ddl",
]


# `char(n) CHARACTER SET binary` is `binary(n)`, and so on.
_TEXT_TO_BINARY = {
    "char": "binary",
    "varchar": "varbinary",
    "tinytext": "tinyblob",
    "text": "blob",
    "mediumtext": "mediumblob",
    "longtext": "longblob",
}

_MAX_VARCHAR = 65535


@attrs.frozen
class ParsedDDL:
    """What `parse_table_ddl` reads from a `CREATE TABLE` statement.

    Columns carry resolved charset/collation (column, else table, else utf8mb4 /
    utf8mb4_bin; `binary` for non-string types), primary key columns are NOT NULL, and
    `indexes` are in TiDB's order (table-level keys, then column-level ones).
    """

    database: str | None
    table: str
    columns: tuple[Column, ...]
    indexes: tuple[Index, ...]
    charset: str
    collation: str
    pk_clustered: bool | None = None

    @property
    def primary_key(self) -> tuple[str, ...]:
        """The primary key columns in index order; empty without a primary key."""
        return primary_key_columns(self.indexes)


# --------------------------------------------------------------------------- sqlglot dialect


@functools.cache
def _dialect() -> type[MySQL]:
    """MySQL as sqlglot reads it, with two TiDB/MySQL rules sqlglot lacks: REAL is DOUBLE,
    and `FLOAT UNSIGNED` is legal (deprecated). sqlglot has no unsigned float type, so the
    parser maps it to SMALLMONEY, a type MySQL DDL never yields, and `_BASES` reads it back.
    Built on first use so importing this module registers nothing with sqlglot.
    """

    class _TiDBMySQL(MySQL):
        class Tokenizer(MySQL.Tokenizer):
            KEYWORDS = {**MySQL.Tokenizer.KEYWORDS, "REAL": TokenType.DOUBLE}

        # sqlglot (30) declares a dialect's Parser as a class attribute holding the
        # parser class, which a type checker does not take for a base class.
        class Parser(MySQL.Parser):  # type: ignore[misc,valid-type]
            SIGNED_TO_UNSIGNED_TYPE_TOKEN = {
                **MySQL.Parser.SIGNED_TO_UNSIGNED_TYPE_TOKEN,
                TokenType.FLOAT: TokenType.SMALLMONEY,
            }

    return _TiDBMySQL


_D = exp.DataType.Type
# sqlglot type -> (TiDB base name, unsigned)
_BASES: dict[Any, tuple[str, bool]] = {
    _D.TINYINT: ("tinyint", False),
    _D.UTINYINT: ("tinyint", True),
    _D.SMALLINT: ("smallint", False),
    _D.USMALLINT: ("smallint", True),
    _D.MEDIUMINT: ("mediumint", False),
    _D.UMEDIUMINT: ("mediumint", True),
    _D.INT: ("int", False),
    _D.UINT: ("int", True),
    _D.BIGINT: ("bigint", False),
    _D.UBIGINT: ("bigint", True),
    _D.BOOLEAN: ("tinyint", False),
    _D.FLOAT: ("float", False),
    _D.SMALLMONEY: ("float", True),
    _D.DOUBLE: ("double", False),
    _D.UDOUBLE: ("double", True),
    _D.DECIMAL: ("decimal", False),
    _D.UDECIMAL: ("decimal", True),
    _D.DATE: ("date", False),
    _D.DATETIME: ("datetime", False),
    _D.TIMESTAMP: ("timestamp", False),
    _D.TIMESTAMPTZ: ("timestamp", False),
    _D.TIMESTAMPLTZ: ("timestamp", False),
    _D.TIME: ("time", False),
    _D.YEAR: ("year", False),
    _D.BIT: ("bit", False),
    _D.JSON: ("json", False),
    _D.ENUM: ("enum", False),
    _D.SET: ("set", False),
    _D.CHAR: ("char", False),
    _D.NCHAR: ("char", False),
    _D.VARCHAR: ("varchar", False),
    _D.NVARCHAR: ("varchar", False),
    _D.TINYTEXT: ("tinytext", False),
    _D.TEXT: ("text", False),
    _D.MEDIUMTEXT: ("mediumtext", False),
    _D.LONGTEXT: ("longtext", False),
    _D.BINARY: ("binary", False),
    _D.VARBINARY: ("varbinary", False),
    _D.TINYBLOB: ("tinyblob", False),
    _D.BLOB: ("blob", False),
    _D.MEDIUMBLOB: ("mediumblob", False),
    _D.LONGBLOB: ("longblob", False),
    _D.VECTOR: ("vector", False),
}
_SUPPORTED = (
    "tinyint, smallint, mediumint, int, bigint (unsigned, zerofill), bool, float, double, "
    "decimal(p,s), date, datetime(fsp), timestamp(fsp), time(fsp), year, bit(n), json, "
    "enum(...), set(...), char(n), varchar(n), tinytext..longtext, binary(n), varbinary(n), "
    "tinyblob..longblob, vector(n)"
)


def _parse(sql: str, what: str) -> list[exp.Expr | None]:
    try:
        return sqlglot.parse(_mark_clustered(sql), dialect=_dialect())
    except SqlglotError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SchemaError(f"cannot parse {what}: {first}") from exc


def _mark_clustered(sql: str) -> str:
    """Turn bare `CLUSTERED` / `NONCLUSTERED` keywords (TiDB accepts them after a primary
    key; sqlglot does not) into the `/*T![clustered_index] ... */` comments that
    `SHOW CREATE TABLE` prints, which sqlglot keeps as comments."""
    try:
        tokens = _dialect()().tokenize(sql)
    except SqlglotError:
        return sql  # the parser reports the error with its position
    out, last = [], 0
    for previous, token in zip(tokens, tokens[1:], strict=False):
        if (
            previous.token_type == TokenType.R_PAREN
            and token.token_type == TokenType.VAR
            and token.text.upper() in ("CLUSTERED", "NONCLUSTERED")
        ):
            out.append(sql[last : token.start])
            out.append(f"/*T![clustered_index] {token.text.upper()} */")
            last = token.end + 1
    out.append(sql[last:])
    return "".join(out)


def _int_param(node: exp.Expression, text: str) -> int:
    value = node.this if isinstance(node, exp.DataTypeParam) else node
    if isinstance(value, exp.Literal) and not value.is_string:
        try:
            return int(value.this)
        except ValueError:
            pass
    raise SchemaError(f"MySQL type {text!r}: {value.sql()!r} is not a whole number")


def _check(ok: bool, text: str, problem: str) -> None:
    if not ok:
        _fail(text, problem)


def _fail(text: str, problem: str) -> NoReturn:
    raise SchemaError(f"MySQL type {text!r}: {problem}")


def _type_from_def(coldef: exp.ColumnDef, text: str) -> tuple[MySQLType, list[exp.Expression]]:
    """The MySQLType of a sqlglot column definition, and the constraints that are not part
    of the type (NOT NULL, DEFAULT, keys, ...)."""
    kind = coldef.args.get("kind")
    if not isinstance(kind, exp.DataType):
        raise SchemaError(f"MySQL type {text!r} is missing; supported types: {_SUPPORTED}")
    found = _BASES.get(kind.this)
    if found is None:
        raise SchemaError(
            f"MySQL type {text!r} ({kind.sql(dialect='mysql')}) is not supported; "
            f"supported types: {_SUPPORTED}"
        )
    base, unsigned = found
    zerofill = False
    charset: str | None = None
    collation: str | None = None
    rest: list[exp.Expression] = []
    for constraint in coldef.constraints:
        ckind = constraint.args.get("kind")
        if isinstance(ckind, exp.ZeroFillColumnConstraint):
            zerofill = True
        elif isinstance(ckind, exp.CharacterSetColumnConstraint):
            charset = ckind.this.name.lower()
        elif isinstance(ckind, exp.CollateColumnConstraint):
            collation = ckind.this.name.lower()
        elif isinstance(ckind, exp.BinaryColumnConstraint):
            # `varchar(10) BINARY`: the charset's binary collation (SHOW CREATE TABLE prints
            # an explicit COLLATE instead).
            if collation is None:
                collation = f"{charset or DEFAULT_CHARSET}_bin"
        else:
            rest.append(constraint)
    if zerofill and (base in INTEGER_TYPES or base in FLOAT_TYPES or base == "decimal"):
        unsigned = True  # MySQL: ZEROFILL implies UNSIGNED
    elif zerofill:
        raise SchemaError(f"MySQL type {text!r}: zerofill applies to numeric types only")

    params = list(kind.expressions)
    length: int | None = None
    dec: int | None = None
    elements: tuple[str, ...] = ()
    if base in ELEMENT_TYPES:
        values = []
        for p in params:
            _check(
                isinstance(p, exp.Literal) and p.is_string,
                text,
                f"{base} members must be quoted strings",
            )
            values.append(p.this.rstrip(" "))  # TiDB trims trailing spaces of members
        _check(bool(values), text, f"{base} needs at least one member")
        _check(len(set(values)) == len(values), text, f"{base} members must be distinct")
        if base == "set":
            _check(len(values) <= 64, text, "set has at most 64 members")
            _check(all("," not in v for v in values), text, "set members cannot contain ','")
        elements = tuple(values)
    else:
        ints = [_int_param(p, text) for p in params]
        if kind.this == _D.BOOLEAN:
            _check(not ints, text, "bool takes no length")
            ints = [1]
        if len(ints) > 2 or (len(ints) == 2 and base not in (FLOAT_TYPES | {"decimal"})):
            raise SchemaError(f"MySQL type {text!r}: too many length arguments for {base}")
        if base == "float" and len(ints) == 1:
            # FLOAT(p): p <= 24 is FLOAT, up to 53 DOUBLE; either way the length is unset
            # (TiDB parser, FloatOpt).
            _check(0 <= ints[0] <= 53, text, "float precision must be 0..53")
            base = "float" if ints[0] <= 24 else "double"
            ints = []
        if base in TEMPORAL_FSP_TYPES:
            if ints:
                _check(0 <= ints[0] <= 6, text, "fractional seconds precision must be 0..6")
                dec = ints[0]
        elif ints:
            length = ints[0]
            if len(ints) == 2:
                dec = ints[1]
    _check_lengths(base, length, dec, text)
    if base == "year":
        length = None if length in (None, 4) else length
        _check(length is None, text, "only year(4) is supported")
    if charset == BINARY_CHARSET and base in _TEXT_TO_BINARY:
        base = _TEXT_TO_BINARY[base]
    if kind.this in (_D.NCHAR, _D.NVARCHAR) and charset is None:
        charset = "utf8"
    if charset is not None and charset not in CHARSETS:
        raise SchemaError(
            f"MySQL type {text!r}: unknown character set {charset!r}; use one of "
            f"{', '.join(CHARSETS)}"
        )
    if charset is None and collation is not None:
        charset = collation.split("_", 1)[0]
        if charset not in CHARSETS:
            raise SchemaError(f"MySQL type {text!r}: unknown collation {collation!r}")
    elif charset is not None and collation is not None:
        _check(
            collation.split("_", 1)[0] == charset.replace("utf8mb3", "utf8")
            or charset == collation,
            text,
            f"collation {collation} does not belong to character set {charset}",
        )
    mysql_type = MySQLType(
        base=base,
        length=length,
        decimal=dec,
        unsigned=unsigned,
        zerofill=zerofill,
        elements=elements,
        charset=charset,
        collation=collation,
    )
    return mysql_type, rest


def _check_lengths(base: str, length: int | None, dec: int | None, text: str) -> None:
    if base in INTEGER_TYPES and length is not None:
        _check(1 <= length <= 255, text, "display width must be 1..255")
    elif base == "decimal":
        if length is not None:
            _check(1 <= length <= 65, text, "decimal precision must be 1..65")
        if dec is not None:
            _check(0 <= dec <= 30, text, "decimal scale must be 0..30")
            _check(dec <= (length or 10), text, "decimal scale cannot exceed the precision")
    elif base in FLOAT_TYPES and length is not None:
        _check(1 <= length <= 255, text, f"{base} length must be 1..255")
        if dec is None or not 0 <= dec <= 30:
            _fail(text, f"{base} scale must be 0..30")
        _check(dec <= length, text, f"{base} scale cannot exceed the length")
    elif base == "bit" and length is not None:
        _check(1 <= length <= 64, text, "bit length must be 1..64")
    elif base in ("char", "binary") and length is not None:
        _check(0 <= length <= 255, text, f"{base} length must be 0..255")
    elif base in ("varchar", "varbinary"):
        if length is None:
            _fail(text, f"{base} needs a length, e.g. {base}(255)")
        _check(0 <= length <= _MAX_VARCHAR, text, f"{base} length must be 0..65535")
    elif base == "vector" and length is not None:
        _check(1 <= length <= 16383, text, "vector dimension must be 1..16383")


def _column_type(text: str) -> tuple[MySQLType, list[exp.Expression]]:
    """The type of a column definition without its name (`text`), and the clauses after
    it (NOT NULL, DEFAULT, ...), as sqlglot reads them.

    Raises:
        SchemaError: the text is empty, or not one column definition (names the text).
    """
    if not isinstance(text, str) or not text.strip():
        raise SchemaError(f"MySQL type {text!r} is empty; supported types: {_SUPPORTED}")
    statements = _parse(f"CREATE TABLE _t (_c {text})", f"MySQL type {text!r}")
    stmt = statements[0] if len(statements) == 1 else None
    schema = stmt.this if isinstance(stmt, exp.Create) else None
    defs = schema.expressions if isinstance(schema, exp.Schema) else []
    if len(defs) != 1 or not isinstance(defs[0], exp.ColumnDef):
        raise SchemaError(f"MySQL type {text!r} is not a single column type")
    return _type_from_def(defs[0], text)


def parse_mysql_type(text: str) -> MySQLType:
    """Read a MySQL column type as a user or `SHOW CREATE TABLE` writes it.

    Accepts `int unsigned`, `int(11) unsigned zerofill`, `decimal(10,2)`, `varchar(20)`,
    `varchar(20) CHARACTER SET latin1 COLLATE latin1_bin`, `enum('a','b')`, `set('a','b')`,
    `datetime(3)`, `bit(5)`, `tinyint(1)`, `bool`, `binary(4)`, `json`, ...; synonyms
    (integer, numeric, real, ...) become TiDB's names, `char(n) CHARACTER SET binary`
    becomes `binary(n)`.

    Raises:
        SchemaError: the text is not one MySQL column type (names the text).
    """
    mysql_type, rest = _column_type(text)
    if rest:
        extra = " ".join(c.sql(dialect="mysql") for c in rest)
        raise SchemaError(
            f"MySQL type {text!r} has {extra!r}, which is not part of a type; give only "
            "the type (nullability, defaults and keys go in table-ddl or primary-key)"
        )
    return mysql_type


@attrs.frozen
class ColumnDefinition:
    """A column as `mysql_type` metadata and `column-types` state it: the type, NOT NULL,
    and the default (TiDB's `DefaultValue` string, see `Column`; None: no default)."""

    type: MySQLType
    nullable: bool = True
    default: str | None = None


def parse_column_definition(text: str) -> ColumnDefinition:
    """Read a column definition without its name, as `SHOW CREATE TABLE` prints one:
    a type (`parse_mysql_type`), then optionally `NOT NULL` (or `NULL`) and `DEFAULT
    <literal>`: `varchar(20) NOT NULL DEFAULT 'x'`, `int unsigned`,
    `datetime(3) DEFAULT CURRENT_TIMESTAMP(3)`. `column_definition_sql` writes it.

    Raises:
        SchemaError: the text is not such a definition (names the text); keys and other
            clauses are refused (they go in primary-key or table-ddl).
    """
    mysql_type, rest = _column_type(text)
    nullable, default, extra = True, None, []
    for constraint in rest:
        kind = constraint.args.get("kind")
        if isinstance(kind, exp.NotNullColumnConstraint):
            nullable = bool(kind.args.get("allow_null"))
        elif isinstance(kind, exp.DefaultColumnConstraint):
            default = _default_value(kind.this, mysql_type, "_c")
        else:
            extra.append(constraint)
    if extra:
        clauses = " ".join(c.sql(dialect="mysql") for c in extra)
        raise SchemaError(
            f"MySQL type {text!r} has {clauses!r}, which is not part of a column type; give "
            "the type, NOT NULL and DEFAULT only (keys go in primary-key or table-ddl)"
        )
    return ColumnDefinition(mysql_type, nullable, default)


def column_definition_sql(column: Column) -> str:
    """The column's definition without its name, as `parse_column_definition` reads it
    back into the same column (type, NOT NULL, default): the type as `SHOW CREATE TABLE`
    prints it, its charset and collation left out where they are the ones a table
    without `table-ddl` gets (utf8mb4, utf8mb4_bin; a charset's default collation)."""
    t = column.type
    if t.charset in (None, BINARY_CHARSET) or (
        t.charset == DEFAULT_CHARSET and t.collation in (None, DEFAULT_COLLATION)
    ):
        t = attrs.evolve(t, charset=None, collation=None)
    elif t.collation in (None, default_collation(t.charset)):
        t = attrs.evolve(t, collation=None)
    text = t.to_sql()
    if not column.nullable:
        text += " NOT NULL"
    if column.default is not None:
        text += " DEFAULT " + _default_sql(column.default, t)
    return text


def normalize_default(default: str | None, t: MySQLType) -> str | None:
    """A default as a column of type `t` holds it when written `DEFAULT '<default>'`
    (`parse_column_definition`): numbers in their canonical form (a DECIMAL with exactly
    its scale), other text as it is. Decoders of protocols that carry a default in
    another form use it, so that the column they state is the one a write derives."""
    if default is None:
        return None
    try:
        return _default_value(exp.Literal.string(default), t, "_c")
    except SchemaError:
        return default  # not a number: an expression default, kept as its text


def _default_sql(default: str, t: MySQLType) -> str:
    """A default (`Column.default`) as the literal `_default_value` reads back: quoted, as
    `SHOW CREATE TABLE` prints even numbers (`DEFAULT '5'`), but CURRENT_TIMESTAMP, a BIT
    value (`b'101'`) and an expression default of a numeric column."""
    if default == "CURRENT_TIMESTAMP" and t.base in ("datetime", "timestamp"):
        return f"CURRENT_TIMESTAMP({t.fsp})" if t.fsp else default
    if t.base == "bit" and default.isdigit():
        return f"b'{int(default):b}'"
    if t.is_integer or t.base in FLOAT_TYPES or t.base in ("decimal", "year", "bit"):
        try:
            decimal.Decimal(default)
        except decimal.InvalidOperation:
            return default  # an expression default, kept as its SQL text
    return sql_quote(default)


def _go_float(value: float, single: bool) -> str:
    """The DEFAULT text of a FLOAT (`single`) or DOUBLE: Go `strconv.FormatFloat(v, 'f',
    -1, 32|64)`, with negative zero written "0"."""
    if math.isinf(value):  # a literal beyond DOUBLE (TiDB refuses it): Python's text
        return "Infinity" if value > 0 else "-Infinity"
    text = format_float(value, 32 if single else 64)
    return "0" if text == "-0" else text


def _literal_text(node: exp.Expression) -> tuple[str, bool] | None:
    """(text, is_string) of a literal default, `-5` included; None for other nodes."""
    if isinstance(node, exp.Paren):
        return _literal_text(node.this)
    if isinstance(node, exp.Literal):
        return str(node.this), bool(node.is_string)
    if isinstance(node, exp.Neg):
        inner = _literal_text(node.this)
        if inner is not None and not inner[1]:
            return "-" + inner[0], False
    if isinstance(node, exp.Boolean):
        return ("1" if node.this else "0"), False
    return None


_NOW_FUNCTIONS = frozenset({"NOW", "CURRENT_TIMESTAMP", "LOCALTIME", "LOCALTIMESTAMP"})


def _default_value(node: exp.Expression, t: MySQLType, column: str) -> str | None:
    """TiDB's `DefaultValue` string for a DEFAULT clause (see `Column`)."""
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.CurrentTimestamp | exp.Localtimestamp) or (
        isinstance(node, exp.Anonymous) and str(node.this).upper() in _NOW_FUNCTIONS
    ):
        return "CURRENT_TIMESTAMP"
    if t.base == "bit":
        if isinstance(node, exp.BitString):
            return str(int(str(node.this) or "0", 2))
        if isinstance(node, exp.HexString):
            return str(int(str(node.this) or "0", 16))
    literal = _literal_text(node)
    if literal is None:
        return node.sql(dialect="mysql")  # an expression default, e.g. (rand())
    text, _ = literal
    if t.is_integer or t.base in ("decimal", "bit", "year") or t.base in FLOAT_TYPES:
        try:
            number = decimal.Decimal(text.strip())
        except decimal.InvalidOperation:
            raise SchemaError(
                f"column {column}: DEFAULT {text!r} is not a number for type {t.to_sql()}",
                column=column,
            ) from None
        if t.base == "decimal":
            quantum = decimal.Decimal(1).scaleb(-t.scale)
            # DECIMAL(65,30) needs more digits than the default context's 28.
            context = decimal.Context(prec=100, rounding=decimal.ROUND_HALF_UP)
            return format(number.quantize(quantum, context=context), "f")
        if t.base in FLOAT_TYPES:
            return _go_float(float(number), single=t.base == "float")
        return str(int(number.to_integral_value(rounding=decimal.ROUND_HALF_UP)))
    return text


def _index_columns(node: exp.Expression) -> list[str] | None:
    """Column names of a key part list; None if a part is an expression."""
    names = []
    for part in node.expressions:
        if isinstance(part, exp.Ordered):
            part = part.this
        if isinstance(part, exp.ColumnPrefix):
            part = part.this
        if isinstance(part, exp.Identifier | exp.Column):
            names.append(part.name)
        else:
            return None
    return names


class _IndexBuilder:
    """Collects indexes in TiDB order and names unnamed ones after their first column
    (`name`, `name_2`, ...) as TiDB does."""

    def __init__(self, columns: list[str]) -> None:
        # Key parts name columns in any case; the index keeps the column's own spelling,
        # as TiDB's buildIndexColumns takes the name from the column it found.
        self.columns = {name.lower(): name for name in columns}
        self.indexes: list[Index] = []

    def add(self, name: str | None, cols: list[str], *, unique: bool, primary: bool) -> None:
        missing = [c for c in cols if c.lower() not in self.columns]
        if missing:
            raise SchemaError(
                f"table-ddl: key {name or cols[0]!r} names unknown column(s) {', '.join(missing)}",
                column=missing[0],
            )
        cols = [self.columns[c.lower()] for c in cols]
        if len(set(cols)) != len(cols):
            raise SchemaError(f"table-ddl: key {name or cols[0]!r} repeats a column")
        if primary:
            if any(i.primary for i in self.indexes):
                raise SchemaError("table-ddl: more than one PRIMARY KEY")
            self.indexes.append(Index("PRIMARY", tuple(cols), unique=True, primary=True))
            return
        taken = {i.name.lower() for i in self.indexes}
        if name is None:
            name, n = cols[0], 2
            while name.lower() in taken:
                name, n = f"{cols[0]}_{n}", n + 1
        elif name.lower() in taken:
            raise SchemaError(f"table-ddl: duplicate key name {name!r}")
        self.indexes.append(Index(name, tuple(cols), unique=unique, primary=False))


def _clustered_marker(stmt: exp.Expression) -> bool | None:
    for node in stmt.walk():
        for comment in node.comments or ():
            text = comment.upper()
            if "CLUSTERED_INDEX" in text or text.strip() in ("CLUSTERED", "NONCLUSTERED"):
                if "NONCLUSTERED" in text:
                    return False
                if "CLUSTERED" in text.replace("CLUSTERED_INDEX", ""):
                    return True
    return None


def parse_table_ddl(ddl: str) -> ParsedDDL:
    """Read a `CREATE TABLE` statement as `SHOW CREATE TABLE` prints it (MySQL or TiDB).

    Reads columns with types, NOT NULL, DEFAULT, charset/collation (column, then table
    options `DEFAULT CHARSET=` / `COLLATE=`, then utf8mb4/utf8mb4_bin), PRIMARY KEY (inline
    or table-level, with TiDB's `/*T![clustered_index] ... */`), UNIQUE KEYs and KEYs with
    their names, and the database/table names. Ignored: AUTO_INCREMENT, ON UPDATE,
    COMMENT, foreign keys, checks, FULLTEXT keys, non-unique expression indexes, table
    options and partitioning.

    Raises:
        SchemaError: not one CREATE TABLE with columns, an unsupported type, a virtual
            generated column, a unique expression index, a key naming an unknown column.
    """
    if not isinstance(ddl, str) or not ddl.strip():
        raise SchemaError("table-ddl is empty; give a CREATE TABLE statement")
    statements = [s for s in _parse(ddl, "table-ddl") if s is not None]
    if len(statements) != 1:
        raise SchemaError(
            f"table-ddl holds {len(statements)} statements; give exactly one CREATE TABLE"
        )
    stmt = statements[0]
    if not isinstance(stmt, exp.Create) or str(stmt.args.get("kind", "")).upper() != "TABLE":
        raise SchemaError(
            f"table-ddl is a {stmt.key.upper()} statement; give a CREATE TABLE statement as "
            "SHOW CREATE TABLE prints it"
        )
    schema = stmt.this
    if not isinstance(schema, exp.Schema) or not isinstance(schema.this, exp.Table):
        raise SchemaError(
            "table-ddl has no column list (CREATE TABLE ... LIKE / AS SELECT); give the "
            "statement SHOW CREATE TABLE prints"
        )
    table = schema.this.name
    database = schema.this.db or None

    table_charset: str | None = None
    table_collation: str | None = None
    properties = stmt.args.get("properties")
    for prop in properties.expressions if properties else ():
        if isinstance(prop, exp.CharacterSetProperty):
            table_charset = prop.this.name.lower()
        elif isinstance(prop, exp.CollateProperty):
            table_collation = prop.this.name.lower()
    if table_charset is None and table_collation is not None:
        table_charset = table_collation.split("_", 1)[0]
    table_charset = table_charset or DEFAULT_CHARSET
    if table_charset not in CHARSETS:
        raise SchemaError(
            f"table-ddl: unknown table character set {table_charset!r}; use one of "
            f"{', '.join(CHARSETS)}"
        )
    table_collation = table_collation or CHARSETS[table_charset][0]

    defs = [e for e in schema.expressions if isinstance(e, exp.ColumnDef)]
    if not defs:
        raise SchemaError(f"table-ddl: table {table} has no columns")
    names = [d.name for d in defs]
    seen: set[str] = set()
    for name in names:
        if name.lower() in seen:
            raise SchemaError(f"table-ddl: column {name!r} is defined twice", column=name)
        seen.add(name.lower())
    keys = _IndexBuilder(names)

    # Table-level keys come first, then column-level ones (TiDB
    # `buildColumnsAndConstraints` appends column constraints after the table's).
    for node in schema.expressions:
        if isinstance(node, exp.ColumnDef):
            continue
        if isinstance(node, exp.PrimaryKey):
            keys.add(None, _index_columns(node) or [], unique=True, primary=True)
        elif isinstance(node, exp.UniqueColumnConstraint):
            target = node.this
            cols = _index_columns(target) if isinstance(target, exp.Schema) else None
            key_name = target.this.name if isinstance(target, exp.Schema) and target.this else None
            if cols is None:
                raise SchemaError(
                    f"table-ddl: unique key {key_name or ''} on an expression is not "
                    "supported; drop it from table-ddl or use a column key"
                )
            keys.add(key_name, cols, unique=True, primary=False)
        elif isinstance(node, exp.IndexColumnConstraint):
            if str(node.args.get("kind") or "").upper() in ("FULLTEXT", "SPATIAL"):
                continue
            cols = _index_columns(node)
            if cols is None:
                continue  # expression index: a hidden virtual column in TiDB; no key
            key_name = node.this.name if node.this else None
            keys.add(key_name, cols, unique=False, primary=False)
        # foreign keys, checks and other constraints do not matter to the protocols

    columns: list[Column] = []
    not_null: set[str] = set()
    for position, coldef in enumerate(defs):
        name = coldef.name
        kind = coldef.args.get("kind")
        if not isinstance(kind, exp.DataType):
            raise SchemaError(f"table-ddl: column {name} has no type", column=name)
        try:
            # sqlglot prints a VARCHAR without length as TEXT; name it as written
            shown = kind.this.value.lower() if not kind.expressions else kind.sql("mysql")
            col_type, rest = _type_from_def(coldef, shown.lower())
        except SchemaError as exc:
            raise SchemaError(f"table-ddl: column {name}: {exc.message}", column=name) from exc
        col_type = resolve_type(col_type, table_charset, table_collation)
        nullable = True
        default: str | None = None
        for constraint in rest:
            kind = constraint.args.get("kind")
            if isinstance(kind, exp.NotNullColumnConstraint):
                nullable = bool(kind.args.get("allow_null"))
            elif isinstance(kind, exp.DefaultColumnConstraint):
                default = _default_value(kind.this, col_type, name)
            elif isinstance(kind, exp.PrimaryKeyColumnConstraint):
                keys.add(None, [name], unique=True, primary=True)
            elif isinstance(kind, exp.UniqueColumnConstraint):
                keys.add(None, [name], unique=True, primary=False)
            elif isinstance(kind, exp.ComputedColumnConstraint) and not kind.args.get("persisted"):
                raise SchemaError(
                    f"table-ddl: column {name} is a VIRTUAL generated column, which is not "
                    "supported; make it STORED or drop it from table-ddl",
                    column=name,
                )
        if not nullable:
            not_null.add(name)
        columns.append(
            Column(name, col_type, nullable=nullable, default=default, column_id=position + 1)
        )
    pk = next((i.columns for i in keys.indexes if i.primary), ())
    columns = [attrs.evolve(c, nullable=False) if c.name in pk else c for c in columns]
    return ParsedDDL(
        database=database,
        table=table,
        columns=tuple(columns),
        indexes=tuple(keys.indexes),
        charset=table_charset,
        collation=table_collation,
        pk_clustered=_clustered_marker(stmt) if pk else None,
    )
