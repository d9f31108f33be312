"""Times a person types about a recording (--at, --since, --until, the seek dialog)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from dashboard.config import parse_duration
from dashboard.errors import UserError

_CLOCK = re.compile(r"^(\d{1,2}):(\d{2})(?::(\d{2}(?:\.\d+)?))?$")
FORMS = (
    "a time of day (03:07 or 03:07:30, this machine's zone), a timestamp with its zone "
    "(2026-01-15T03:07:30+00:00), +DURATION from the start, -DURATION before the end "
    "(+5m, -90s), start or end"
)


def parse_when(text: str, first_at: float, last_at: float, what: str = "time") -> float:
    """Unix seconds for `text`, one of FORMS, within a recording from first_at to last_at."""
    raw = text.strip()
    lower = raw.lower()
    if lower in ("start", "begin", "first"):
        return first_at
    if lower in ("end", "last", "now"):
        return last_at
    if raw[:1] in "+-" and len(raw) > 1:
        try:
            seconds = parse_duration(raw[1:].strip(), what)
        except UserError:
            raise UserError(f"bad {what} {text!r}: expected {FORMS}") from None
        return first_at + seconds if raw[0] == "+" else last_at - seconds
    clock = _CLOCK.match(raw)
    if clock:
        return _clock_time(clock, first_at, last_at, text, what)
    try:
        at = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        at = None
    if at is None or at.tzinfo is None:  # a date without a zone: which zone is not ours to guess
        raise UserError(f"bad {what} {text!r}: expected {FORMS}")
    return at.timestamp()


def _clock_time(match: re.Match, first_at: float, last_at: float, text: str, what: str) -> float:
    """A time of day, on the recording's first day, or the next days it spans: the first
    occurrence at or after its start (else the one on its first day)."""
    hour, minute, second = int(match.group(1)), int(match.group(2)), float(match.group(3) or 0)
    if hour > 23 or minute > 59 or second >= 60:
        raise UserError(f"bad {what} {text!r}: expected {FORMS}")
    start = datetime.fromtimestamp(first_at).astimezone()
    day = start.replace(hour=hour, minute=minute, second=0, microsecond=0)
    day += timedelta(seconds=second)
    if day.timestamp() < first_at and (day + timedelta(days=1)).timestamp() <= last_at:
        day += timedelta(days=1)
    return day.timestamp()
