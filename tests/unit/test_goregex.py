"""Go regular expressions as Python `re` patterns: where the two read the same text
differently, what Go refuses, and a differential property over their common syntax."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ticdc_sink.goregex import GoRegexError, translate


def go_search(pattern: str, text: str) -> bool:
    return re.search(translate(pattern), text) is not None


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        # `$` is the end of the text in Go (re: also before a final newline).
        ("^a$", "a\n", False),
        ("(?m)^a$", "a\nb", True),
        ("^b", "a\nb", False),
        ("(?m)^b", "a\nb", True),
        ("a\\z", "a", True),
        # Perl classes and \b are ASCII in Go.
        ("^\\d$", "\u0663", False),
        ("^\\w$", "\u00e9", False),
        ("^\\W$", "\u00e9", True),
        ("^\\s$", "\v", False),
        ("a\\b", "a\u00e9", True),
        ("a\\B", "a\u00e9", False),
        # {,n} is no repeat in Go: literal text.
        ("^a{,2}$", "a{,2}", True),
        ("^a{,2}$", "aa", False),
        ("^a{2}$", "aa", True),
        ("^a{2,}$", "aaa", True),
        ("^a{01}$", "a{01}", True),  # Go's parseInt refuses leading zeros
        # POSIX classes inside brackets.
        ("^[[:alpha:]]+$", "abZ", True),
        ("^[[:^digit:]]$", "5", False),
        ("^[[:punct:]]$", "%", True),
        # Flags anywhere, scoped to their group.
        ("a(?i)b", "aB", True),
        ("a(?i)b", "AB", False),
        ("(?i:a)b", "Ab", True),
        ("(?i:a)b", "AB", False),
        ("((?i)a)b", "AB", False),
        ("(?s).", "\n", True),
        (".", "\n", False),
        ("(?i)k", "\u212a", True),  # Go folds the Kelvin sign with k
        ("(?i)[^k]", "\u212a", False),
        ("(?i)\\W", "\u212a", False),
        # Ungreedy swaps the laziness of every repeat.
        ("(?U)^(a+)(a*)$", "aaa", True),
        # Escapes.
        ("^\\Qa.b\\E$", "a.b", True),
        ("^\\Qa.b\\E$", "axb", False),
        ("^\\Qa.b", "a.b", True),
        ("^\\x{263a}\\x41\\101\\0$", "\u263aAA\x00", True),
        ("^\\.\\-\\_$", ".-_", True),
        ("^[\\]a-]+$", "]-a", True),
        ("^[]a]$", "]", True),
        ("^[a-]$", "-", True),
        # Named groups in both spellings.
        ("^(?P<x>a)(?<y>b)$", "ab", True),
        ("^(?:)$", "", True),
        ("^(?)a$", "a", True),
        ("^$*a", "a", True),  # a repeat of an empty-width assertion may repeat nothing
        ("(?:\\A)*a", "ba", True),
    ],
)
def test_go_semantics(pattern: str, text: str, expected: bool) -> None:
    assert go_search(pattern, text) is expected


@pytest.mark.parametrize(
    ("pattern", "reason", "position"),
    [
        ("a(?=b)", "invalid or unsupported Perl syntax", 2),
        ("a(?!b)", "invalid or unsupported Perl syntax", 2),
        ("a(?<=b)", "invalid named capture", 2),
        ("(?P=x)", "invalid or unsupported Perl syntax", 1),
        ("(?#c)", "invalid or unsupported Perl syntax", 1),
        ("(?i-)a", "invalid or unsupported Perl syntax", 1),
        ("(?P<a-b>x)", "invalid named capture", 1),
        ("(a)\\1", "invalid escape sequence", 4),
        ("\\8", "invalid escape sequence", 1),
        ("\\C", "invalid escape sequence", 1),
        ("\\Z", "invalid escape sequence", 1),
        ("\\é", "invalid escape sequence", 1),
        ("\\x{110000}", "invalid escape sequence", 1),
        ("\\xg0", "invalid escape sequence", 1),
        ("a\\", "trailing backslash", 2),
        ("a**", "invalid nested repetition operator", 3),
        ("a*?+", "invalid nested repetition operator", 4),
        ("a{2}{3}", "invalid nested repetition operator", 5),
        ("*", "missing argument to repetition operator", 1),
        ("a|*", "missing argument to repetition operator", 3),
        ("(*)", "missing argument to repetition operator", 2),
        ("(?i)*", "missing argument to repetition operator", 5),
        ("a{1001}", "invalid repeat count", 2),
        ("a{3,2}", "invalid repeat count", 2),
        ("(a", "missing closing )", 1),
        ("a)", "unexpected )", 2),
        ("[a", "missing closing ]", 1),
        ("[^]", "missing closing ]", 1),
        ("[z-a]", "invalid character class range z-a", 2),
        ("[[:word:]", "missing closing ]", 1),
        ("[[:nope:]]", "invalid character class range [:nope:]", 2),
        ("\\pL", "Unicode class \\p is not supported", 1),
        ("[\\p{Greek}]", "Unicode class \\p is not supported", 2),
    ],
)
def test_what_go_refuses(pattern: str, reason: str, position: int) -> None:
    with pytest.raises(GoRegexError) as caught:
        translate(pattern)
    assert reason in caught.value.reason
    assert caught.value.position == position - 1


# -- differential: where Go's syntax and re's mean the same, the translation matches as re -----


_ATOMS = ["a", "b", "c", ".", "[a-b]", "[^b]", "[ac]", "\\.", "\\n"]
_REPEATS = ["", "*", "+", "?", "{1,2}", "{2}", "*?", "+?"]


def _concatenations(items: Any, repeats: list[str]) -> Any:
    repeated = st.tuples(items, st.sampled_from(repeats)).map("".join)
    return st.lists(repeated, min_size=1, max_size=3).map("".join)


def _alternations(items: Any, repeats: list[str]) -> Any:
    return st.lists(_concatenations(items, repeats), min_size=1, max_size=3).map("|".join)


# Groups hold no unbounded repeat of their own when repeated: re backtracks exponentially
# over (a*)* and the property is about meaning, not speed.
_GROUPS = _alternations(st.sampled_from(_ATOMS), ["", "?", "{2}"]).flatmap(
    lambda body: st.sampled_from([f"(?:{body})", f"({body})"])
)
_REGEXES = _alternations(st.one_of(st.sampled_from(_ATOMS), _GROUPS), _REPEATS)


@given(_REGEXES, st.text(alphabet="abcAB.\n", max_size=8), st.booleans())
def test_common_syntax_matches_as_re(pattern: str, text: str, fold: bool) -> None:
    go = ("(?i)" if fold else "") + pattern
    expected = re.search(pattern, text, re.IGNORECASE if fold else 0)
    found = re.search(translate(go), text)
    assert (found is None) == (expected is None)
    if found is not None and expected is not None:
        # Leftmost-first: the same match, not only a match.
        assert found.span() == expected.span()
