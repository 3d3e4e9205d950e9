"""The resolved ts of a micro-batch, read from the query's offset log.

A `foreachBatch` function sees the batch's rows and id, not where the batch ends. Spark
writes the batch's end offsets to `<checkpointLocation>/offsets/<batchId>` before it runs
the batch (and a re-run reads the same file): a line `v1`, a line of batch metadata, then
one line per source, ours the JSON of `ticdc_sink.read.stream.StreamOffset`, whose
`ticdc:resolved-ts` holds each partition's resolved ts at the batch's end. Under
`consistency=watermark` every partition ends just after the same watermark, so the
smallest of them is the batch's resolved ts: the TiDB ts the source table is at once the
batch is applied.

Knows the offset log's layout and the checkpoint's file systems; nothing of Spark objects.
"""

from __future__ import annotations

import json
import posixpath

from ticdc_sink.checkpoint import open_location
from ticdc_sink.errors import ConfigError
from ticdc_sink.read.stream import RESOLVED_KEY, StreamOffset

__all__ = ["batch_resolved_ts", "resolved_ts_of_offsets"]


def batch_resolved_ts(checkpoint: str, batch_id: int) -> int | None:
    """The resolved ts at the end of micro-batch `batch_id` of the query checkpointed to
    `checkpoint`; None when its offsets carry none (a stream not read with
    `format("ticdc")`, or one that has not passed a watermark in every partition yet).

    Raises:
        ConfigError: naming `checkpoint`, when the location cannot be read or holds no
            offsets for the batch (it is not the query's checkpoint location).
    """
    fs, root = open_location(checkpoint)
    path = posixpath.join(root, "offsets", str(batch_id))
    try:
        with fs.open_input_stream(path) as stream:
            text = stream.read().decode()
    except OSError as exc:  # pyarrow raises FileNotFoundError, ArrowIOError (OSErrors)
        raise ConfigError(
            f"mirror: no offsets of micro-batch {batch_id} at {path!r}; give checkpoint= "
            "the query's checkpointLocation",
            option="checkpoint",
            value=checkpoint,
        ) from exc
    return resolved_ts_of_offsets(text)


def resolved_ts_of_offsets(text: str) -> int | None:
    """The smallest resolved ts of every `format("ticdc")` source in the text of an offset
    log entry; None if no such source, or a partition has no resolved ts yet (0)."""
    found: list[int] = []
    for line in text.splitlines()[2:]:
        try:
            value = json.loads(line)
        except ValueError:
            continue  # "-": a source without an offset in this batch
        if isinstance(value, dict) and RESOLVED_KEY in value:
            offset = StreamOffset.from_json(value)
            found.extend(offset.resolved.values())
    if not found or min(found) <= 0:
        return None
    return min(found)
