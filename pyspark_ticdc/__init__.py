"""Lets PySpark find `format("ticdc")` with no `register` call.

On the first use of a Python data source in a Spark session, PySpark imports every
top-level module whose name starts with `pyspark_` and registers its `DefaultSource` under
`DefaultSource.name()` (`pyspark/sql/worker/lookup_data_sources.py`, PySpark 4.0+). This
module is that hook and nothing else; `ticdc_sink.register(spark)` stays for explicit use.
"""

from __future__ import annotations

from ticdc_sink.datasource import TiCDCDataSource as DefaultSource

__all__ = ["DefaultSource"]
