"""Where a query's checkpoint location is, read the way Spark reads it, opened with pyarrow.fs.

The sink keeps its state under the checkpoint and reads Spark's offset log there, so it must
open the very folder Spark writes. Spark qualifies a location with Hadoop's default file
system; this module cannot see Hadoop's configuration, so it reads what the location says
and refuses what it cannot read, and the callers verify the result against Spark's own
files (`SinkState.query_id`, `SinkState.current_batch_id`) so that a mismatch is an error,
never a silently different folder:

| location | read as |
| --- | --- |
| `/chk/q`, `chk/q` (no scheme) | a local path (relative: to the driver's working folder) |
| `file:/chk/q`, `file:///chk/q` | a local path |
| `s3://b/chk`, `s3a://b/chk`, `s3n://b/chk` | S3 through pyarrow (AWS credential chain) |
| `gs://b/chk`, `gcs://b/chk` | Google Cloud Storage through pyarrow |
| `hdfs://nn:8020/chk`, `viewfs://...` | HDFS through pyarrow (needs libhdfs and a JVM) |
| `abfs://...`, `abfss://...` | Azure storage through pyarrow, where pyarrow has it |
| any other scheme (`dbfs:`, `wasbs:`, ...) | refused: ConfigError naming the scheme |

Knows no Spark objects: plain strings in, a pyarrow file system and a path out.
"""

from __future__ import annotations

import os
import posixpath
import re

import pyarrow.fs as pafs

from ticdc_sink.errors import ConfigError

__all__ = ["SESSION_ROOT_CONF", "open_location", "session_location"]

# The session conf Spark falls back to when a query names no checkpoint location.
SESSION_ROOT_CONF = "spark.sql.streaming.checkpointLocation"

# Hadoop's S3A and S3N connectors and pyarrow's S3 file system name the same buckets and
# keys; only how credentials and endpoints are configured differs.
_S3_ALIASES = frozenset({"s3a", "s3n"})
_PYARROW_SCHEMES = frozenset({"s3", "gs", "gcs", "hdfs", "viewfs", "abfs", "abfss"})
_SUPPORTED = "a local path, a file: URI, or an s3://, s3a://, gs://, hdfs:// or abfss:// URI"
# A URI scheme as Hadoop's Path finds one: letters first, a colon before any slash.
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")


def open_location(location: str) -> tuple[pafs.FileSystem, str]:
    """The file system and path of a checkpoint location.

    Raises:
        ConfigError: naming `checkpointLocation`, when the scheme is one the sink cannot
            read or pyarrow cannot open the location.
    """
    match = _SCHEME.match(location)
    scheme = match.group(1).lower() if match else ""
    if scheme in ("", "file"):
        path = location
        if scheme == "file":
            path = location[len("file:") :]
            if path.startswith("//"):
                host, _, rest = path[2:].partition("/")
                if host not in ("", "localhost"):
                    raise _refused(location, f"names the host {host!r}")
                path = "/" + rest
        return pafs.LocalFileSystem(), os.path.abspath(path)
    if scheme not in _PYARROW_SCHEMES and scheme not in _S3_ALIASES:
        raise _refused(location, f"has the scheme '{scheme}', which the sink cannot read")
    uri = "s3" + location[len(scheme) :] if scheme in _S3_ALIASES else location
    try:
        return pafs.FileSystem.from_uri(uri)
    except (ValueError, OSError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise _refused(location, f"cannot be opened ({type(exc).__name__})") from exc


def session_location(root: str, query_name: str) -> str:
    """The location Spark gives a named query from the session conf: `<root>/<queryName>`
    (Spark's `ResolveWriteToStream`, `new Path(root, queryName)`)."""
    return posixpath.join(root, query_name)


def _refused(location: str, why: str) -> ConfigError:
    return ConfigError(
        f"checkpoint location {location!r} {why}; use {_SUPPORTED}, the same location "
        "Spark checkpoints the query to",
        option="checkpointLocation",
        value=location,
    )
