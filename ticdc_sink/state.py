"""What the driver keeps under the checkpoint location so replays stay byte-identical and
watermarks never go backwards across query restarts.

Layout, under `<checkpointLocation>/ticdc/`:

    commit-ts/<batchId>   the default commit ts chosen for that micro-batch (decimal text)
    watermark             the highest watermark ts that may have been sent (JSON, see
                          `WatermarkRecord`; older versions wrote decimal text)
    tables/<sha1>         the last committed schema of a table (JSON), for DDL messages
    ddl/<batchId>         the DDL text sent before that micro-batch (sent once per batch)
    reports/<name>.json   one JSON line per committed batch (see docs/guides/reports.md)

Files are written whole and renamed into place, so a reader never sees half a number.
`ticdc_sink.checkpoint` says which locations open how (local, file:, s3a://, ...).
Every failure to read or write them is a `ConfigError` naming `checkpointLocation` and the
path, never a raw `OSError`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import posixpath
import uuid
from collections.abc import Iterator

import attrs
import pyarrow as pa
import pyarrow.fs as pafs

from ticdc_sink import tso
from ticdc_sink.checkpoint import open_location
from ticdc_sink.errors import ConfigError

__all__ = ["SinkState", "WatermarkRecord"]

logger = logging.getLogger(__name__)

# Commit ts files older than this many batches are pruned; a replay only ever re-runs the
# last batch (or the last few after a crash), so this bounds the folder.
_KEEP_BATCHES = 100
_KEEP_REPORTS = 1000


@attrs.frozen
class WatermarkRecord:
    """The last watermark the sink recorded.

    It is recorded before it is sent, so a watermark that may be in a topic is never
    forgotten (watermarks never go backwards, even after a send that failed halfway), and
    marked `sent` once every partition acknowledged it. `batch_id` is the micro-batch that
    recorded it (None: a batch job) and `previous` the watermark before it: a re-run of
    that micro-batch re-sends its own rows, which may lie at or below `ts` but not below
    `previous`. `legacy`: written by an older version, which kept the ts only.
    """

    ts: int
    batch_id: int | None = None
    previous: int | None = None
    sent: bool = True
    legacy: bool = False


class SinkState:
    """The sink's own files under one checkpoint location."""

    def __init__(
        self, checkpoint_location: str, *, filesystem: pafs.FileSystem | None = None
    ) -> None:
        """`filesystem`: the file system `checkpoint_location` is a path of (tests);
        by default `checkpoint.open_location` finds it from the location.

        Raises:
            ConfigError: the location is not one the sink can read.
        """
        self.location = checkpoint_location
        if filesystem is not None:
            fs, path = filesystem, checkpoint_location
        else:
            fs, path = open_location(checkpoint_location)
        self._fs = fs
        self._checkpoint = path
        self._root = posixpath.join(path, "ticdc")

    def check_writable(self) -> None:
        """Create `<checkpointLocation>/ticdc/` and write and delete a file there, so a
        location the sink cannot keep its state in fails before anything is sent.

        Raises:
            ConfigError: naming `checkpointLocation` and the path that failed.
        """
        probe = posixpath.join(self._root, f".probe-{uuid.uuid4().hex}")
        self._write(probe, "")
        with self._io("delete", probe):
            self._fs.delete_file(probe)

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
            return self._read_int(posixpath.join(folder, str(batch_id)))
        earlier = [b for b in known if b < batch_id][-1:]
        floor = max(
            [self._read_int(posixpath.join(folder, str(b))) for b in earlier]
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
        """The highest watermark ts that may have been sent so far, or None."""
        record = self.watermark_record()
        return record.ts if record is not None else None

    def watermark_record(self) -> WatermarkRecord | None:
        """The last watermark recorded, or None before the first."""
        path = posixpath.join(self._root, "watermark")
        if not self._exists(path):
            return None
        text = self._read(path)
        try:
            if text.isdigit():  # an older version's file: the ts alone
                return WatermarkRecord(int(text), legacy=True)
            data = json.loads(text)
            return WatermarkRecord(
                ts=int(data["ts"]),
                batch_id=data["batch_id"],
                previous=data["previous"],
                sent=bool(data["sent"]),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise self._unreadable(path, text) from exc

    def watermark_floor(self, batch_id: int | None) -> int | None:
        """The watermark the rows of a batch must be above: the last one sent, unless
        this micro-batch recorded it (a re-run, whose own rows reach up to it), then the
        one before. None: no watermark to respect. Call it before `commit_ts_for_batch`,
        which marks the batch as planned."""
        record = self.watermark_record()
        if record is None:
            return None
        if batch_id is not None and record.batch_id == batch_id:
            return record.previous
        if record.legacy and batch_id is not None and self._planned(batch_id):
            # A re-run from an older version's checkpoint: whether this batch sent the
            # watermark is not known, so its rows cannot be told from late ones.
            return None
        return record.ts

    def record_watermark(self, ts: int, batch_id: int | None) -> None:
        """Record a watermark before it is sent (`sent` False until `confirm_watermark`)."""
        record = self.watermark_record()
        previous = record.ts if record is not None else None
        if record is not None and batch_id is not None and record.batch_id == batch_id:
            previous = record.previous  # a re-run records over its own first run
        self._write_watermark(WatermarkRecord(ts, batch_id, previous, sent=False))

    def confirm_watermark(self, ts: int) -> None:
        """Mark the recorded watermark `ts` as acknowledged by every partition."""
        record = self.watermark_record()
        if record is None or record.ts != ts:
            raise ConfigError(
                f"the watermark recorded under checkpointLocation {self.location!r} is not "
                f"{ts}; is another query writing with the same checkpoint location?",
                option="checkpointLocation",
                value=self.location,
            )
        self._write_watermark(attrs.evolve(record, sent=True, legacy=False))

    def last_table_schema(self, database: str, table: str) -> str | None:
        """The schema text recorded by the last committed batch that wrote the table."""
        path = self._table_path(database, table)
        if not self._exists(path):
            return None
        return self._read(path)

    def record_table_schema(self, database: str, table: str, text: str) -> None:
        self._write(self._table_path(database, table), text)

    def ddl_sent_for_batch(self, batch_id: int) -> bool:
        """Whether the DDL of a micro-batch went out already: Spark asks for the stream
        writer more than once per batch, and a re-run batch must not announce it again."""
        return self._exists(posixpath.join(self._root, "ddl", str(batch_id)))

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
        with self._io("list", folder):
            info = self._fs.get_file_info(pafs.FileSelector(folder, allow_not_found=True))
        names = sorted((i.mtime_ns or 0, i.path) for i in info if i.base_name.endswith(".json"))
        for _, old in names[: max(0, len(names) - _KEEP_REPORTS)]:
            self._delete(old)
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

    def _planned(self, batch_id: int) -> bool:
        return self._exists(posixpath.join(self._root, "commit-ts", str(batch_id)))

    def _write_watermark(self, record: WatermarkRecord) -> None:
        data = {
            "ts": record.ts,
            "batch_id": record.batch_id,
            "previous": record.previous,
            "sent": record.sent,
        }
        self._write(posixpath.join(self._root, "watermark"), json.dumps(data))

    def _list_batches(self, folder: str) -> list[int]:
        with self._io("list", folder):
            info = self._fs.get_file_info(pafs.FileSelector(folder, allow_not_found=True))
        return sorted(int(i.base_name) for i in info if i.base_name.isdigit())

    def _exists(self, path: str) -> bool:
        with self._io("read", path):
            return self._fs.get_file_info(path).type != pafs.FileType.NotFound

    def _read(self, path: str) -> str:
        with self._io("read", path), self._fs.open_input_stream(path) as f:
            return f.read().decode(errors="replace").strip()

    def _read_int(self, path: str) -> int:
        text = self._read(path)
        if not text.isdigit():
            raise self._unreadable(path, text)
        return int(text)

    def _write(self, path: str, text: str) -> None:
        folder = posixpath.dirname(path)
        with self._io("create directory", folder):
            self._fs.create_dir(folder, recursive=True)
        tmp = posixpath.join(folder, f".{posixpath.basename(path)}.{uuid.uuid4().hex}.tmp")
        with self._io("write", path):
            with self._fs.open_output_stream(tmp) as f:
                f.write(text.encode())
            self._fs.move(tmp, path)

    def _delete(self, path: str) -> None:
        # Tasks that find the checkpoint themselves prune at the same time.
        with self._io("delete", path):
            try:
                self._fs.delete_file(path)
            except FileNotFoundError:
                pass

    @contextlib.contextmanager
    def _io(self, doing: str, path: str) -> Iterator[None]:
        """Turn a file system error into a ConfigError naming the option and the path."""
        try:
            yield
        except (OSError, pa.ArrowException) as exc:
            errno = getattr(exc, "errno", None)
            reason = os.strerror(errno) if errno else str(exc).split(". Detail:")[0]
            raise ConfigError(
                f"option 'checkpointLocation' is {self.location!r}, where the sink cannot "
                f"{doing} {path!r} ({reason}); give a directory the driver can create, read "
                "and write (the sink keeps its state under <checkpointLocation>/ticdc/)",
                option="checkpointLocation",
                value=self.location,
            ) from exc

    def _unreadable(self, path: str, text: str) -> ConfigError:
        return ConfigError(
            f"file {path!r} under option 'checkpointLocation' holds {text[:40]!r}, which the "
            "sink did not write; was it edited? Restore it or start with a new checkpoint "
            "location",
            option="checkpointLocation",
            value=self.location,
        )
