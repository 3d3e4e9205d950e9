"""TiDB's table filter and column filter (pingcap/tidb `pkg/util/table-filter`), which
TiCDC uses for `[filter] rules`, event-filter and dispatcher matchers, and column
selectors: the pattern syntax parsed as TiDB's `parser.go` parses it, matched as its
`matchers.go` matches, and refused where TiDB refuses it, with TiDB's reason.

A table pattern is `schema.table`, a column pattern one name. Each part is one of:

    wildcard   letters, digits, `_`, `$`, non-ASCII characters; `*` any run, `?` any one
               character, `[a-z]` a class, `[!a-z]` its complement (`[^a-z]` is a class
               of ^ and a-z); `\\` escapes a character that is not a letter or digit
    "quoted"   a literal name (`""` for a quote); also `quoted` in backquotes
    /regex/    a Go regular expression, matched anywhere in the name (`goregex`)

A leading `!` excludes; blank patterns and `#` comments are skipped. Of the patterns that
match a table, the last decides; none: not taken. A table filter compares names exactly
unless made case-insensitive (TiDB's `CaseInsensitive`: literal parts and names lowered
with Go's `strings.ToLower`, regexes under `(?i)`); a column filter always ignores case.

TiDB reads `@file` as the patterns of a file; this sink reads no filter files and
refuses it. Errors are ConfigErrors naming the option, the pattern, TiDB's reason and
the character it found it at. Knows nothing of rows, routing or Kafka.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, NamedTuple

from ticdc_sink.errors import ConfigError
from ticdc_sink.goregex import GoRegexError, translate
from ticdc_sink.gotext import go_lower

__all__ = ["ColumnFilter", "TableFilter", "split_patterns"]

# parser.go: the quoted forms and a wildcard's character class (Go's leftmost-first
# matching; `re` finds the same spans for these expressions).
_REGEXP = re.compile(r"/(?:\\.|[^/])+/")
_DOUBLE_QUOTED = re.compile(r'"(?:""|[^"])+"')
_BACKQUOTED = re.compile(r"`(?:``|[^`])+`")
_WILDCARD_RANGE = re.compile(r"\[!?(?:\\[^0-9a-zA-Z]|[^\\\]])+\]")
_ANY = "(?s)^.*$"  # the regexp of `*`: TiDB's trueMatcher

_TABLE_HINT = (
    "write schema.table in TiDB's table-filter syntax, e.g. db.*, db.t_[0-9], !db.tmp_*, "
    "/^db[0-9]+$/.*, `my.db`.t"
)
_COLUMN_HINT = (
    "write a column name in TiDB's column-filter syntax, e.g. id, amount*, !secret, "
    "/^c_[0-9]+$/, a\\.b for a dot"
)


class _PatternError(Exception):
    """A pattern TiDB refuses: TiDB's reason and the 0-based character where found."""

    def __init__(self, reason: str, position: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.position = position


class _Part:
    """One name matcher (TiDB's `stringMatcher`, `trueMatcher` or `regexpMatcher`): a
    literal name, any name, or a regexp as Go's text (kept to fold it later)."""

    __slots__ = ("literal", "go_regex", "regex")

    def __init__(self, literal: str | None = None, go_regex: str | None = None) -> None:
        self.literal = literal
        self.go_regex = go_regex
        self.regex = None if go_regex is None else re.compile(translate(go_regex))

    @property
    def matches_all(self) -> bool:
        return self.literal is None and self.go_regex is None

    def lowered(self) -> _Part:
        """TiDB's `toLower`: a literal lowered, a regexp under `(?i)`."""
        if self.literal is not None:
            return _Part(literal=go_lower(self.literal))
        if self.go_regex is not None:
            return _Part(go_regex="(?i)" + self.go_regex)
        return self

    def matches(self, name: str) -> bool:
        if self.literal is not None:
            return name == self.literal
        if self.regex is not None:
            return self.regex.search(name) is not None
        return True


class _Rule(NamedTuple):
    positive: bool
    parts: tuple[_Part, ...]  # (schema, table) or (column,)


def _parse_rule(raw: str, *, table: bool) -> _Rule | None:
    """parser.go `tableRulesParser.parse` / `columnRulesParser.parse` of one pattern;
    None for a blank one or a comment.

    Raises:
        _PatternError: TiDB refuses it, or it imports a file.
    """
    text = raw.strip(" \t")
    base = len(raw) - len(raw.lstrip(" \t"))
    if not text or text[0] == "#":
        return None
    positive = text[0] != "!"
    if text[0] == "@":
        raise _PatternError(
            "imports a filter file (@file), which this sink does not read; list its "
            "patterns instead",
            base,
        )
    try:
        pos = 0 if positive else 1
        first, pos = _parse_part(text, pos, dot_ends=table)
        if not table:
            if pos != len(text):
                raise _PatternError("syntax error: stray characters after column pattern", pos)
            return _Rule(positive, (first.lowered(),))
        if pos == len(text):
            raise _PatternError("wrong table pattern", pos)
        if text[pos] != ".":
            raise _PatternError("syntax error: missing '.' between schema and table patterns", pos)
        second, pos = _parse_part(text, pos + 1, dot_ends=True)
        if pos != len(text):
            raise _PatternError("syntax error: stray characters after table pattern", pos)
        return _Rule(positive, (first, second))
    except _PatternError as exc:
        raise _PatternError(exc.reason, base + exc.position) from None


def _parse_part(text: str, pos: int, *, dot_ends: bool) -> tuple[_Part, int]:
    """parser.go `parsePattern` at `pos`: the matcher and where the text after it starts."""
    if pos == len(text):
        raise _PatternError("syntax error: missing pattern", pos)
    head = text[pos]
    if head == "/":
        found = _REGEXP.match(text, pos)
        if found is None:
            raise _PatternError("syntax error: incomplete regexp", pos)
        return _regexp_part(text[pos + 1 : found.end() - 1], pos + 1), found.end()
    if head in '"`':
        found = (_DOUBLE_QUOTED if head == '"' else _BACKQUOTED).match(text, pos)
        if found is None:
            raise _PatternError("syntax error: incomplete quoted identifier", pos)
        name = text[pos + 1 : found.end() - 1].replace(head * 2, head)
        return _Part(literal=name), found.end()
    return _wildcard_part(text, pos, dot_ends=dot_ends)


def _wildcard_part(text: str, pos: int, *, dot_ends: bool) -> tuple[_Part, int]:
    """parser.go `parseWildcardPattern`: a literal name, or TiDB's regexp of the
    wildcard (`(?s)^...$`, character classes copied as written), compiled as Go would."""
    literal: list[str] = []
    pieces = ["(?s)^"]
    origins = [(0, pos)]  # (offset in the regexp, offset in `text`), for errors
    is_literal = True
    start = pos
    while pos < len(text):
        origins.append((sum(map(len, pieces)), pos))
        char = text[pos]
        if char == "\\":
            if pos == len(text) - 1:
                raise _PatternError("syntax error: cannot place \\ at end of line", pos)
            escaped = text[pos + 1]
            if escaped.isascii() and escaped.isalnum():
                raise _PatternError(
                    f"cannot escape a letter or number (\\{escaped}), it is reserved for "
                    "future extension",
                    pos,
                )
            literal.append(escaped)
            pieces.append(("\\" if escaped.isascii() else "") + escaped)
            pos += 2
        elif char == ".":
            if dot_ends:
                break  # the schema / table separator
            raise _PatternError(f"unexpected special character '{char}'", pos)
        elif char == "*":
            is_literal = False
            pieces.append(".*")
            pos += 1
        elif char == "?":
            is_literal = False
            pieces.append(".")
            pos += 1
        elif char == "[":
            is_literal = False
            found = _WILDCARD_RANGE.match(text, pos)
            if found is None:
                raise _PatternError("syntax error: failed to parse character class", pos)
            end = found.end()
            if text[pos + 1] == "!":
                pieces.append("[^" + text[pos + 2 : end])
            elif text[pos + 1] == "^":  # `[^` is not special in a glob: escape it
                pieces.append("[\\^" + text[pos + 2 : end])
            else:
                pieces.append(text[pos:end])
            pos = end
        elif char in "$_" or (char.isascii() and char.isalnum()) or not char.isascii():
            literal.append(char)
            pieces.append(char)
            pos += 1
        else:
            raise _PatternError(f"unexpected special character '{char}'", pos)
    if is_literal:
        return _Part(literal="".join(literal)), pos
    pieces.append("$")
    go_regex = "".join(pieces)
    if go_regex == _ANY:
        return _Part(), pos
    try:
        return _Part(go_regex=go_regex), pos
    except GoRegexError as exc:
        where = max((source for offset, source in origins if offset <= exc.position), default=start)
        raise _PatternError(f"invalid pattern: error parsing regexp: {exc.reason}", where) from None


def _regexp_part(go_regex: str, offset: int) -> _Part:
    try:
        return _Part(go_regex=go_regex)
    except GoRegexError as exc:
        raise _PatternError(
            f"invalid pattern: error parsing regexp: {exc.reason}", offset + exc.position
        ) from None


def _parse_rules(
    patterns: Sequence[str], *, table: bool, option: str, label: str
) -> tuple[_Rule, ...]:
    """Every pattern parsed, last first (TiDB reverses the list: the first match decides).

    Raises:
        ConfigError: naming the option, the pattern, TiDB's reason and the position.
    """
    rules = []
    for number, raw in enumerate(patterns, 1):
        if not isinstance(raw, str):
            raise ConfigError(
                f"{label} pattern {number} is {raw!r}, not text; "
                + (_TABLE_HINT if table else _COLUMN_HINT),
                option=option,
                value=repr(raw),
            )
        try:
            rule = _parse_rule(raw, table=table)
        except _PatternError as exc:
            raise ConfigError(
                f"{label} pattern {number} {raw!r}: {exc.reason} at character "
                f"{exc.position + 1}; {_TABLE_HINT if table else _COLUMN_HINT}",
                option=option,
                value=raw,
            ) from None
        if rule is not None:
            rules.append(rule)
    return tuple(reversed(rules))


class TableFilter:
    """TiDB's table filter (`filter.Parse`, and `filter.CaseInsensitive` unless
    `case_sensitive`) over `patterns`. `label` names the patterns in errors (`option
    'filter-rules'`, `dispatchers rule 2 matcher`); `option` is the option to fix.

    Raises:
        ConfigError: a pattern TiDB refuses, or an `@file` import.
    """

    __slots__ = ("case_sensitive", "label", "option", "patterns", "_rules")

    def __init__(
        self,
        patterns: Sequence[str],
        *,
        case_sensitive: bool = False,
        option: str = "dispatchers",
        label: str = "dispatchers matcher",
    ) -> None:
        self.patterns = tuple(patterns)
        self.case_sensitive = case_sensitive
        self.option = option
        self.label = label
        rules = _parse_rules(self.patterns, table=True, option=option, label=label)
        if not case_sensitive:
            rules = tuple(_Rule(r.positive, tuple(p.lowered() for p in r.parts)) for r in rules)
        self._rules = rules

    @property
    def is_empty(self) -> bool:
        """No pattern but blanks and comments: the filter takes no table."""
        return not self._rules

    def matches(self, database: str, table: str) -> bool:
        """TiDB's `MatchTable` (names lowered first when case-insensitive)."""
        if not self.case_sensitive:
            database, table = go_lower(database), go_lower(table)
        for positive, (schema_part, table_part) in self._rules:
            if schema_part.matches(database) and table_part.matches(table):
                return positive
        return False

    def __reduce__(self) -> tuple[Any, ...]:
        return (_table_filter, (self.patterns, self.case_sensitive, self.option, self.label))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TableFilter):
            return NotImplemented
        return (self.patterns, self.case_sensitive) == (other.patterns, other.case_sensitive)

    def __hash__(self) -> int:
        return hash((self.patterns, self.case_sensitive))

    def __repr__(self) -> str:
        return f"TableFilter({list(self.patterns)!r})"


