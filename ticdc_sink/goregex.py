"""Go's regular expressions (`regexp.Compile`: RE2 syntax with Perl flags) as Python `re`
patterns that match the same strings, or refused where Go refuses them.

TiDB's table filter (`ticdc_sink.table_filter`) matches names with Go's `regexp`, both for
`/regex/` patterns and for the wildcards it rewrites into regular expressions. Python's
`re` reads some of the same text differently: `$` also matches before a final newline;
`\\b \\d \\s \\w` take Unicode letters and digits, Go's only ASCII ones; `{,3}` is a repeat,
in Go three literal characters; `[[:alpha:]]` is no class; inline flags must open the
pattern; and it takes what RE2 refuses (look-arounds, back-references, `a**`). So the
pattern is parsed here as Go's `regexp/syntax` parses it (`parse.go`: `Parse`,
`parseClass`, `parseEscape`, `parsePerlFlags`, `parseRepeat`) and written back with every
construct spelled out: each repeated item in its own group, flags scoped to the item they
govern (`(?i:x)`), anchors and Perl classes as explicit ASCII sets.

Refused, as Go refuses them (`GoRegexError`, with the position in the pattern): look-
arounds and back-references, `(?P=name)`, comments, a repeat of nothing or of a repeat,
counts above 1000, unbalanced parentheses and brackets, reversed ranges, unknown POSIX
classes, escapes of letters or digits Go does not define, a trailing backslash. Refused
because `re` has no equivalent: Unicode classes (`\\pL`, `\\p{Greek}`).

Case folding is `re`'s (`(?i:...)`), which agrees with Go's simple folding for the
characters names are made of (`re` also folds `\u017f` with s and `\u212a` with k, as Go
does). Knows nothing of tables or options.
"""

from __future__ import annotations

import re

__all__ = ["GoRegexError", "translate"]

# regexp/syntax perl_groups.go: the Perl and POSIX classes, all ASCII.
_PERL = {
    "d": ((0x30, 0x39),),
    "s": ((0x09, 0x0A), (0x0C, 0x0D), (0x20, 0x20)),
    "w": ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)),
}
_POSIX = {
    "alnum": ((0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A)),
    "alpha": ((0x41, 0x5A), (0x61, 0x7A)),
    "ascii": ((0x00, 0x7F),),
    "blank": ((0x09, 0x09), (0x20, 0x20)),
    "cntrl": ((0x00, 0x1F), (0x7F, 0x7F)),
    "digit": ((0x30, 0x39),),
    "graph": ((0x21, 0x7E),),
    "lower": ((0x61, 0x7A),),
    "print": ((0x20, 0x7E),),
    "punct": ((0x21, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E)),
    "space": ((0x09, 0x0D), (0x20, 0x20)),
    "upper": ((0x41, 0x5A),),
    "word": ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)),
    "xdigit": ((0x30, 0x39), (0x41, 0x46), (0x61, 0x66)),
}
_MAX_RUNE = 0x10FFFF
_MAX_REPEAT = 1000
_SIMPLE_ESCAPES = {"a": 7, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11}
_WORD = "[0-9A-Za-z_]"
# Go's \b and \B: ASCII word boundaries (EmptyWordBoundary), not re's Unicode ones.
_BOUNDARY = f"(?:(?<={_WORD})(?!{_WORD})|(?<!{_WORD})(?={_WORD}))"
_NOT_BOUNDARY = f"(?:(?<={_WORD})(?={_WORD})|(?<!{_WORD})(?!{_WORD}))"

_Ranges = list[tuple[int, int]]


class GoRegexError(ValueError):
    """A pattern Go's `regexp` refuses, or one `re` cannot match the same way."""

    def __init__(self, message: str, position: int) -> None:
        super().__init__(f"{message} (at character {position + 1})")
        self.reason = message
        self.position = position


