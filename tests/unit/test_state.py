"""SinkState on a local checkpoint folder: commit ts per batch, watermark, table schemas."""

from __future__ import annotations

from pathlib import Path

import pytest

from ticdc_sink import tso
from ticdc_sink.errors import ConfigError
from ticdc_sink.state import SinkState


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
    state.record_watermark(far)
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
    state.record_watermark(ts + 1000)  # batch 5's commit ran, then the driver died
    assert SinkState(str(tmp_path)).commit_ts_for_batch(5) == ts


def test_the_query_id_comes_from_sparks_metadata_file(tmp_path: Path) -> None:
    state = SinkState(str(tmp_path))
    assert state.query_id() is None
    (tmp_path / "metadata").write_text('{"id":"71fbbf01-7d5b-4cad-a3b1-df5fcb56164c"}')
    assert state.query_id() == "71fbbf01-7d5b-4cad-a3b1-df5fcb56164c"
    assert state.batch_timestamp_ms(0) is None
    _offset_log(tmp_path, 0, 42)
    assert state.batch_timestamp_ms(0) == 42