def _table_filter(
    patterns: tuple[str, ...], case_sensitive: bool, option: str, label: str
) -> TableFilter:
    return TableFilter(patterns, case_sensitive=case_sensitive, option=option, label=label)


class ColumnFilter:
    """TiDB's column filter (`ParseColumnFilter`): names in any case, always.

    Raises:
        ConfigError: a pattern TiDB refuses, or an `@file` import.
    """

    __slots__ = ("label", "option", "patterns", "_rules")

    def __init__(
        self, patterns: Sequence[str], *, option: str = "column-selectors", label: str
    ) -> None:
        self.patterns = tuple(patterns)
        self.option = option
        self.label = label
        self._rules = _parse_rules(self.patterns, table=False, option=option, label=label)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_column_filter, (self.patterns, self.option, self.label))

    def matches(self, column: str) -> bool:
        """TiDB's `MatchColumn`."""
        name = go_lower(column)
        for positive, (part,) in self._rules:
            if part.matches(name):
                return positive
        return False

    def __repr__(self) -> str:
        return f"ColumnFilter({list(self.patterns)!r})"


def _column_filter(patterns: tuple[str, ...], option: str, label: str) -> ColumnFilter:
    return ColumnFilter(patterns, option=option, label=label)


def split_patterns(text: str) -> list[str]:
    """A comma-separated list of patterns, split at the commas outside a regexp, quotes
    and character classes (`/a{1,2}/.t`, `` `a,b`.t ``, `db.[,;]` hold one each)."""
    parts: list[str] = []
    current: list[str] = []
    closing = ""  # the character that ends the construct we are in, if any
    escaped = False
    for char in text:
        if escaped:
            escaped = False
        elif char == "\\" and closing in ("", "/", "]"):
            escaped = True
        elif closing:
            if char == closing:
                closing = ""
        elif char in '/`"[':
            closing = "]" if char == "[" else char
        elif char == ",":
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return parts
