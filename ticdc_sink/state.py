"""What the driver keeps under the checkpoint location so replays stay byte-identical and
watermarks never go backwards across query restarts.

Layout, under `<checkpointLocation>/ticdc/`:

    commit-ts/<batchId>   the default commit ts chosen for that micro-batch (decimal text)
    watermark             the highest watermark ts sent (decimal text)
    tables/<sha1>         the last committed schema of a table (JSON), for DDL messages
    ddl/<batchId>         the DDL text sent before that micro-batch (sent once per batch)
    reports/<name>.json   one JSON line per committed batch (see README, "Batch reports")

Files are written whole and renamed into place, so a reader never sees half a number.
Paths with a URI scheme go through `pyarrow.fs` (s3://, gs://, hdfs://, file://).
"""

from __future__ import annotations

import hashlib
import logging
import os
import posixpath
import uuid

import pyarrow.fs as pafs

from ticdc_sink import tso
from ticdc_sink.errors import ConfigError

__all__ = ["SinkState"]

logger = logging.getLogger(__name__)

# Commit ts files older than this many batches are pruned; a replay only ever re-runs the
# last batch (or the last few after a crash), so this bounds the folder.
_KEEP_BATCHES = 100
_KEEP_REPORTS = 1000


class SinkState:
    """The sink's own files under one checkpoint location."""

    def __init__(self, checkpoint_location: str) -> None:
        try:
            fs, path = pafs.FileSystem.from_uri(_as_uri(checkpoint_location))
        except (ValueError, OSError) as exc:  # pyarrow's ArrowInvalid is a ValueError
            raise ConfigError(
                f"checkpoint location {checkpoint_location!r} is not a file system pyarrow can "
                "write to; use a local path or a file://, s3://, gs:// or hdfs:// URI",
                option="checkpointLocation",
            ) from exc
        self._fs = fs
        self._checkpoint = path
        self._root = posixpath.join(path, "ticdc")

    def current_batch_id(self) -> int:
        """The micro-batch Spark is planning: the newest entry of its offset log, which
        Spark writes before it asks the sink for a writer (measured on PySpark 4.3)."""
        batches = self._list_batches(posixpath.join(self._checkpoint, "offsets"))
        if not batches:
            raise ConfigError(
                "no micro-batch in the offset log of checkpointLocation; is it the query's "
                "checkpoint location?",
                option="checkpointLocation",
            )
        return batches[-1]

    def commit_ts_for_batch(self, batch_id: int) -> int:
        """The default commit ts of a micro-batch: the one chosen before if the batch is a
        replay, else a new TSO above every earlier batch's and every watermark sent."""
        folder = posixpath.join(self._root, "commit-ts")
        known = self._list_batches(folder)
        if batch_id in known:
            return int(self._read(posixpath.join(folder, str(batch_id))))
        floor = max(
            [int(self._read(posixpath.join(folder, str(b)))) for b in known[-1:]]
            + [self.last_watermark() or 0]
        )
        ts = max(tso.now(), floor + 1)
        self._write(posixpath.join(folder, str(batch_id)), str(ts))
        for old in known:
            if old < batch_id - _KEEP_BATCHES:
                self._fs.delete_file(posixpath.join(folder, str(old)))
        return ts

    def last_watermark(self) -> int | None:
        """The highest watermark ts sent so far, or None."""
        path = posixpath.join(self._root, "watermark")
        if self._fs.get_file_info(path).type == pafs.FileType.NotFound:
            return None
        return int(self._read(path))

    def record_watermark(self, ts: int) -> None:
        self._write(posixpath.join(self._root, "watermark"), str(ts))

    def last_table_schema(self, database: str, table: str) -> str | None:
        """The schema text recorded by the last committed batch that wrote the table."""
        path = self._table_path(database, table)
        if self._fs.get_file_info(path).type == pafs.FileType.NotFound:
            return None
        return self._read(path)

    def record_table_schema(self, database: str, table: str, text: str) -> None:
        self._write(self._table_path(database, table), text)

    def ddl_sent_for_batch(self, batch_id: int) -> bool:
        """Whether the DDL of a micro-batch went out already: Spark asks for the stream
        writer more than once per batch, and a re-run batch must not announce it again."""
        path = posixpath.join(self._root, "ddl", str(batch_id))
        return self._fs.get_file_info(path).type != pafs.FileType.NotFound

    def record_ddl_sent(self, batch_id: int, ddl: str) -> None:
        folder = posixpath.join(self._root, "ddl")
        self._write(posixpath.join(folder, str(batch_id)), ddl)
        for old in self._list_batches(folder):
            if old < batch_id - _KEEP_BATCHES:
                self._fs.delete_file(posixpath.join(folder, str(old)))

    def record_report(self, name: str, line: str) -> str:
        """Keep one batch's report as `reports/<name>.json`; returns its path. The
        oldest are pruned beyond the last 1000."""
        folder = posixpath.join(self._root, "reports")
        path = posixpath.join(folder, f"{name}.json")
        self._write(path, line + "\n")
        info = self._fs.get_file_info(pafs.FileSelector(folder, allow_not_found=True))
        names = sorted((i.mtime_ns or 0, i.path) for i in info if i.base_name.endswith(".json"))
        for _, old in names[: max(0, len(names) - _KEEP_REPORTS)]:
            self._fs.delete_file(old)
        return path

    def reports(self) -> list[str]:
        """The kept batch reports (`record_report`), one JSON text each, in the order
        they were written (oldest first)."""
        folder = posixpath.join(self._root, "reports")
        info = self._fs.get_file_info(pafs.FileSelector(folder, allow_not_found=True))
        found = sorted((i.mtime_ns or 0, i.path) for i in info if i.base_name.endswith(".json"))
        return [self._read(path) for _, path in found]

    def _table_path(self, database: str, table: str) -> str:
        # Hashed: database and table names may hold any character.
        digest = hashlib.sha1(f"{database}\x00{table}".encode()).hexdigest()
        return posixpath.join(self._root, "tables", digest)

    def _list_batches(self, folder: str) -> list[int]:
        info = self._fs.get_file_info(pafs.FileSelector(folder, allow_not_found=True))
        return sorted(int(i.base_name) for i in info if i.base_name.isdigit())

    def _read(self, path: str) -> str:
        with self._fs.open_input_stream(path) as f:
            return f.read().decode().strip()

    def _write(self, path: str, text: str) -> None:
        folder = posixpath.dirname(path)
        self._fs.create_dir(folder, recursive=True)
        tmp = posixpath.join(folder, f".{posixpath.basename(path)}.{uuid.uuid4().hex}.tmp")
        with self._fs.open_output_stream(tmp) as f:
            f.write(text.encode())
        self._fs.move(tmp, path)


def _as_uri(location: str) -> str:
    if "://" in location:
        return location
    return "file://" + os.path.abspath(location)
