"""tests/support/topics.py: the topic names of one test are no other test's, and a pattern
over one test's names matches none of another's."""

from __future__ import annotations

import re

from tests.support.topics import TopicNames


def test_every_test_gets_a_prefix_that_starts_no_other() -> None:
    names = [TopicNames() for _ in range(120)]
    prefixes = [n.prefix for n in names]
    assert len(set(prefixes)) == len(prefixes)
    assert not [(a, b) for a in prefixes for b in prefixes if a != b and b.startswith(a)]
    first = names[0]
    assert first("orders_{schema}_{table}") == first.prefix + "orders_{schema}_{table}"
    pattern = re.compile(first("rt_.*"))
    assert [n("rt_a") for n in names if pattern.fullmatch(n("rt_a"))] == [first("rt_a")]
    assert re.fullmatch(r"[A-Za-z0-9_-]+", first("a-b_c"))  # Kafka's characters, no "."
