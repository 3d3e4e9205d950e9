"""The change stream the interop tests write (tests/support/tables.py, `CHANGES`) as a
consumer must see it, and a consumer's output put in the same shape to compare.

A `Change` is `(op, row, before)`: `op` INSERT, UPDATE or DELETE; `row` the new row (the
deleted row for a DELETE); `before` an UPDATE's old row, else None. Rows are dicts of
`id`, `name`, `amount`, with `amount` a `Decimal` made from the consumer's text, so a
Debezium double `1.5` equals `1.50` by value and nothing is rounded.

TiCDC's Kafka sink sends an UPDATE that changes the primary key as a DELETE of the old
row and an INSERT of the new one; `expected_per_key` splits it so too. Per key, the
changes are in commit ts order: the order a consumer must keep.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from tests.support.tables import CHANGES, apply_changes

__all__ = [
    "Change",
    "apply",
    "expected_per_key",
    "from_row_kinds",
    "make_row",
    "per_key",
    "source_table",
]

Change = tuple[str, dict[str, Any], dict[str, Any] | None]

_OPS = {"c": "INSERT", "u": "UPDATE", "d": "DELETE"}


def make_row(key: Any, name: Any, amount: Any) -> dict[str, Any]:
    """A row as the comparisons take it: `id` an int, `amount` a Decimal of its text."""
    return {
        "id": int(key),
        "name": name,
        "amount": None if amount is None else Decimal(str(amount)),
    }


def expected_per_key() -> dict[int, list[Change]]:
    """`CHANGES` as the sink writes them, per key in commit ts order."""
    changes: list[Change] = []
    for op, _ts, key, name, amount, before in CHANGES:
        new = make_row(key, name, amount)
        old = None if before is None else make_row(*before)
        if op == "u" and old is not None and old["id"] != key:
            changes += [("DELETE", old, None), ("INSERT", new, None)]
        else:
            changes.append((_OPS[op], new, old))
    return per_key(changes)


def per_key(changes: Iterable[Change]) -> dict[int, list[Change]]:
    """Changes grouped by the key of their row, each key's in the order given."""
    grouped: dict[int, list[Change]] = {}
    for change in changes:
        grouped.setdefault(change[1]["id"], []).append(change)
    return grouped


def from_row_kinds(changelog: Iterable[tuple[str, list[Any]]]) -> list[Change]:
    """A Flink changelog (`+I`, `-U`, `+U`, `-D` with `[id, name, amount]`) as changes: an
    UPDATE is the `-U` before its `+U` (Flink emits the pair together, per key)."""
    changes: list[Change] = []
    pending: dict[int, dict[str, Any]] = {}
    for kind, values in changelog:
        row = make_row(*values)
        if kind == "+I":
            changes.append(("INSERT", row, None))
        elif kind == "-U":
            pending[row["id"]] = row
        elif kind == "+U":
            changes.append(("UPDATE", row, pending.pop(row["id"])))
        elif kind == "-D":
            changes.append(("DELETE", row, None))
        else:
            raise AssertionError(f"unknown row kind {kind!r}")
    assert not pending, f"-U without its +U: {pending}"
    return changes


def apply(changes: Iterable[Change]) -> dict[int, dict[str, Any]]:
    """Changes applied, in order, to an empty table keyed by `id`."""
    table: dict[int, dict[str, Any]] = {}
    for op, row, _before in changes:
        if op == "DELETE":
            del table[row["id"]]
        else:
            table[row["id"]] = row
    return table


def source_table() -> dict[int, dict[str, Any]]:
    """The table `CHANGES` leave behind (what every consumer must end with)."""
    return {
        key: make_row(row["id"], row["name"], row["amount"])
        for key, row in apply_changes(CHANGES).items()
    }
