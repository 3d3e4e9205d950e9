"""TiDB's table and column filters: TiDB's own test vectors (tests/golden/table_filter,
SOURCE.md there), the errors this sink gives, and properties of the wildcard matcher
against an independent glob matcher."""

from __future__ import annotations

import json
import pickle
import re
from functools import cache
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support import paths
from ticdc_sink.errors import ConfigError
from ticdc_sink.gotext import go_lower
from ticdc_sink.table_filter import ColumnFilter, TableFilter, split_patterns

GOLDEN = paths.GOLDEN / "table_filter"
TABLES = json.loads((GOLDEN / "table_filter.json").read_text())
COLUMNS = json.loads((GOLDEN / "column_filter.json").read_text())


@pytest.mark.parametrize("case", TABLES["match_tables"], ids=lambda c: repr(c["args"]))
def test_tidb_match_tables(case: dict[str, Any]) -> None:
    exact = TableFilter(case["args"], case_sensitive=True)
    folded = TableFilter(case["args"])
    for row in case["tables"]:
        name = (row["schema"], row["table"])
        assert exact.matches(*name) is row["case_sensitive"], name
        assert folded.matches(*name) is row["case_insensitive"], name


@pytest.mark.parametrize("case", TABLES["parse_failures"], ids=lambda c: c["arg"])
def test_tidb_table_parse_failures(case: dict[str, str]) -> None:
    with pytest.raises(ConfigError) as caught:
        TableFilter([case["arg"]], option="filter-rules", label="option 'filter-rules'")
    assert re.search(case["message"], caught.value.message), caught.value.message
    assert caught.value.option == "filter-rules"
    assert caught.value.value == case["arg"]


@pytest.mark.parametrize("case", COLUMNS["match_columns"], ids=lambda c: repr(c["args"]))
def test_tidb_match_columns(case: dict[str, Any]) -> None:
    columns = ColumnFilter(case["args"], label="columns")
    for row in case["columns"]:
        assert columns.matches(row["column"]) is row["accepted"], row["column"]


@pytest.mark.parametrize("case", COLUMNS["parse_failures"], ids=lambda c: c["arg"])
def test_tidb_column_parse_failures(case: dict[str, str]) -> None:
    with pytest.raises(ConfigError) as caught:
        ColumnFilter([case["arg"]], label="column-selectors entry 1 columns")
    assert re.search(case["message"], caught.value.message), caught.value.message
    assert caught.value.option == "column-selectors"


# -- what issue 23 found, and the errors this sink adds ---------------------------------------


def test_the_regex_form_matches_as_in_tidb() -> None:
    # Before: `/^d[a-z]$/.t` was taken as literal text, so db.t was filtered out.
    tables = TableFilter(["/^d[a-z]$/.t"])
    assert tables.matches("db", "t")
    assert tables.matches("DB", "T")  # case-insensitive: (?i) and lowered names
    assert not tables.matches("dbx", "t")
    assert not tables.matches("db", "t2")  # a wildcard part is anchored
    assert TableFilter(["/b/.*"]).matches("abc", "x")  # a regexp is not: Go's MatchString


def test_an_error_names_the_option_the_pattern_and_the_position() -> None:
    with pytest.raises(ConfigError) as caught:
        TableFilter(["db.*", "db.[t"], option="filter-rules", label="option 'filter-rules'")
    message = caught.value.message
    assert message.startswith(
        "option 'filter-rules' pattern 2 'db.[t': syntax error: failed to parse character "
        "class at character 4; write schema.table"
    )
    with pytest.raises(ConfigError, match=r"pattern 1 '  /a\(/.t': .*missing closing \) at "):
        TableFilter(["  /a(/.t"])


@pytest.mark.parametrize(
    ("pattern", "reason", "position"),
    [
        ("/^t(?=x)/.*", "invalid or unsupported Perl syntax", 4),
        ("/a**/.t", "invalid nested repetition operator", 4),
        ("/\\pL/.t", "Unicode class \\p is not supported here", 2),
        ("db./t{1001}/", "invalid repeat count {1001}", 6),
        ("db.t[z-a]", "invalid character class range z-a", 5),
        ("db.[[:foo:]x", "invalid character class range [:foo:]", 4),
        ("db.t\\", "cannot place \\ at end of line", 5),
    ],
)
def test_regexp_errors_point_at_the_construct(pattern: str, reason: str, position: int) -> None:
    with pytest.raises(ConfigError) as caught:
        TableFilter([pattern])
    assert f"{reason}" in caught.value.message
    assert f"at character {position};" in caught.value.message


def test_a_dollar_after_a_wildcard_ends_the_name() -> None:
    # TiDB copies `$` into the regexp of a wildcard unescaped: Go's end of text there, a
    # literal only in a name without wildcards (TiDB's own vector `p_123$.45`).
    assert TableFilter(["db.t_?$"]).matches("db", "t_1")
    assert not TableFilter(["db.t_?$"]).matches("db", "t_1$")
    assert TableFilter(["db.t_1$"]).matches("db", "t_1$")
    assert TableFilter(["db.t_?\\$"]).matches("db", "t_1$")
    assert not TableFilter(["db.t?$x"]).matches("db", "t1$x")


def test_file_imports_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"pattern 2 '@rules.txt': imports a filter file"):
        TableFilter(["db.*", "@rules.txt"])
    with pytest.raises(ConfigError, match="imports a filter file"):
        ColumnFilter(["@cols.txt"], label="columns")


