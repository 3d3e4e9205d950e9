"""Run by PyFlink's own interpreter (tests/support/flink.py), not by the tests: reads each
table of a spec with Flink SQL and prints its changelog as JSON lines.

    python flink_job.py '{"jars": [...], "tables": [{"name": ..., "ddl": ..., "query": ...}]}'

The first line is `{"flink": "<PyFlink version>"}`; then one line per changelog row,
`{"table": name, "op": "+I" | "-U" | "+U" | "-D", "row": [values]}` (decimals as text),
in the order Flink emits them. Each table's source must be bounded
(`scan.bounded.mode`), so each query ends. Only the standard library and PyFlink here:
this file runs in PyFlink's environment, which has neither ticdc_sink nor the tests.
"""

from __future__ import annotations

import json
import sys
from decimal import Decimal
from typing import Any


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    return value


def main(argv: list[str]) -> None:
    from pyflink.table import EnvironmentSettings, TableEnvironment
    from pyflink.version import __version__

    spec = json.loads(argv[1])
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    config = env.get_config()
    config.set("pipeline.jars", ";".join(f"file://{jar}" for jar in spec["jars"]))
    config.set("parallelism.default", "1")
    print(json.dumps({"flink": __version__}), flush=True)
    for table in spec["tables"]:
        env.execute_sql(table["ddl"])
        with env.execute_sql(table["query"]).collect() as results:
            for row in results:
                line = {
                    "table": table["name"],
                    "op": str(row.get_row_kind()),
                    "row": [_plain(v) for v in row],
                }
                print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main(sys.argv)
