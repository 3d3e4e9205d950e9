"""MySQL temporal text as TiCDC's Debezium encoder reads it (Go's `time.Parse`, TiDB's
`StrToDateTime` / `StrToDuration`), and the zoned text it writes: the rules the value
renderers (`values`) and the field schema defaults (`schema`) share.

Dates and datetimes are proleptic Gregorian, year 0 included; years below 100 are moved
into 1970..2069 as tiflow does (`0018` -> 2018, `0099` -> 1999).
"""

from __future__ import annotations

import datetime as dt
import re

__all__ = [
    "EPOCH_ZERO_Z",
    "MIN_TIMESTAMP",
    "date_days",
    "epoch_micros",
    "parse_datetime",
    "stored_timestamp_default",
    "time_micros",
    "to_utc",
    "valid_date",
    "zoned_text",
]

#: TiDB types.MinTimestamp, compared as a wall clock.
MIN_TIMESTAMP = (1970, 1, 1, 0, 0, 1, 0)
#: The zoned text of the zero TIMESTAMP, JSON quotes included.
EPOCH_ZERO_Z = '"1970-01-01T00:00:00Z"'

_DATE_RE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_DATETIME_RE = re.compile(
    r"(\d{1,4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{0,9}))?)?"
)
_TIME_RE = re.compile(r"(-)?(\d+):(\d{1,2}):(\d{1,2})(?:\.(\d{0,9}))?")
_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _is_leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def valid_date(year: int, month: int, day: int) -> bool:
    if not 1 <= month <= 12 or day < 1:
        return False
    limit = 29 if month == 2 and _is_leap(year) else _DAYS[month - 1]
    return day <= limit


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (any year, 0 included)."""
    year -= month <= 2
    era = (year if year >= 0 else year - 399) // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _two_digit_year(year: int) -> int:
    # tiflow codec.go: "treats 0018 as 2018", "0099 as 1999" (AddDate keeps month/day).
    if year < 70:
        return year + 2000
    if year < 100:
        return year + 1900
    return year


def _parse_go_date(text: str) -> tuple[int, int, int] | None:
    """Go `time.Parse("2006-01-02", v)`: None when it fails (bad format or day/month)."""
    match = _DATE_RE.fullmatch(text)
    if match is None:
        return None
    year, month, day = (int(g) for g in match.groups())
    if not valid_date(year, month, day):
        return None
    return year, month, day


def date_days(text: str) -> int | None:
    parsed = _parse_go_date(text)
    if parsed is None:
        return None
    year, month, day = parsed
    return _days_from_civil(_two_digit_year(year), month, day)


def parse_datetime(text: str) -> tuple[int, int, int, int, int, int, int]:
    """A DATETIME/TIMESTAMP string as (y, mo, d, h, mi, s, µs); fraction truncated to µs.

    Raises:
        ValueError: not a MySQL datetime (TiDB `StrToDateTime` fails).
    """
    match = _DATETIME_RE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a datetime")
    y, mo, d, h, mi, s, frac = match.groups()
    micro = int((frac or "").ljust(6, "0")[:6]) if frac else 0
    parts = (int(y), int(mo), int(d), int(h or 0), int(mi or 0), int(s or 0), micro)
    if parts[3] > 23 or parts[4] > 59 or parts[5] > 59 or parts[1] > 12 or parts[2] > 31:
        raise ValueError(f"{text!r} is not a datetime")
    return parts


def epoch_micros(parts: tuple[int, int, int, int, int, int, int]) -> int | None:
    """Microseconds since the epoch of a wall clock read as UTC, after the two-digit-year
    rule; None when Go's time conversion fails (zero or invalid date: TiDB `GoTime`)."""
    y, mo, d, h, mi, s, us = parts
    if not valid_date(y, mo, d):
        return None
    days = _days_from_civil(_two_digit_year(y), mo, d)
    return (days * 86400 + h * 3600 + mi * 60 + s) * 1_000_000 + us


def time_micros(text: str) -> int:
    """TIME `[-]HH:MM:SS[.f]` as signed microseconds (TiDB `StrToDuration`).

    Raises:
        ValueError: not a TIME value.
    """
    match = _TIME_RE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a time")
    sign, h, m, s, frac = match.groups()
    micro = int((frac or "").ljust(6, "0")[:6]) if frac else 0
    total = (int(h) * 3600 + int(m) * 60 + int(s)) * 1_000_000 + micro
    return -total if sign else total


def to_utc(parts: tuple[int, int, int, int, int, int, int], zone: dt.tzinfo | None) -> dt.datetime:
    """A wall clock in `zone` (None: UTC) as a UTC datetime (fold=0 in gaps and overlaps)."""
    y, mo, d, h, mi, s, us = parts
    if zone is None:
        return dt.datetime(y, mo, d, h, mi, s, us)
    local = dt.datetime(y, mo, d, h, mi, s, us, tzinfo=zone)
    return local.astimezone(dt.UTC).replace(tzinfo=None)


def zoned_text(utc: dt.datetime, fsp: int) -> str:
    """`2006-01-02T15:04:05` + the first fsp digits of `.%06d` microseconds + `Z`."""
    text = (
        f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T"
        f"{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d}"
    )
    if fsp > 0:
        text += f".{utc.microsecond:06d}"[: 1 + fsp]
    return '"' + text + 'Z"'


def stored_timestamp_default(
    default: str, zone: dt.tzinfo | None
) -> tuple[int, int, int, int, int, int, int]:
    """The UTC wall clock TiDB stores for a TIMESTAMP default written in `zone`.

    Raises:
        ValueError: not a datetime.
    """
    parts = parse_datetime(default)
    if zone is None or parts < MIN_TIMESTAMP or not valid_date(*parts[:3]):
        return parts
    utc = to_utc(parts, zone)
    return (utc.year, utc.month, utc.day, utc.hour, utc.minute, utc.second, utc.microsecond)
