"""A TiDB table in memory and the TiCDC change rows of its transactions: the oracle the
mirror tests compare against, built from the input, never from the mirror's code.

`SourceTable` holds rows by row id (TiDB's handle, which a key-changing UPDATE keeps) and
applies transactions of `Step`s; each transaction gets one commit ts and yields the change
rows TiCDC sends for it, in the writer's input contract: an INSERT, a DELETE (the old row),
an UPDATE with `_before`; a key-changing UPDATE either as one UPDATE (TiCDC's
`output-raw-change-event=true`) or split into a DELETE and an INSERT (the default). Within
a transaction each row changes once and keys are unique at its end, as in TiDB; a key a
transaction frees may be taken again in it (a DELETE and an INSERT of one key at one ts),
and half of the steps that take a key take such a one.

    table = SourceTable()
    rows = table.apply(ts=100, steps=[Step("insert", 1), Step("move", 0, 7)])
    table.state_at(100)   # {key: (key, name, qty)}

`Step.kind`: `insert` (a new key), `update` (new values), `move` (a new key), `delete`;
the integers pick rows and keys modulo what exists, so any drawn list is a valid
transaction (`steps` below is the hypothesis strategy).
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Any

import attrs
from hypothesis import strategies as st

__all__ = [
    "COLUMNS",
    "SourceTable",
    "Step",
    "random_transactions",
    "steps",
]

# The table: id bigint primary key, name varchar, qty int.
COLUMNS = ("id", "name", "qty")
KEY_SPACE = 40


@attrs.frozen
class Step:
    kind: str
    pick: int
    value: int = 0


def steps(max_steps: int = 6) -> st.SearchStrategy[list[Step]]:
    """One transaction's steps."""
    step = st.builds(
        Step,
        st.sampled_from(["insert", "update", "move", "delete"]),
        st.integers(0, KEY_SPACE),
        st.integers(0, 1000),
    )
    return st.lists(step, min_size=1, max_size=max_steps)


class SourceTable:
    """The TiDB table, its history by commit ts, and its change rows."""

    def __init__(self, *, split_moves: bool = False) -> None:
        self.rows: dict[int, tuple[Any, ...]] = {}  # row id -> (id, name, qty)
        self.split_moves = split_moves
        self.history: list[tuple[int, dict[int, tuple[Any, ...]]]] = []
        self._next_row = 0

    def keys(self) -> set[int]:
        return {row[0] for row in self.rows.values()}

    def apply(self, ts: int, steps: Iterable[Step]) -> list[dict[str, Any]]:
        """Apply one transaction at commit ts `ts`; its change rows."""
        assert not self.history or ts > self.history[-1][0], "commit ts must rise"
        touched: set[int] = set()
        freed: list[int] = []  # keys this transaction deleted or moved away from
        changes: list[dict[str, Any]] = []
        for step in steps:
            free = [k for k in range(KEY_SPACE) if k not in self.keys()]
            # half of the time a key this transaction freed: a DELETE and a write of one
            # key at one commit ts, TiCDC's hardest case
            reuse = [k for k in freed if k in free]
            if reuse and step.value % 2 == 0:
                free = reuse
            candidates = sorted(r for r in self.rows if r not in touched)
            if step.kind == "insert" or not candidates:
                if not free:
                    continue
                row = (free[step.pick % len(free)], f"n{step.value}", step.value)
                rid = self._next_row
                self._next_row += 1
                self.rows[rid] = row
                touched.add(rid)
                changes.append(_row("INSERT", ts, row))
                continue
            rid = candidates[step.pick % len(candidates)]
            old = self.rows[rid]
            touched.add(rid)
            if step.kind == "delete":
                del self.rows[rid]
                freed.append(old[0])
                changes.append(_row("DELETE", ts, old))
            elif step.kind == "update" or not free:
                new = (old[0], f"u{step.value}", step.value)
                self.rows[rid] = new
                changes.append(_row("UPDATE", ts, new, old))
            else:  # move: a key-changing UPDATE
                new = (free[step.value % len(free)], old[1], old[2] + 1)
                self.rows[rid] = new
                freed.append(old[0])
                if self.split_moves:
                    changes += [_row("DELETE", ts, old), _row("INSERT", ts, new)]
                else:
                    changes.append(_row("UPDATE", ts, new, old))
        self.history.append((ts, self.state()))
        return changes

    def state(self) -> dict[int, tuple[Any, ...]]:
        """The table now, by key."""
        return {row[0]: row for row in self.rows.values()}

    def state_at(self, ts: int) -> dict[int, tuple[Any, ...]]:
        """The table as of commit ts `ts` (every transaction at or below it applied)."""
        state: dict[int, tuple[Any, ...]] = {}
        for commit_ts, snapshot in self.history:
            if commit_ts > ts:
                break
            state = snapshot
        return state


def random_transactions(rng: random.Random, count: int, *, max_steps: int = 6) -> list[list[Step]]:
    """`count` transactions of seeded random steps (for the end-to-end tests and benchmarks)."""
    kinds = ["insert", "insert", "update", "move", "delete"]
    return [
        [
            Step(rng.choice(kinds), rng.randrange(KEY_SPACE * 4), rng.randrange(1000))
            for _ in range(rng.randint(1, max_steps))
        ]
        for _ in range(count)
    ]


def _row(
    op: str, ts: int, row: tuple[Any, ...], before: tuple[Any, ...] | None = None
) -> dict[str, Any]:
    return {
        **dict(zip(COLUMNS, row, strict=True)),
        "_op": op,
        "_commit_ts": ts,
        "_before": dict(zip(COLUMNS, before, strict=True)) if before is not None else None,
    }
