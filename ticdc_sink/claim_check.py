"""Claim-check storage: where `large-message-handle-option=claim-check` puts the full
messages it takes out of Kafka (tiflow `pkg/sink/kafka/claimcheck`), and how consumers
read them back.

`open_store(uri)` gives the store of `claim-check-storage-uri`, which the encoders receive
as a `codec.ClaimCheckStore`:

* `file:///abs/dir`: a local (or mounted shared) directory, created if missing. A file is
  written to a temporary name in the same directory and renamed into place, so a reader
  never sees half a file and a replay that writes the same name again is harmless.
* any other scheme (`s3://bucket/prefix`, `gcs://…`, `memory://…`): through `fsspec` and
  its filesystem packages (`s3fs`, `gcsfs`, …) when installed; without fsspec it is a
  ConfigError saying so. Options in the URI's query are passed to the filesystem as
  storage options.

The location a message names is the URI without trailing "/" and query, then "/" and the
file name (tiflow `FileNameWithPrefix`), e.g. `file:///data/cc/<uuid>.json`.

`read_claim_check(location)` reads such a location back; pass it to the decoders as their
`claim_check_loader` (`SimpleDecoder`, `CanalJsonDecoder`) to get full rows.

Executors write the files: with `file://` the directory must be one every executor can
reach (local mode, or a shared mount). Files are never deleted by the sink.
"""

from __future__ import annotations

import logging
import os
import tempfile
import urllib.parse
from typing import Any

from ticdc_sink.errors import ConfigError, DeliveryError
from ticdc_sink.redaction import mask_uri

__all__ = ["FileStore", "FsspecStore", "open_store", "read_claim_check"]

logger = logging.getLogger(__name__)


def _base(uri: str) -> str:
    parts = urllib.parse.urlsplit(uri)
    netloc = parts.netloc.rsplit("@", 1)[-1]
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", "")).rstrip("/")


class FileStore:
    """A `file://` claim-check directory."""

    def __init__(self, uri: str) -> None:
        """Raises:
        ConfigError: the URI is not file:// with an absolute path, or the directory cannot
            be created.
        """
        parts = urllib.parse.urlsplit(uri)
        if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
            raise ConfigError(
                f"option 'claim-check-storage-uri' is '{mask_uri(uri)}'; use file:// with an "
                "absolute path, such as file:///data/claim-check",
                option="claim-check-storage-uri",
            )
        self._uri = uri
        self.directory = urllib.parse.unquote(parts.path)
        if not os.path.isabs(self.directory):
            raise ConfigError(
                f"option 'claim-check-storage-uri' is '{mask_uri(uri)}'; the path must be "
                "absolute, such as file:///data/claim-check",
                option="claim-check-storage-uri",
            )
        try:
            os.makedirs(self.directory, exist_ok=True)
        except OSError as exc:
            raise ConfigError(
                f"option 'claim-check-storage-uri' is '{mask_uri(uri)}'; the directory cannot "
                f"be created ({exc.strerror}); give a writable directory",
                option="claim-check-storage-uri",
            ) from exc
        self._base = "file://" + self.directory.rstrip("/")

    def __repr__(self) -> str:
        return f"FileStore({self._base!r})"

    def location(self, name: str) -> str:
        return f"{self._base}/{name}"

    def write(self, name: str, data: bytes) -> None:
        """Raises:
        DeliveryError: the file cannot be written (no space left, no permission, ...).
        """
        try:
            fd, temp = tempfile.mkstemp(prefix=f".{name}.", dir=self.directory)
        except OSError as exc:
            raise _write_failed(self._uri, self.location(name), exc) from exc
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(temp, os.path.join(self.directory, name))
        except BaseException as exc:
            if os.path.exists(temp):
                os.unlink(temp)
            if isinstance(exc, OSError):
                raise _write_failed(self._uri, self.location(name), exc) from exc
            raise

    def read(self, name: str) -> bytes:
        with open(os.path.join(self.directory, name), "rb") as f:
            return f.read()


def _fsspec() -> Any:
    try:
        import fsspec
    except ImportError:
        return None
    return fsspec


class FsspecStore:
    """Any other scheme, through fsspec."""

    def __init__(self, uri: str) -> None:
        """Raises:
        ConfigError: fsspec is not installed, or knows no filesystem for the scheme.
        """
        fsspec = _fsspec()
        parts = urllib.parse.urlsplit(uri)
        if fsspec is None:
            raise ConfigError(
                f"option 'claim-check-storage-uri' is '{mask_uri(uri)}'; the scheme "
                f"'{parts.scheme}' needs the fsspec package (pip install fsspec, plus s3fs, "
                "gcsfs, ... for the storage); only file:// works without it",
                option="claim-check-storage-uri",
            )
        options = dict(urllib.parse.parse_qsl(parts.query))
        try:
            self._fs = fsspec.filesystem(parts.scheme, **options)
        except (ImportError, ValueError) as exc:
            raise ConfigError(
                f"option 'claim-check-storage-uri' is '{mask_uri(uri)}'; fsspec cannot open "
                f"scheme '{parts.scheme}' ({type(exc).__name__}); install its filesystem "
                "package (s3fs, gcsfs, adlfs, ...)",
                option="claim-check-storage-uri",
            ) from None
        self._base = _base(uri)
        self._uri = uri

    def __repr__(self) -> str:
        return f"FsspecStore({self._base!r})"

    def location(self, name: str) -> str:
        return f"{self._base}/{name}"

    def write(self, name: str, data: bytes) -> None:
        """Raises:
        DeliveryError: the storage refused the file.
        """
        try:
            self._fs.pipe_file(self.location(name), data)
        except OSError as exc:
            raise _write_failed(self._uri, self.location(name), exc) from exc

    def read(self, name: str) -> bytes:
        return bytes(self._fs.cat_file(self.location(name)))


def _write_failed(uri: str, location: str, exc: OSError) -> DeliveryError:
    """A claim-check file that could not be stored: the message it backs cannot be sent."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    if exc.errno is not None:
        reason += f" (errno {exc.errno})"
    return DeliveryError(
        f"cannot write claim-check file {mask_uri(location)} to claim-check-storage-uri "
        f"'{mask_uri(uri)}': {reason}; make room there or give a storage every executor "
        "can write to"
    )


def open_store(uri: str) -> FileStore | FsspecStore:
    """The claim-check store of `claim-check-storage-uri`.

    Raises:
        ConfigError: a file:// URI that is not usable, or another scheme without fsspec.
    """
    if urllib.parse.urlsplit(uri).scheme == "file":
        return FileStore(uri)
    return FsspecStore(uri)


def read_claim_check(location: str) -> bytes:
    """The bytes of the claim-check file at `location` (a `claimCheckLocation` from a
    message), for the decoders' `claim_check_loader`.

    Raises:
        ConfigError: see `open_store`.
        OSError: the file cannot be read.
    """
    parent, _, name = location.rpartition("/")
    parts = urllib.parse.urlsplit(parent)
    if parts.scheme == "file":
        with open(os.path.join(urllib.parse.unquote(parts.path), name), "rb") as f:
            return f.read()
    return open_store(parent).read(name)
