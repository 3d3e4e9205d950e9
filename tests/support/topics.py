"""Topic names that no other test of the run uses.

One Kafka broker and one schema registry serve the whole test run (tests/conftest.py), and
what a test writes stays there: a second test writing a topic of the same name would read
the first one's messages, and register its schemas under the same subjects. So a test
names its topics with the `topics` fixture (a module-scoped fixture makes its own
`TopicNames()`):

    def test_orders(spark, broker, topics):
        topic = topics("orders")               # "t7_orders"
        expression = topics("o_{schema}_{table}")   # "t7_o_{schema}_{table}"

The prefix is `t<n>_`, n counting the `TopicNames` made in this process: short (Kafka
allows 249 characters, a Confluent subject adds `-value`), without `.` (Kafka warns of
names that differ only by `.` and `_`), and never a prefix of another one (`t1_` is not
the start of `t12_`), so a pattern such as `topics("rt_.*")` matches this test's topics
only.
"""

from __future__ import annotations

import itertools

__all__ = ["TopicNames"]

_NUMBERS = itertools.count(1)


class TopicNames:
    """Names of one test's topics: `names("orders")` is the prefix and "orders"."""

    def __init__(self) -> None:
        self.prefix = f"t{next(_NUMBERS)}_"

    def __call__(self, name: str) -> str:
        return self.prefix + name