def test_comments_and_blanks_take_nothing() -> None:
    assert TableFilter(["# all", "  "]).is_empty
    assert not TableFilter(["# all", "  "]).matches("db", "t")
    assert not TableFilter(["db.t"]).is_empty


def test_case_rules_follow_go() -> None:
    # Go's strings.ToLower maps U+0130 to i; Python's str.lower adds a combining dot.
    assert TableFilter(["i.t"]).matches("\u0130", "t")
    assert TableFilter(["\u0130.t"]).matches("i", "T")
    assert go_lower("\u03a3\u03a3") == "\u03c3\u03c3"  # no final sigma in Go
    assert not TableFilter(["i.t"], case_sensitive=True).matches("I", "t")


def test_filters_pickle() -> None:
    tables = TableFilter(["/^d[a-z]$/.t", "!db.x*"], case_sensitive=True, label="l")
    again = pickle.loads(pickle.dumps(tables))
    assert again == tables and again.matches("db", "t") and not again.matches("DB", "t")
    columns = pickle.loads(pickle.dumps(ColumnFilter(["*", "!secret"], label="c")))
    assert columns.matches("ID") and not columns.matches("Secret")


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("db.*, !db.tmp_*", ["db.*", " !db.tmp_*"]),
        ("/^a{1,3}$/.t,x.y", ["/^a{1,3}$/.t", "x.y"]),
        ('`a,b`.t,"c,d".t', ["`a,b`.t", '"c,d".t']),
        ("db.[,;]x,db.y", ["db.[,;]x", "db.y"]),
        ("db.a\\,b,c.d", ["db.a\\,b", "c.d"]),
    ],
)
def test_split_patterns_keeps_commas_inside_a_pattern(text: str, parts: list[str]) -> None:
    assert split_patterns(text) == parts


# -- properties: wildcards against an independent glob matcher ------------------------------

_NAME_CHARS = "abAB_$1.é中"
_names = st.text(alphabet=_NAME_CHARS, max_size=6)
_CLASSES = ["[a-b]", "[!a]", "[ab]", "[!_1]", "[^a]", "[\\]x]"]


@st.composite
def _globs(draw: Any) -> list[str]:
    """A wildcard as its tokens: literal characters (escaped where TiDB needs it), `*`,
    `?` and character classes."""
    tokens = draw(
        st.lists(
            st.one_of(
                # `$` stays out: after a wildcard TiDB leaves it an end-of-name anchor
                # (test_a_dollar_after_a_wildcard_ends_the_name), which no glob has.
                st.sampled_from(list("abAB_1é中")),
                st.just("\\."),
                st.just("*"),
                st.just("?"),
                st.sampled_from(_CLASSES),
            ),
            min_size=1,
            max_size=6,
        )
    )
    return tokens


def _token_matches(token: str, char: str) -> bool:
    """One token against one character, as a glob reads it (independent of the code)."""
    if token == "?":
        return True
    if token.startswith("["):
        body = token[1:-1]
        negated = body.startswith("!")
        body = body[1:] if negated else body
        members: set[str] = set()
        i = 0
        while i < len(body):
            if body[i] == "\\":
                members.add(body[i + 1])
                i += 2
            elif i + 2 < len(body) and body[i + 1] == "-":
                members.update(chr(c) for c in range(ord(body[i]), ord(body[i + 2]) + 1))
                i += 3
            else:
                members.add(body[i])
                i += 1
        return (char in members) != negated
    return char == token.removeprefix("\\")


def _glob_matches(tokens: list[str], name: str) -> bool:
    @cache
    def at(t: int, n: int) -> bool:
        if t == len(tokens):
            return n == len(name)
        if tokens[t] == "*":
            return any(at(t + 1, k) for k in range(n, len(name) + 1))
        return n < len(name) and _token_matches(tokens[t], name[n]) and at(t + 1, n + 1)

    return at(0, 0)


@given(_globs(), _names)
def test_wildcard_columns_match_as_globs(tokens: list[str], name: str) -> None:
    pattern = "".join(tokens)
    exact = TableFilter([f"db.{pattern}"], case_sensitive=True)
    assert exact.matches("db", name) is _glob_matches(tokens, name)
    # Column names in any case: TiDB's (?i) regexp over the lowered name.
    lowered = _glob_matches([go_lower(t) for t in tokens], go_lower(name))
    assert ColumnFilter([pattern], label="c").matches(name) is lowered


@given(_globs(), _names)
def test_a_negated_pattern_is_the_complement(tokens: list[str], name: str) -> None:
    pattern = "db." + "".join(tokens)
    taken = TableFilter(["*.*", pattern], case_sensitive=True).matches("db", name)
    dropped = TableFilter(["*.*", "!" + pattern], case_sensitive=True).matches("db", name)
    assert taken
    assert dropped is not _glob_matches(tokens, name)


@given(st.text(min_size=1, max_size=8).filter(lambda s: s.strip(" \t") == s))
def test_any_name_quoted_matches_itself_only(name: str) -> None:
    quoted = "`" + name.replace("`", "``") + "`"
    tables = TableFilter([f"{quoted}.{quoted}"], case_sensitive=True)
    assert tables.matches(name, name)
    assert not tables.matches(name + "x", name)


@given(st.text(alphabet="abc.*?[]!-_$\\/é", min_size=1, max_size=8))
def test_any_name_escaped_matches_itself_only(name: str) -> None:
    escaped = "".join(c if c.isalnum() or not c.isascii() or c in "_$" else "\\" + c for c in name)
    columns = ColumnFilter([escaped], label="c")
    assert columns.matches(name)
    assert not columns.matches(name + "x")
