"""Parsing of durations (and, for resets, timestamps) given on the command line."""

from __future__ import annotations

import re

from mqctl.errors import UsageError

_UNITS_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}
_SIMPLE = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w)")
_ISO = re.compile(
    r"P(?:(?P<w>\d+(?:\.\d+)?)W)?(?:(?P<d>\d+(?:\.\d+)?)D)?"
    r"(?:T(?:(?P<h>\d+(?:\.\d+)?)H)?(?:(?P<m>\d+(?:\.\d+)?)M)?(?:(?P<s>\d+(?:\.\d+)?)S)?)?"
)

DURATION_FORMATS = "ISO 8601 (PT1H30M, P1D) or compact (1h30m, 90s, 500ms, 2d)"


def parse_duration_ms(text: str) -> int:
    """'1h30m', '90s', '500ms', '2d', 'PT1H30M', 'P1DT2H' or plain milliseconds -> milliseconds."""
    s = text.strip()
    if not s:
        raise UsageError(f"empty duration; accepted: {DURATION_FORMATS}")
    if s.isdigit():
        return int(s)
    upper = s.upper()
    if upper.startswith("P"):
        m = _ISO.fullmatch(upper)
        if m and upper not in ("P", "PT") and not upper.endswith("T"):
            total = 0.0
            for key, unit in (("w", "w"), ("d", "d"), ("h", "h"), ("m", "m"), ("s", "s")):
                if m.group(key):
                    total += float(m.group(key)) * _UNITS_MS[unit]
            return int(round(total))
        raise UsageError(f"malformed duration {text!r}; accepted: {DURATION_FORMATS}")
    pos, total = 0, 0.0
    lowered = s.lower()
    for m in _SIMPLE.finditer(lowered):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNITS_MS[m.group(2)]
        pos = m.end()
    if pos != len(lowered) or pos == 0:
        raise UsageError(f"malformed duration {text!r}; accepted: {DURATION_FORMATS}")
    return int(round(total))


def format_duration_ms(ms: int) -> str:
    """Compact human form: 1d2h, 3h04m, 5m07s, 12.3s, 850ms."""
    if ms < 1000:
        return f"{ms}ms"
    s = ms / 1000
    if s < 60:
        return f"{s:.1f}s"
    m, sec = divmod(int(s), 60)
    if m < 60:
        return f"{m}m{sec:02d}s"
    h, m = divmod(m, 60)
    if h < 24:
        return f"{h}h{m:02d}m"
    d, h = divmod(h, 24)
    return f"{d}d{h}h"
