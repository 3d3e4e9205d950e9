"""A streaming read's micro-batches as the driver plans them, one after the other, for the
whole query (`MicroBatches`): the scan of the topics (`stream.StreamScan`, made on first
use), where the next micro-batch starts, the end of a Trigger.AvailableNow run and the
wait of `minOffsetsPerTrigger`. The data source's stream reader hands Spark's calls here;
offsets go back to Spark as `stream.StreamOffset` JSON.

Knows nothing of Spark: Spark's read limits arrive as a cap (`maxOffsetsPerTrigger`) and
whether everything available is asked for (Trigger.Once).
"""

from __future__ import annotations

from collections.abc import Callable

from ticdc_sink.read.consumer import TopicLog
from ticdc_sink.read.options import ReadConfig
from ticdc_sink.read.plan import ReadPlan
from ticdc_sink.read.split import Task
from ticdc_sink.read.stream import Cut, StreamOffset, StreamScan, TriggerDelay, log_cut
from ticdc_sink.schema import TableSchema

__all__ = ["MicroBatches"]


class MicroBatches:
    """The micro-batches of one streaming read, planned on the driver.

    Spark keeps its stream reader on the driver for the whole query and calls it from one
    thread; so is this object used. The scan (and its consumer, `open_log(config)`) is
    made on first use and closed by `stop`.
    """

    def __init__(
        self, plan: ReadPlan, open_log: Callable[[ReadConfig], TopicLog] = TopicLog
    ) -> None:
        self.plan = plan
        self._open_log = open_log
        self._scan: StreamScan | None = None
        self._target: dict[tuple[str, int], int] | None = None  # Trigger.AvailableNow's end
        minimum = plan.config.min_offsets_per_trigger
        self._wait = (
            None if minimum is None else TriggerDelay(minimum, plan.config.max_trigger_delay_s)
        )
        # Where the next micro-batch starts, for PySpark < 4.2, whose latestOffset gets no
        # start: the initial offset, then each batch's end. After a restart Spark names
        # the checkpoint's last end through `partitions` (an empty range, and the range of
        # a batch it runs again) before it asks for the next end; not to a
        # Trigger.AvailableNow run (docs/guides/reading-streams.md).
        self._last: StreamOffset | None = None

    def scan(self) -> StreamScan:
        """The scan of the stream's topics, made on first use."""
        if self._scan is None:
            plan = self.plan
            log = self._open_log(plan.config)
            self._scan = StreamScan(plan.config, plan.table, plan.known, log)
        return self._scan

    def initial_offset(self) -> StreamOffset:
        """Where the first micro-batch starts (`startingOffsets`)."""
        self._last = self.scan().initial_offset()
        return self._last

    def reported_latest(self) -> dict[str, dict[str, int]] | None:
        """The partitions' ends when the last micro-batch was planned, as Spark's Kafka
        source reports them; None before any."""
        latest = self._scan.latest if self._scan is not None else {}
        if not latest:
            return None
        return StreamOffset(latest, {}).kafka_json()

    def prepare_available_now(self) -> None:
        """Trigger.AvailableNow: read as far as the partitions' ends now, then stop."""
        self._target = {key: high for key, (_, high) in self.scan().bounds().items()}

    def next_cut(
        self, start: StreamOffset | None, *, cap: int | None = None, everything: bool = False
    ) -> Cut:
        """The next micro-batch from `start` (None: where the last one ended), at most
        `cap` offsets; `everything`: all that is there (Trigger.Once: no cap, no wait).
        Trigger.AvailableNow reads what there is and ends: it never waits for more. A
        micro-batch that moves is logged (`stream.log_cut`)."""
        scan = self.scan()
        begin = start if start is not None else self._last or scan.initial_offset()
        wait = None if everything or self._target is not None else self._wait
        cut = scan.next_cut(begin, self._target, cap, wait)
        if cut.end != begin:
            log_cut(self.plan.config, begin, cut)
        self._last = cut.end
        return cut

    def tasks(
        self, start: StreamOffset, end: StreamOffset
    ) -> tuple[list[Task], tuple[TableSchema, ...]]:
        """The tasks of the micro-batch from `start` to `end`, and the table schemas they
        need; the next micro-batch starts at `end`."""
        self._last = end
        scan = self.scan()
        scan.cover(start, end)
        known = scan.tables
        return scan.tasks(start, end), known

    def commit(self, end: StreamOffset) -> None:
        """Spark committed the micro-batches up to `end`: what the scan kept of them goes."""
        if self._scan is not None:
            self._scan.forget_before(end)

    def stop(self) -> None:
        """Close the scan's consumer."""
        if self._scan is not None:
            self._scan.close()
            self._scan = None
