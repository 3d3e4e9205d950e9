"""Checkpoint locations read as Spark reads them, or refused naming the option and scheme."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from ticdc_sink.checkpoint import open_location, session_location
from ticdc_sink.errors import ConfigError


@pytest.mark.parametrize(
    "location",
    ["{dir}/chk", "file:{dir}/chk", "file://{dir}/chk", "file://localhost{dir}/chk"],
)
def test_local_paths_and_file_uris_open_the_same_local_folder(
    tmp_path: Path, location: str
) -> None:
    fs, path = open_location(location.format(dir=tmp_path))
    assert isinstance(fs, pafs.LocalFileSystem)
    assert path == f"{tmp_path}/chk"


def test_a_relative_path_is_the_drivers_working_folder(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert open_location("chk/q")[1] == os.path.join(tmp_path, "chk", "q")


@pytest.mark.parametrize(
    ("location", "scheme"),
    [("dbfs:/chk", "dbfs"), ("wasbs://c@a.blob.core.windows.net/chk", "wasbs"), ("x:y", "x")],
)
def test_a_scheme_the_sink_cannot_read_is_refused_by_name(location: str, scheme: str) -> None:
    with pytest.raises(ConfigError, match=f"scheme '{scheme}'") as caught:
        open_location(location)
    assert caught.value.option == "checkpointLocation"
    assert caught.value.value == location
    assert "dbfs:" not in os.listdir(".")


def test_a_file_uri_naming_another_host_is_refused() -> None:
    with pytest.raises(ConfigError, match="names the host 'nn'"):
        open_location("file://nn/chk")


def test_s3a_and_s3n_name_the_same_bucket_as_pyarrows_s3() -> None:
    # With the region given, pyarrow opens S3 without a network call.
    for scheme in ("s3", "s3a", "s3n"):
        fs, path = open_location(f"{scheme}://bucket/chk/q?region=us-east-1")
        assert isinstance(fs, pafs.S3FileSystem)
        assert path == "bucket/chk/q"


def test_a_location_pyarrow_cannot_open_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="cannot be opened") as caught:
        open_location("s3a://bucket/chk?region=us-east-1&nosuch=1")
    assert caught.value.option == "checkpointLocation"


@pytest.mark.parametrize(
    ("root", "expected"),
    [
        ("/chk", "/chk/orders_q"),
        ("/chk/", "/chk/orders_q"),
        ("s3a://bucket/chk", "s3a://bucket/chk/orders_q"),
        ("file:/chk", "file:/chk/orders_q"),
    ],
)
def test_a_named_query_checkpoints_under_the_session_root(root: str, expected: str) -> None:
    assert session_location(root, "orders_q") == expected
