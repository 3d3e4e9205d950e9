"""What the driver keeps under the checkpoint location so replays stay byte-identical and
watermarks never go backwards across query restarts.

Layout, under `<checkpointLocation>/ticdc/`:

    commit-ts/<batchId>   the default commit ts chosen for that micro-batch (decimal text)
    watermark             the highest watermark ts sent (decimal text)
    tables/<sha1>         the last committed schema of a table (JSON), for DDL messages
    ddl/<batchId>         the DDL text sent before that micro-batch (sent once per batch)
    reports/<name>.json   one JSON line per committed batch (see README, "Batch reports")

Files are written whole and renamed into place, so a reader never sees half a number.
`ticdc_sink.checkpoint` says which locations open how (local, file:, s3a://, ...).
"""

from __future__ import annotations

import hashlib
import json
import logging
import posixpath
import uuid

import pyarrow.fs as pafs

from ticdc_sink import tso
from ticdc_sink.checkpoint import open_location
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
        fs, path = open_location(checkpoint_location)
        self.location = checkpoint_location
        self._fs = fs
        self._checkpoint = path
        self._root = posixpath.join(path, "ticdc")

    def current_batch_id(self) -> int:
        """The micro-batch Spark is planning: the newest entry of its offset log, which
        Spark writes before it asks the sink for a writer (measured on PySpark 4.3)."""
        batches = self._list_batches(posixpath.join(self._checkpoint, "offsets"))
        if not batches:
            raise ConfigError(
                f"no micro-batch in the offset log of checkpointLocation {self.location!r} "
                f"(read at {self._checkpoint!r}); is it the folder Spark checkpoints the "
                "query to? Give the location as a full URI (hdfs://, s3a://, file:) when "
                "Spark's default file system is not the local one",
                option="checkpointLocation",
                value=self.location,
            )
        return batches[-1]

    def query_id(self) -> str | None:
        """The id of the streaming query Spark keeps in `<checkpoint>/metadata` (the same
        across restarts), or None when there is no such file: then this is not the folder
        Spark checkpoints the query to."""
        path = posixpath.join(self._checkpoint, "metadata")
        if self._fs.get_file_info(path).type == pafs.FileType.NotFound:
            return None
        try:
            return str(json.loads(self._read(path))["id"])
        except (ValueError, KeyError, TypeError):
            return None

    def batch_timestamp_ms(self, batch_id: int) -> int | None:
        """When Spark started a micro-batch (`batchTimestampMs` in `offsets/<batchId>`),
        the same again when the batch is replayed; None without that entry."""
        path = posixpath.join(self._checkpoint, "offsets", str(batch_id))
        if self._fs.get_file_info(path).type == pafs.FileType.NotFound:
            return None
        lines = self._read(path).splitlines()
        try:
            return int(json.loads(lines[1])["batchTimestampMs"])
        except (IndexError, ValueError, KeyError, TypeError):
            return None

    def commit_ts_for_batch(self, batch_id: int) -> int:
        """The default commit ts of a micro-batch: the one chosen before if the batch is a
        replay, else a TSO above every earlier batch's and every watermark sent.

        A new one is Spark's batch timestamp (from the offset log; now without it), so
        every caller that asks before the first one recorded it gets the same value: the
        tasks of a query whose checkpoint only they can find ask at the same time.
        """
        folder = posixpath.join(self._root, "commit-ts")
        known = self._list_batches(folder)
        if batch_id in known:
            return int(self._read(posixpath.join(folder, str(batch_id))))
        earlier = [b for b in known if b < batch_id][-1:]
        floor = max(
            [int(self._read(posixpath.join(folder, str(b)))) for b in earlier]
            + [self.last_watermark() or 0]
        )
        started_ms = self.batch_timestamp_ms(batch_id)
        started = tso.compose(started_ms) if started_ms is not None else tso.now()
        ts = max(started, floor + 1)
        self._write(posixpath.join(folder, str(batch_id)), str(ts))
        for old in known:
            if old < batch_id - _KEEP_BATCHES:
                self._delete(posixpath.join(folder, str(old)))
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
                self._delete(posixpath.join(folder, str(old)))

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

    def _table_path(self, database: str, table: str) -> str:
        # Hashed: database and table names may hold any character.
        digest = hashlib.sha1(f"{database}\x00{table}".encode()).hexdigest()
        return posixpath.join(self._root, "tables", digest)

    def _list_batches(self, folder: str) -> list[int]:
        info = self._fs.get_file_info(pafs.FileSelector(folder, allow_not_found=True))
        return sorted(int(i.base_name) for i in info if i.base_name.isdigit())

    def _delete(self, path: str) -> None:
        # Tasks that find the checkpoint themselves prune at the same time.
        try:
            self._fs.delete_file(path)
        except FileNotFoundError:
            pass

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
