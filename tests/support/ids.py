"""Compare the row ids a test found with those it expected, and say what differs in a few
lines: a failed `set(found) == expected` over 400,000 ids prints every id of both sets
(pytest does not truncate on CI), and the ids that differ scroll out of the log."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

__all__ = ["assert_same_ids", "id_ranges"]

_SHOWN = 10  # ranges quoted per kind of difference


def id_ranges(ids: Iterable[int], *, shown: int = _SHOWN) -> str:
    """`ids` as sorted runs of consecutive ids, at most `shown` of them: "3-5, 9, ..."."""
    runs: list[list[int]] = []
    for value in sorted(set(ids)):
        if runs and value == runs[-1][1] + 1:
            runs[-1][1] = value
        else:
            runs.append([value, value])
    text = [f"{low}" if low == high else f"{low}-{high}" for low, high in runs[:shown]]
    if len(runs) > shown:
        text.append(f"... ({len(runs) - shown} more runs)")
    return ", ".join(text)


def assert_same_ids(
    found: Iterable[int], expected: Iterable[int], what: str, *, once: bool = False
) -> None:
    """Every expected id is in `found` and nothing else; with `once`, each exactly once.

    Raises:
        AssertionError: naming `what`, how many ids are missing, extra or (with `once`)
            repeated, and their first runs.
    """
    counts = Counter(found)
    wanted = set(expected)
    missing = wanted - counts.keys()
    extra = counts.keys() - wanted
    repeated = {i for i, n in counts.items() if n > 1} if once else set()
    problems = [
        f"{len(ids)} {kind} ({id_ranges(ids)})"
        for kind, ids in (("missing", missing), ("extra", extra), ("repeated", repeated))
        if ids
    ]
    assert not problems, f"{what}: of {len(wanted)} ids, " + "; ".join(problems)
