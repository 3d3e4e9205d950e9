"""SinkState on a local checkpoint folder: commit ts per batch, watermark, table schemas,
and what it says when the folder cannot be written."""

from __future__ import annotations

import errno
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from ticdc_sink import tso
from ticdc_sink.errors import ConfigError
from ticdc_sink.state import SinkState, WatermarkRecord


def test_commit_ts_is_chosen_once_per_batch_and_grows(tmp_path: Path) -> None:
    state = SinkState(str(tmp_path))
    first = state.commit_ts_for_batch(0)
    assert state.commit_ts_for_batch(0) == first
    second = SinkState(str(tmp_path)).commit_ts_for_batch(1)
    assert second > first
    assert SinkState(str(tmp_path)).commit_ts_for_batch(1) == second


def test_commit_ts_stays_above_the_last_watermark(tmp_path: Path) -> None:
    state = SinkState(str(tmp_path))
    far = (1 << 62) + 5
    state.record_watermark(far, None)
    assert state.last_watermark() == far
    assert state.commit_ts_for_batch(3) == far + 1


def test_current_batch_id_reads_sparks_offset_log(tmp_path: Path) -> None:
    state = SinkState(str(tmp_path))
    with pytest.raises(ConfigError, match="no micro-batch in the offset log"):
        state.current_batch_id()
    (tmp_path / "offsets").mkdir()
    for name in ("0", "1", "12", ".12.crc"):
        (tmp_path / "offsets" / name).write_text("v1")
    assert state.current_batch_id() == 12


def test_table_schemas_are_kept_per_table_under_any_name(tmp_path: Path) -> None:
    state = SinkState(f"file://{tmp_path}")
    assert state.last_table_schema("db", "t") is None
    state.record_table_schema("db", "t", '{"v": 1}')
    state.record_table_schema("db/..", "t\x00 x", '{"v": 2}')
    state.record_table_schema("db", "t", '{"v": 3}')
    assert state.last_table_schema("db", "t") == '{"v": 3}'
    assert state.last_table_schema("db/..", "t\x00 x") == '{"v": 2}'
    assert not list(tmp_path.glob("ticdc/tables/.*.tmp"))


def test_a_location_the_sink_cannot_read_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="checkpoint location"):
        SinkState("nosuchscheme://bucket/x")


def test_ddl_marks_are_kept_per_batch(tmp_path: Path) -> None:
    state = SinkState(str(tmp_path))
    assert not state.ddl_sent_for_batch(4)
    state.record_ddl_sent(4, "ALTER TABLE `t` ADD COLUMN `a` int")
    assert SinkState(str(tmp_path)).ddl_sent_for_batch(4)
    assert not state.ddl_sent_for_batch(5)


def test_reports_are_one_json_line_per_batch_and_pruned(tmp_path: Path, monkeypatch) -> None:
    import ticdc_sink.state as state_module

    monkeypatch.setattr(state_module, "_KEEP_REPORTS", 3)
    state = SinkState(str(tmp_path))
    for batch in range(5):
        path = state.record_report(str(batch), f'{{"batch_id": {batch}}}')
    assert path.endswith("ticdc/reports/4.json")
    kept = sorted(p.name for p in (tmp_path / "ticdc" / "reports").glob("*.json"))
    assert kept == ["2.json", "3.json", "4.json"]
    assert (tmp_path / "ticdc" / "reports" / "4.json").read_text() == '{"batch_id": 4}\n'


class _ReadOnlyHandler(pafs.FileSystemHandler):
    """A local directory whose writes fail with EACCES, as a read-only mount's do (a
    chmod'ed directory does not stop root, who runs the tests here)."""

    def __init__(self, root: Path) -> None:
        self._local = pafs.SubTreeFileSystem(str(root), pafs.LocalFileSystem())

    def _refuse(self, *args: object) -> None:
        raise PermissionError(errno.EACCES, "Permission denied")

    create_dir = delete_dir = delete_dir_contents = delete_root_dir_contents = _refuse
    delete_file = move = copy_file = open_output_stream = open_append_stream = _refuse

    def get_type_name(self) -> str:
        return "read-only"

    def normalize_path(self, path: str) -> str:
        return path

    def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
        return self._local.get_file_info(paths)

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        return self._local.get_file_info(selector)

    def open_input_stream(self, path: str) -> object:
        return self._local.open_input_stream(path)

    def open_input_file(self, path: str) -> object:
        return self._local.open_input_file(path)

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other


def test_a_read_only_location_is_a_config_error_naming_the_option_and_path(
    tmp_path: Path,
) -> None:
    state = SinkState("chk", filesystem=pafs.PyFileSystem(_ReadOnlyHandler(tmp_path)))
    for write in (
        state.check_writable,
        lambda: state.commit_ts_for_batch(0),
        lambda: state.record_watermark(5, 0),
        lambda: state.record_table_schema("db", "t", "{}"),
        lambda: state.record_ddl_sent(0, "ALTER TABLE t ADD COLUMN c int"),
        lambda: state.record_report("0", "{}"),
    ):
        with pytest.raises(ConfigError) as caught:
            write()
        message = str(caught.value)
        assert message.startswith("ticdc: option 'checkpointLocation' is 'chk', where the sink ")
        assert "chk/ticdc" in message and "Permission denied" in message
        assert caught.value.option == "checkpointLocation"


