"""When a Simple-protocol BOOTSTRAP is due, remembered per Python worker process.

TiCDC sends a table's BOOTSTRAP when it first sees the table and then every
`send-bootstrap-interval-in-sec` seconds or `send-bootstrap-in-msg-count` rows (tiflow
cdc/sink/dmlsink/mq/bootstrap_worker.go, `addEvent` and `shouldSendBootstrapMsg`). Spark
starts new tasks for every micro-batch but reuses its Python workers, so the schedule lives
here, at module level, instead of in a task: a streaming query sends a table's BOOTSTRAP
once and then by interval and count, not again in every task of every micro-batch.

The schedule is keyed by everything a BOOTSTRAP's bytes and destination depend on (the
brokers, topic, partitions it went to, codec options and the whole table schema), so a
schema change, another topic or another cluster finds no entry and sends at once. A task
records what it sent only after the broker acknowledged it (`record`), so a failed task's
BOOTSTRAPs are sent again by its retry. Knows nothing of Spark or Kafka.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping

from ticdc_sink.config import CodecConfig
from ticdc_sink.schema import TableSchema

__all__ = ["PROCESS_BOOTSTRAPS", "BootstrapMark", "BootstrapSchedule", "bootstrap_key"]

# Entries kept: one per (topic, table schema) a worker wrote, about 100 bytes each, so
# ~10 MB at most; a table evicted by newer ones only gets its BOOTSTRAP again early.
_CAPACITY = 100_000

BootstrapMark = tuple[float, int]
"""When a table's last BOOTSTRAP was sent (the schedule's clock) and rows sent since."""


def bootstrap_key(
    servers: str, topic: str, partitions: int, codec: CodecConfig, schema: TableSchema
) -> bytes:
    """A digest of what a BOOTSTRAP's bytes and destination depend on. Digested so the
    schedule keeps 32 bytes per entry, not the schema and options themselves."""
    text = repr((servers, topic, partitions, codec, schema))
    return hashlib.sha256(text.encode()).digest()


class BootstrapSchedule:
    """The last BOOTSTRAP per key, least recently used dropped beyond `capacity`.

    Shared by every task a Python worker runs (one at a time, or in threads), hence the
    lock. `clock` is injectable so tests need no sleeps."""

    def __init__(
        self, capacity: int = _CAPACITY, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.capacity = capacity
        self.clock = clock
        self._marks: OrderedDict[bytes, BootstrapMark] = OrderedDict()
        self._lock = threading.Lock()

    def last(self, key: bytes) -> BootstrapMark | None:
        """The key's last BOOTSTRAP, or None: never sent (or forgotten), so send it now."""
        with self._lock:
            mark = self._marks.get(key)
            if mark is not None:
                self._marks.move_to_end(key)
            return mark

    def record(self, marks: Mapping[bytes, BootstrapMark]) -> None:
        """What a task sent and the broker acknowledged."""
        with self._lock:
            for key, mark in marks.items():
                self._marks[key] = mark
                self._marks.move_to_end(key)
            while len(self._marks) > self.capacity:
                self._marks.popitem(last=False)

    def __len__(self) -> int:
        return len(self._marks)

    def clear(self) -> None:
        with self._lock:
            self._marks.clear()


PROCESS_BOOTSTRAPS = BootstrapSchedule()
"""The schedule of this Python process, which Spark reuses across tasks and micro-batches."""
