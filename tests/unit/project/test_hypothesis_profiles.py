"""Every test that sets its own number of Hypothesis examples scales it with the profile
(`examples(n)`, tests/support/hypothesis_profiles.py): a literal count would run as many
examples in a maintainer's quick run as in CI's thorough one."""

from __future__ import annotations

import re

from tests.support import paths

TESTS = paths.TESTS


def test_no_test_sets_a_literal_number_of_examples() -> None:
    literal = re.compile(r"max_examples=\d")
    found = [
        f"{path.relative_to(TESTS)}:{number}"
        for path in sorted(TESTS.rglob("*.py"))
        if path.name != "hypothesis_profiles.py"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if literal.search(line)
    ]
    assert found == [], f"write max_examples=examples(n) instead: {found}"
