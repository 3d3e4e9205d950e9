"""ticdc_sink: write Spark DataFrames to Kafka as TiCDC change events.

    import ticdc_sink
    ticdc_sink.register(spark)
    df.write.format("ticdc").mode("append").option(...).save()

Importing the package registers nothing and starts nothing; `register` does. Installed
with pip, the package needs no `register` call: PySpark finds `format("ticdc")` in the
`pyspark_ticdc` module by itself.
"""

from __future__ import annotations

import importlib.metadata
from typing import TYPE_CHECKING, Any

from ticdc_sink.errors import (
    ConfigError,
    DecodeError,
    DeliveryError,
    InputError,
    MessageTooLargeError,
    RegistryError,
    SchemaError,
    TiCDCSinkError,
)

if TYPE_CHECKING:
    from ticdc_sink.datasource import TiCDCDataSource

__all__ = [
    "ConfigError",
    "DecodeError",
    "DeliveryError",
    "InputError",
    "MessageTooLargeError",
    "RegistryError",
    "SchemaError",
    "TiCDCDataSource",
    "TiCDCSinkError",
    "__version__",
    "register",
]

try:
    # The version lives in pyproject.toml only; the installed metadata carries it.
    __version__ = importlib.metadata.version("ticdc-sink")
except importlib.metadata.PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"


def register(spark: Any) -> None:
    """Register `format("ticdc")` with a SparkSession (classic or Spark Connect).

    Where the package is installed, PySpark registers it by itself (`pyspark_ticdc`); PySpark
    4.0 then refuses a second registration of the name (DATA_SOURCE_ALREADY_EXISTS, 4.1+
    replaces it), which means `format("ticdc")` already works, so that is not an error.
    """
    from ticdc_sink.datasource import TiCDCDataSource

    try:
        spark.dataSource.register(TiCDCDataSource)
    except Exception as exc:  # pyspark's AnalysisException, classic or Connect
        if "DATA_SOURCE_ALREADY_EXISTS" not in str(exc):
            raise


# Hidden from a type checker, which reads the name from the import above instead.
if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        # The data source imports pyspark; load it on first use so that `ticdc_sink.decode`
        # and the codec work in processes without Spark.
        if name == "TiCDCDataSource":
            from ticdc_sink.datasource import TiCDCDataSource

            return TiCDCDataSource
        raise AttributeError(f"module 'ticdc_sink' has no attribute {name!r}")
