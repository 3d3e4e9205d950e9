"""What the driver keeps under the checkpoint location so replays stay byte-identical and
watermarks never go backwards across query restarts.

Layout, under `<checkpointLocation>/ticdc/`:

    commit-ts/<batchId>   the default commit ts chosen for that micro-batch (decimal text)
    watermark             the highest watermark ts that may have been sent (JSON, see
                          `WatermarkRecord`; older versions wrote decimal text)
    tables/<sha1>         the last committed schema of a table (JSON), for DDL messages
    ddl/<batchId>         the DDL text sent before that micro-batch (sent once per batch)
    reports/<name>.json   one JSON line per committed batch (see README, "Batch reports")

Files are written whole and renamed into place, so a reader never sees half a number.
Paths with a URI scheme go through `pyarrow.fs` (s3://, gs://, hdfs://, file://). Every
failure to read or write them is a `ConfigError` naming `checkpointLocation` and the path,
never a raw `OSError`.
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
        by default it is found from the location's scheme.

        Raises:
            ConfigError: pyarrow has no file system for the location.
        """
        self._location = checkpoint_location
        if filesystem is not None:
            fs, path = filesystem, checkpoint_location
        else:
            try:
                fs, path = pafs.FileSystem.from_uri(_as_uri(checkpoint_location))
            except (ValueError, OSError) as exc:  # pyarrow's ArrowInvalid is a ValueError
                raise ConfigError(
                    f"checkpoint location {checkpoint_location!r} is not a file system pyarrow "
                    "can write to; use a local path or a file://, s3://, gs:// or hdfs:// URI",
                    option="checkpointLocation",
                ) from exc
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
            return self._read_int(posixpath.join(folder, str(batch_id)))
        floor = max(
            [self._read_int(posixpath.join(folder, str(b))) for b in known[-1:]]
            + [self.last_watermark() or 0]
        )
        ts = max(tso.now(), floor + 1)
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
                f"the watermark recorded under checkpointLocation {self._location!r} is not "
                f"{ts}; is another query writing with the same checkpoint location?",
                option="checkpointLocation",
                value=self._location,
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
        with self._io("delete", path):
            self._fs.delete_file(path)

    @contextlib.contextmanager
    def _io(self, doing: str, path: str) -> Iterator[None]:
        """Turn a file system error into a ConfigError naming the option and the path."""
        try:
            yield
        except (OSError, pa.ArrowException) as exc:
            errno = getattr(exc, "errno", None)
            reason = os.strerror(errno) if errno else str(exc).split(". Detail:")[0]
            raise ConfigError(
                f"option 'checkpointLocation' is {self._location!r}, where the sink cannot "
                f"{doing} {path!r} ({reason}); give a directory the driver can create, read "
                "and write (the sink keeps its state under <checkpointLocation>/ticdc/)",
                option="checkpointLocation",
                value=self._location,
            ) from exc

    def _unreadable(self, path: str, text: str) -> ConfigError:
        return ConfigError(
            f"file {path!r} under option 'checkpointLocation' holds {text[:40]!r}, which the "
            "sink did not write; was it edited? Restore it or start with a new checkpoint "
            "location",
            option="checkpointLocation",
            value=self._location,
        )


def _as_uri(location: str) -> str:
    if "://" in location:
        return location
    return "file://" + os.path.abspath(location)