def translate(pattern: str) -> str:
    """The Python `re` pattern matching what Go's `regexp.MustCompile(pattern)` matches,
    for use with `re.search` (Go's `MatchString` is unanchored too).

    Raises:
        GoRegexError: Go refuses the pattern, or it uses a Unicode class.
    """
    return _Parser(pattern).parse()


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.fold = False  # i
        self.multiline = False  # m (Go's OneLine cleared)
        self.dotall = False  # s
        self.ungreedy = False  # U

    def fail(self, message: str, position: int | None = None) -> GoRegexError:
        return GoRegexError(message, self.pos if position is None else position)

    def peek(self, offset: int = 0) -> str:
        index = self.pos + offset
        return self.text[index] if index < len(self.text) else ""

    def parse(self) -> str:
        out = self.alternation()
        if self.pos < len(self.text):  # only a `)` stops an alternation early
            raise self.fail("unexpected )")
        return out

    def alternation(self) -> str:
        branches = [self.concatenation()]
        while self.peek() == "|":
            self.pos += 1
            branches.append(self.concatenation())
        return "|".join(branches)

    def concatenation(self) -> str:
        items: list[str] = []
        last_was_repeat = False
        while self.pos < len(self.text) and self.peek() not in "|)":
            start = self.pos
            repeat = self.repeat_operator()
            if repeat is not None:
                if last_was_repeat:
                    raise self.fail("invalid nested repetition operator", start)
                if not items:
                    raise self.fail("missing argument to repetition operator", start)
                items[-1] = f"(?:{items[-1]}){repeat}"
                last_was_repeat = True
                continue
            last_was_repeat = False
            items.extend(self.atom())
        return "".join(items)

    def repeat_operator(self) -> str | None:
        """`*`, `+`, `?` or `{n,m}` with its lazy `?` (swapped under U), or None when
        the next text is no repeat (a `{` that is not a count is a literal)."""
        char = self.peek()
        start = self.pos
        if char in ("*", "+", "?") and char:
            self.pos += 1
            op = char
        elif char == "{":
            count = self.repeat_count()
            if count is None:
                return None
            low, high = count
            if low < 0 or low > _MAX_REPEAT or high > _MAX_REPEAT or (0 <= high < low):
                raise self.fail(f"invalid repeat count {self.text[start : self.pos]}", start)
            op = f"{{{low}}}" if high == low else f"{{{low},{'' if high < 0 else high}}}"
        else:
            return None
        lazy = self.peek() == "?"
        if lazy:
            self.pos += 1
        return op + ("?" if lazy != self.ungreedy else "")

    def repeat_count(self) -> tuple[int, int] | None:
        """Go's `parseRepeat`: `{n}`, `{n,}`, `{n,m}` (high -1: no bound); None, position
        unchanged, when the text is not one."""
        match = re.compile(r"\{(0|[1-9][0-9]*)(,(0|[1-9][0-9]*)?)?\}").match(self.text, self.pos)
        if match is None:
            return None
        self.pos = match.end()
        low = _count(match.group(1))
        if match.group(2) is None:
            return low, low
        if match.group(3) is None:
            return low, -1
        high = _count(match.group(3))
        return (-1 if high < 0 else low), high

    def atom(self) -> list[str]:
        """The next item(s) of a concatenation: one per character of a literal run (a
        repeat takes the last), none for a flag group."""
        char = self.text[self.pos]
        if char == "(":
            return self.group()
        if char == "[":
            return [self.char_class()]
        if char == ".":
            self.pos += 1
            return ["(?s:.)" if self.dotall else "."]
        if char == "^":
            self.pos += 1
            return ["(?m:^)" if self.multiline else r"\A"]
        if char == "$":
            self.pos += 1
            return ["(?m:$)" if self.multiline else r"\Z"]
        if char == "\\":
            return self.escape_atom()
        self.pos += 1
        return [self.literal(ord(char))]

    def literal(self, code: int) -> str:
        text = re.escape(chr(code))
        return f"(?i:{text})" if self.fold else text

    def group(self) -> list[str]:
        start = self.pos
        saved = (self.fold, self.multiline, self.dotall, self.ungreedy)
        self.pos += 1
        if self.peek() == "?":
            if self.text.startswith("P<", self.pos + 1) or self.peek(1) == "<":
                self.pos += 3 if self.peek(1) == "P" else 2
                end = self.text.find(">", self.pos)
                name = self.text[self.pos : end] if end >= 0 else ""
                if end < 0 or not re.fullmatch(r"[0-9A-Za-z_]+", name):
                    raise self.fail("invalid named capture", start)
                self.pos = end + 1
            elif not self.flags(start):
                return []  # (?flags): they hold to the end of the enclosing group
        body = self.alternation()
        if self.peek() != ")":
            raise self.fail("missing closing )", start)
        self.pos += 1
        self.fold, self.multiline, self.dotall, self.ungreedy = saved
        return [f"(?:{body})"]

    def flags(self, start: int) -> bool:
        """Go's `parsePerlFlags` after `(?`: sets the flags; True when a group follows
        (`(?i:`), False for `(?i)`.

        Raises:
            GoRegexError: anything else after `(?` (look-arounds, comments, `(?P=`).
        """
        self.pos += 1
        values = {"i": self.fold, "m": self.multiline, "s": self.dotall, "U": self.ungreedy}
        negate = False
        seen = False
        while self.pos < len(self.text):
            char = self.text[self.pos]
            self.pos += 1
            if char in values:
                values[char] = not negate
                seen = True
            elif char == "-" and not negate:
                negate, seen = True, False
            elif char in ":)" and (seen or not negate):
                self.fold, self.multiline = values["i"], values["m"]
                self.dotall, self.ungreedy = values["s"], values["U"]
                return char == ":"
            else:
                break
        raise self.fail(
            f"invalid or unsupported Perl syntax {self.text[start : self.pos]!r}", start
        )

    def escape_atom(self) -> list[str]:
        start = self.pos
        kind = self.peek(1)
        if kind == "A":
            self.pos += 2
            return [r"\A"]
        if kind == "z":
            self.pos += 2
            return [r"\Z"]
        if kind in ("b", "B"):
            self.pos += 2
            return [_BOUNDARY if kind == "b" else _NOT_BOUNDARY]
        if kind == "Q":
            end = self.text.find("\\E", self.pos + 2)
            text = self.text[self.pos + 2 : end if end >= 0 else len(self.text)]
            self.pos = end + 2 if end >= 0 else len(self.text)
            return [self.literal(ord(c)) for c in text]
        if kind in ("p", "P"):
            raise self.fail(
                f"Unicode class \\{kind} is not supported here; list the characters in a "
                "class such as [a-z]",
                start,
            )
        if kind.lower() in _PERL:
            self.pos += 2
            ranges = list(_PERL[kind.lower()])
            return [self.class_text(ranges, negated=kind.isupper())]
        return [self.literal(self.escape())]

    def escape(self) -> int:
        """Go's `parseEscape` at a backslash: the character it stands for."""
        start = self.pos
        if self.pos + 1 >= len(self.text):
            raise self.fail("trailing backslash at end of expression", start)
        char = self.text[self.pos + 1]
        self.pos += 2
        if char in "1234567" and self.peek() in tuple("01234567") or char == "0":
            value = int(char)
            for _ in range(2):
                if self.peek() and self.peek() in "01234567":
                    value = value * 8 + int(self.peek())
                    self.pos += 1
            return value
        if char == "x":
            braced = re.compile(r"\{([0-9A-Fa-f]+)\}").match(self.text, self.pos)
            if braced is not None and int(braced.group(1), 16) <= _MAX_RUNE:
                self.pos = braced.end()
                return int(braced.group(1), 16)
            pair = re.compile(r"[0-9A-Fa-f]{2}").match(self.text, self.pos)
            if self.peek() != "{" and pair is not None:
                self.pos = pair.end()
                return int(pair.group(0), 16)
        elif char in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[char]
        elif ord(char) < 0x80 and not char.isalnum():
            return ord(char)  # an escaped punctuation character is itself
        raise self.fail(f"invalid escape sequence {self.text[start : self.pos]!r}", start)

    def char_class(self) -> str:
        """Go's `parseClass` at `[`: the class as explicit ranges."""
        start = self.pos
        self.pos += 1
        negated = self.peek() == "^"
        if negated:
            self.pos += 1
        ranges: _Ranges = []
        first = True
        while first or self.peek() != "]":
            if self.pos >= len(self.text):
                raise self.fail("missing closing ]", start)
            first = False
            if self.text.startswith("[:", self.pos) and self.pos + 2 < len(self.text):
                # Go looks for the closing `:]` anywhere after, past this class too.
                end = self.text.find(":]", self.pos + 2)
                if end >= 0:
                    name = self.text[self.pos : end + 2]
                    inner = name[2:-2]
                    group = _POSIX.get(inner.removeprefix("^"))
                    if group is None:
                        raise self.fail(f"invalid character class range {name}", self.pos)
                    self.add_group(ranges, group, negated=inner.startswith("^"))
                    self.pos = end + 2
                    continue
            if self.peek() == "\\" and self.peek(1) in ("p", "P"):
                raise self.fail(
                    f"Unicode class \\{self.peek(1)} is not supported here; list the characters",
                    self.pos,
                )
            if self.peek() == "\\" and self.peek(1) and self.peek(1).lower() in _PERL:
                kind = self.peek(1)
                self.add_group(ranges, _PERL[kind.lower()], negated=kind.isupper())
                self.pos += 2
                continue
            range_start = self.pos
            low = self.class_char(start)
            high = low
            if self.peek() == "-" and self.peek(1) not in ("", "]"):
                self.pos += 1
                high = self.class_char(start)
                if high < low:
                    raise self.fail(
                        f"invalid character class range {self.text[range_start : self.pos]}",
                        range_start,
                    )
            ranges.append((low, high))
        self.pos += 1
        return self.class_text(ranges, negated=negated)

    def class_char(self, class_start: int) -> int:
        if self.pos >= len(self.text):
            raise self.fail("missing closing ]", class_start)
        if self.peek() == "\\":
            return self.escape()
        self.pos += 1
        return ord(self.text[self.pos - 1])

    def add_group(
        self, ranges: _Ranges, group: tuple[tuple[int, int], ...], *, negated: bool
    ) -> None:
        """Go's `appendGroup`: a negated group under (?i) is the complement of the group
        with its case variants (so `re`'s folding of the whole class changes nothing)."""
        members = list(group)
        if self.fold:
            members += _ascii_fold_extras(members)
        ranges.extend(_complement(members) if negated else members)

    def class_text(self, ranges: _Ranges, *, negated: bool) -> str:
        if not ranges:
            ranges, negated = [(0, _MAX_RUNE)], not negated
        body = "".join(
            re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-{re.escape(chr(hi))}"
            for lo, hi in ranges
        )
        text = f"[{'^' if negated else ''}{body}]"
        return f"(?i:{text})" if self.fold else text


def _count(digits: str) -> int:
    """Go's `parseInt` value: -1 when too big to be a count."""
    return int(digits) if len(digits) <= 8 else -1


def _ascii_fold_extras(ranges: _Ranges) -> _Ranges:
    """The non-ASCII case variants of ASCII letters in `ranges`: Go's fold orbits
    k K U+212A (Kelvin sign) and s S U+017F (long s)."""
    extras = []
    for letters, other in (("kK", 0x212A), ("sS", 0x017F)):
        if any(lo <= ord(c) <= hi for c in letters for lo, hi in ranges):
            extras.append((other, other))
    return extras


def _complement(ranges: _Ranges) -> _Ranges:
    out = []
    next_low = 0
    for lo, hi in sorted(ranges):
        if lo > next_low:
            out.append((next_low, lo - 1))
        next_low = max(next_low, hi + 1)
    if next_low <= _MAX_RUNE:
        out.append((next_low, _MAX_RUNE))
    return out
