"""`ticdc-sink reports`: the batch reports the sink keeps under a checkpoint location, as
a table or JSON lines."""

from __future__ import annotations

import argparse
import datetime as dt
import json

from ticdc_sink import tso
from ticdc_sink.state import SinkState

__all__ = [
    "run_reports",
]


_REPORT_COLUMNS = (
    ("batch", 7),
    ("committed (UTC)", 19),
    ("rows", 9),
    ("messages", 9),
    ("bytes", 11),
    ("diverted", 8),
    ("watermark", 18),
    ("seconds", 8),
)


def run_reports(args: argparse.Namespace) -> int:
    texts = SinkState(args.checkpoint).reports()
    if not texts:
        raise ValueError(
            f"no batch reports under {args.checkpoint}/ticdc/reports; give the "
            "checkpointLocation of a ticdc write (reports are kept after each committed batch)"
        )
    if args.limit:
        texts = texts[-args.limit :]
    if args.format == "jsonl":
        for text in texts:
            print(text.strip())
        return 0
    print("  ".join(f"{name:>{width}}" for name, width in _REPORT_COLUMNS))
    for text in texts:
        print(_report_row(text))
    return 0


def _report_row(text: str) -> str:
    try:
        report = json.loads(text)
        if not isinstance(report, dict):
            raise ValueError
    except ValueError:
        return f"(not a report: {text.strip()[:60]})"
    commit_ts = report.get("commit_ts")
    committed = "-"
    if isinstance(commit_ts, int) and commit_ts > 0:
        moment = dt.datetime.fromtimestamp(tso.physical_ms(commit_ts) / 1000, dt.UTC)
        committed = moment.strftime("%Y-%m-%d %H:%M:%S")
    batch = report.get("batch_id")
    cells = (
        "job" if batch is None else batch,
        committed,
        report.get("rows"),
        report.get("messages"),
        report.get("bytes"),
        report.get("diverted"),
        report.get("watermark"),
        report.get("seconds"),
    )
    return "  ".join(
        f"{'-' if cell is None else cell!s:>{width}}"
        for cell, (_, width) in zip(cells, _REPORT_COLUMNS, strict=True)
    )