def test_a_regular_file_in_the_way_is_a_config_error(tmp_path: Path) -> None:
    blocker = tmp_path / "chk"
    blocker.write_text("not a directory")
    with pytest.raises(ConfigError) as caught:
        SinkState(str(blocker)).check_writable()
    message = str(caught.value)
    assert f"option 'checkpointLocation' is '{blocker}'" in message
    assert f"cannot create directory '{blocker}/ticdc' (Not a directory)" in message
    (tmp_path / "other" / "ticdc").mkdir(parents=True)
    (tmp_path / "other" / "ticdc" / "watermark").mkdir()  # a directory where a file goes
    with pytest.raises(ConfigError, match="cannot read .*ticdc/watermark"):
        SinkState(str(tmp_path / "other")).last_watermark()


def test_a_file_the_sink_did_not_write_is_named(tmp_path: Path) -> None:
    (tmp_path / "ticdc").mkdir()
    (tmp_path / "ticdc" / "watermark").write_text("soon")
    with pytest.raises(ConfigError, match="ticdc/watermark' under option 'checkpointLocation' "):
        SinkState(str(tmp_path)).last_watermark()


def test_a_watermark_is_recorded_before_it_is_sent_and_then_confirmed(tmp_path: Path) -> None:
    state = SinkState(str(tmp_path))
    assert state.watermark_record() is None and state.watermark_floor(0) is None
    state.record_watermark(100, 0)
    assert state.watermark_record() == WatermarkRecord(100, 0, None, sent=False)
    state.confirm_watermark(100)
    state.record_watermark(200, 1)
    assert state.watermark_record() == WatermarkRecord(200, 1, 100, sent=False)
    # A re-run of batch 1 records over its own first run: `previous` stays.
    state.record_watermark(250, 1)
    state.confirm_watermark(250)
    assert state.watermark_record() == WatermarkRecord(250, 1, 100, sent=True)
    with pytest.raises(ConfigError, match="is not 300"):
        state.confirm_watermark(300)


def test_the_floor_of_a_re_run_is_the_watermark_before_its_own(tmp_path: Path) -> None:
    state = SinkState(str(tmp_path))
    state.record_watermark(100, 0)
    state.record_watermark(200, 1)
    assert state.watermark_floor(2) == 200  # the next batch: above everything sent
    assert state.watermark_floor(1) == 100  # batch 1 again: its own rows reach up to 200
    assert state.watermark_floor(None) == 200  # a batch job


def test_an_older_versions_watermark_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "ticdc").mkdir()
    (tmp_path / "ticdc" / "watermark").write_text("4200")
    state = SinkState(str(tmp_path))
    assert state.watermark_record() == WatermarkRecord(4200, legacy=True)
    assert state.watermark_floor(7) == 4200
    state.commit_ts_for_batch(7)
    # Batch 7 planned before: a re-run whose watermark may be its own; no floor is known.
    assert state.watermark_floor(7) is None
    state.record_watermark(5000, 8)
    assert state.watermark_record() == WatermarkRecord(5000, 8, 4200, sent=False)


def _offset_log(folder: Path, batch_id: int, started_ms: int) -> None:
    (folder / "offsets").mkdir(exist_ok=True)
    metadata = f'{{"batchWatermarkMs":0,"batchTimestampMs":{started_ms},"conf":{{}}}}'
    (folder / "offsets" / str(batch_id)).write_text(f"v1\n{metadata}\n{{}}")


def test_a_new_batchs_commit_ts_is_sparks_batch_timestamp(tmp_path: Path) -> None:
    # Every task of a batch asks at once when only tasks find the checkpoint: the value
    # must not depend on when each one asks.
    started_ms = 1_700_000_000_123
    _offset_log(tmp_path, 0, started_ms)
    _offset_log(tmp_path, 1, started_ms)
    first = SinkState(str(tmp_path)).commit_ts_for_batch(0)
    assert first == tso.compose(started_ms)
    # the same start again (two batches in one millisecond) still grows
    assert SinkState(str(tmp_path)).commit_ts_for_batch(1) == first + 1


def test_a_replayed_batch_keeps_its_commit_ts_after_later_watermarks(tmp_path: Path) -> None:
    _offset_log(tmp_path, 5, 1_700_000_000_000)
    state = SinkState(str(tmp_path))
    ts = state.commit_ts_for_batch(5)
    state.record_watermark(ts + 1000, 5)  # batch 5's commit ran, then the driver died
    assert SinkState(str(tmp_path)).commit_ts_for_batch(5) == ts


def test_the_query_id_comes_from_sparks_metadata_file(tmp_path: Path) -> None:
    state = SinkState(str(tmp_path))
    assert state.query_id() is None
    (tmp_path / "metadata").write_text('{"id":"71fbbf01-7d5b-4cad-a3b1-df5fcb56164c"}')
    assert state.query_id() == "71fbbf01-7d5b-4cad-a3b1-df5fcb56164c"
    assert state.batch_timestamp_ms(0) is None
    _offset_log(tmp_path, 0, 42)
    assert state.batch_timestamp_ms(0) == 42
