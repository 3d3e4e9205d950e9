"""Schema evolution against a stream's fixed columns: what changed between the stream's
table and a newer schema of it, and whether rows of the newer one still fit.

Spark fixes a streaming query's schema when the query starts, so a table that gains,
loses or retypes a column mid-stream cannot show the change; with
`schema-evolution=ignore-new-columns` a table that only gained columns is read without
them.

This module knows table schemas only.
"""

from __future__ import annotations

from ticdc_sink.read.rows import same_columns
from ticdc_sink.schema import TableSchema

__all__ = ["adds_columns_only", "changes_columns", "describe_change"]


def adds_columns_only(old: TableSchema, new: TableSchema) -> bool:
    """Whether `new` has every column of `old`, with the same MySQL type."""
    types = {c.name: c.type for c in new.columns}
    return all(types.get(c.name) == c.type for c in old.columns)


def changes_columns(old: TableSchema, new: TableSchema, *, ignore_new_columns: bool) -> bool:
    """Whether rows of `new` do not fit a stream of `old`'s columns: other names or types
    (new columns fit under `schema-evolution=ignore-new-columns`)."""
    if same_columns(old, new):
        return False
    return not (ignore_new_columns and adds_columns_only(old, new))


def describe_change(old: TableSchema, new: TableSchema) -> str:
    """`new` against `old` in words: "column c added (int), column d dropped"."""
    before = {c.name: c.type for c in old.columns}
    after = {c.name: c.type for c in new.columns}
    parts = [f"column {n} added ({t.to_sql()})" for n, t in after.items() if n not in before]
    parts += [f"column {n} dropped" for n in before if n not in after]
    parts += [
        f"column {n} changed from {t.to_sql()} to {after[n].to_sql()}"
        for n, t in before.items()
        if n in after and after[n] != t
    ]
    return ", ".join(parts) or "columns reordered"
