"""tests/support/ids.py: a failed id comparison says what differs in a few lines."""

from __future__ import annotations

import pytest

from tests.support.ids import assert_same_ids, id_ranges


def test_id_ranges_joins_consecutive_ids_and_stops_after_a_few_runs() -> None:
    assert id_ranges([5, 3, 4, 9, 9]) == "3-5, 9"
    assert id_ranges(range(0, 40, 2), shown=3) == "0, 2, 4, ... (17 more runs)"
    assert id_ranges([]) == ""


def test_the_same_ids_pass_in_any_order_and_repeated_unless_once() -> None:
    assert_same_ids([3, 1, 2, 2], {1, 2, 3}, "rows")
    with pytest.raises(AssertionError, match=r"^rows: of 3 ids, 1 repeated \(2\)$"):
        assert_same_ids([3, 1, 2, 2], {1, 2, 3}, "rows", once=True)


def test_missing_and_extra_ids_are_counted_and_quoted_as_runs() -> None:
    expected = set(range(400_000))
    found = [i for i in expected if not 199_507 <= i < 200_000] + [1_000_000]
    with pytest.raises(AssertionError) as failed:
        assert_same_ids(found, expected, "topic t")
    assert str(failed.value).splitlines()[0] == (
        "topic t: of 400000 ids, 493 missing (199507-199999); 1 extra (1000000)"
    )
