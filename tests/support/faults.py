"""A test-only data source, `format("ticdc_faults")`: `format("ticdc")` with faults injected
where the reliability tests need them, so the shipped package carries no test hooks.

| option | fault |
| --- | --- |
| `fail-first-attempt` = n | attempt 0 of every write task sends n messages, waits until |
|  | the broker acknowledged them, then raises, so Spark retries the task after real |
|  | sends (needs a master with retries, e.g. `local[2,3]`) |
| `hang-after-commit` = id | the streaming commit of micro-batch `id` completes (watermark |
|  | recorded, sent and confirmed, report kept under the checkpoint), then never |
|  | returns, so the test can kill the driver after the sink's commit and before Spark |
|  | records the batch |

Every other option goes to `TiCDCDataSource` as it is. `tests/support/spark_job.py`
registers this source in a driver of its own (`--fail-first-attempt`,
`--hang-after-commit`). Spark's Python workers unpickle its writers by reference, so they
must import this module: the repository's root is on their PYTHONPATH (`start_job` sets
it; local-mode workers inherit the driver's environment).
"""

from __future__ import annotations

import time
from collections.abc import MutableMapping
from typing import Any

import attrs
from pyspark import TaskContext
from pyspark.sql.datasource import CaseInsensitiveDict, DataSourceStreamWriter
from pyspark.sql.types import StructType

from ticdc_sink import datasource
from ticdc_sink.config import KafkaConfig
from ticdc_sink.datasource import TiCDCBatchWriter, TiCDCDataSource, TiCDCStreamRowWriter
from ticdc_sink.producer import KafkaProducer

__all__ = [
    "FAIL_FIRST_ATTEMPT",
    "HANG_AFTER_COMMIT",
    "FailFirstAttempt",
    "FailingProducer",
    "FaultsDataSource",
]

FAIL_FIRST_ATTEMPT = "fail-first-attempt"
HANG_AFTER_COMMIT = "hang-after-commit"


class FailingProducer(KafkaProducer):
    """A producer that fails its task once `fail_after` messages were sent and
    acknowledged, so a retry really re-sends delivered messages."""

    def __init__(self, config: KafkaConfig, *, fail_after: int, **kwargs: Any) -> None:
        super().__init__(config, **kwargs)
        self._fail_after = fail_after

    def send(self, topic: str, partition: int, key: bytes | None, value: bytes | None) -> None:
        super().send(topic, partition, key, value)
        self._fail_if_due()

    def send_many(
        self,
        topic: str,
        partition: int | list[int],
        key: bytes | None,
        values: list[bytes | None],
        *,
        keys: list[bytes | None] | None = None,
    ) -> None:
        # The column-wise path sends in bulk: send up to the failure point, then fail.
        room = self._fail_after - self.sent
        if room <= 0 or room >= len(values):
            super().send_many(topic, partition, key, values, keys=keys)
        else:
            super().send_many(
                topic,
                partition if isinstance(partition, int) else partition[:room],
                key,
                values[:room],
                keys=None if keys is None else keys[:room],
            )
        self._fail_if_due()

    def _fail_if_due(self) -> None:
        if self.sent == self._fail_after:
            self.flush()
            raise RuntimeError(
                f"ticdc: injected test failure after {self.sent} acknowledged messages "
                f"({FAIL_FIRST_ATTEMPT})"
            )


@attrs.frozen
class FailFirstAttempt:
    """The writers' producer factory: a `FailingProducer` in attempt 0 of a task, a
    `KafkaProducer` in later attempts and outside tasks (the driver's commit step)."""

    fail_after: int

    def __call__(self, config: KafkaConfig, **kwargs: Any) -> KafkaProducer:
        context = TaskContext.get()
        if context is None or context.attemptNumber() > 0:
            return KafkaProducer(config, **kwargs)
        return FailingProducer(config, fail_after=self.fail_after, **kwargs)


class _HangAfterCommit:
    """Stream writers whose commit of micro-batch `hang_batch` never returns."""

    hang_batch: int | None = None

    def commit(self, messages: list[Any], batchId: int) -> None:  # noqa: N803 (Spark's name)
        super().commit(messages, batchId)  # type: ignore[misc]
        if batchId == self.hang_batch:
            while True:  # until the test kills the driver
                time.sleep(1)


class HangingStreamRowWriter(_HangAfterCommit, TiCDCStreamRowWriter):
    pass


if datasource.DataSourceStreamArrowWriter is not None:

    class HangingStreamWriter(_HangAfterCommit, datasource.TiCDCStreamWriter):
        pass


class FaultsDataSource(TiCDCDataSource):
    """`ticdc` with the faults of the module docstring."""

    def __init__(self, options: MutableMapping[str, str]) -> None:
        sink_options = CaseInsensitiveDict(options)
        fail_after = sink_options.pop(FAIL_FIRST_ATTEMPT, None)
        hang_batch = sink_options.pop(HANG_AFTER_COMMIT, None)
        self.fail_after = int(fail_after) if fail_after is not None else None
        self.hang_batch = int(hang_batch) if hang_batch is not None else None
        super().__init__(sink_options)

    @classmethod
    def name(cls) -> str:
        return "ticdc_faults"

    def writer(self, schema: StructType, overwrite: bool) -> TiCDCBatchWriter:
        return self._inject(super().writer(schema, overwrite))

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        writer = self._inject(super().streamWriter(schema, overwrite))
        if self.hang_batch is not None:
            # The same writer, with the commit above: the class is all that changes.
            if isinstance(writer, TiCDCStreamRowWriter):
                writer.__class__ = HangingStreamRowWriter
            else:
                writer.__class__ = HangingStreamWriter
            writer.hang_batch = self.hang_batch
        return writer

    def _inject(self, writer: Any) -> Any:
        if self.fail_after is not None:
            writer.producer_factory = FailFirstAttempt(self.fail_after)
        return writer
