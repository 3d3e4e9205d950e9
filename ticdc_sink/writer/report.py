"""What tasks tell the driver (`TaskReport`, carried in Spark's commit messages) and the
batch report the driver makes of them for operators."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs

__all__ = ["TaskReport", "batch_report"]


@attrs.frozen
class TaskReport:
    """What one task tells the driver: where it wrote and how much; `diverted` counts the
    messages sent in place of one above max-message-bytes (handle-key-only, claim-check)."""

    partition_id: int
    topics: dict[str, int]
    partitions: frozenset[tuple[str, int]]
    max_commit_ts: int
    rows: int
    messages: int
    bytes: int
    topic_messages: dict[str, int] = attrs.field(factory=dict)
    topic_bytes: dict[str, int] = attrs.field(factory=dict)
    diverted: int = 0
    # Rows sent with a commit ts at or below the watermark floor, which only
    # allow-commit-ts-below-watermark lets through.
    below_watermark: int = 0
    # Rows the changefeed's [filter] dropped (filter-rules, event-filters).
    filtered: int = 0
    # When the driver planned the batch this task wrote (`WritePlan.planned_at`): Spark
    # plans a micro-batch's writer again for its commit, so the commit step takes the
    # start of the batch from here.
    planned_at: float = 0.0


def batch_report(
    reports: Iterable[TaskReport | None],
    *,
    batch_id: int | None,
    commit_ts: int,
    watermark: int | None,
    seconds: float,
) -> dict[str, Any]:
    """What the driver records after a committed batch, for operators (one JSON object):
    counts from the tasks' delivery reports, per topic, large messages diverted, rows sent
    at or below an earlier watermark (allow-commit-ts-below-watermark), the watermark sent
    (None: none sent), rows the [filter] dropped and the time from planning to
    commit."""
    done = [r for r in reports if r is not None]
    topics: dict[str, dict[str, int]] = {}
    for report in done:
        for topic, count in report.topic_messages.items():
            entry = topics.setdefault(topic, {"messages": 0, "bytes": 0})
            entry["messages"] += count
            entry["bytes"] += report.topic_bytes.get(topic, 0)
    return {
        "batch_id": batch_id,
        "commit_ts": commit_ts,
        "tasks": len(done),
        "rows": sum(r.rows for r in done),
        "messages": sum(r.messages for r in done),
        "bytes": sum(r.bytes for r in done),
        "topics": dict(sorted(topics.items())),
        "diverted": sum(r.diverted for r in done),
        "below_watermark": sum(r.below_watermark for r in done),
        "filtered": sum(r.filtered for r in done),
        "max_commit_ts": max((r.max_commit_ts for r in done), default=0),
        "watermark": watermark,
        "seconds": round(seconds, 3),
    }
