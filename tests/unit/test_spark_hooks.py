"""What Spark hands the sink by itself: the options it adds, and the module it looks for."""

from __future__ import annotations

import importlib

import pytest
from pyspark.sql.datasource import DataSource

from ticdc_sink.config import SinkConfig
from ticdc_sink.errors import ConfigError

# spark_version: the options Spark adds, the module it looks for
pytestmark = pytest.mark.spark_version

BASE = {"kafka.bootstrap.servers": "127.0.0.1:9092", "topic": "t"}


@pytest.mark.parametrize(
    "spark_options",
    [
        {"queryName": "orders_q"},  # writeStream.queryName(...)
        {"path": "/ignored"},  # save(path) / start(path)
        {"checkpointLocation": "/chk/orders"},
        {"queryname": "q", "path": "p", "checkpointlocation": "/c"},  # as Spark lowercases
    ],
)
def test_every_option_spark_adds_to_a_sinks_options_is_accepted(spark_options) -> None:
    config = SinkConfig.from_options({**BASE, **spark_options})
    assert config.ignored == ()


def test_a_misspelt_query_name_is_still_an_unknown_option() -> None:
    with pytest.raises(ConfigError, match="querynam"):
        SinkConfig.from_options({**BASE, "querynam": "q"})


def test_pyspark_finds_the_data_source_in_pyspark_ticdc() -> None:
    # PySpark's lookup (pyspark/sql/worker/lookup_data_sources.py) imports each top-level
    # `pyspark_*` module and registers its DefaultSource under DefaultSource.name().
    module = importlib.import_module("pyspark_ticdc")
    from ticdc_sink import TiCDCDataSource

    assert module.DefaultSource is TiCDCDataSource
    assert issubclass(module.DefaultSource, DataSource)
    assert module.DefaultSource.name() == "ticdc"
    assert module.__all__ == ["DefaultSource"]
