"""Helpers reproducing Java printf / SimpleDateFormat output, for mqadmin's plain layouts."""

from __future__ import annotations

import time


def java_len(s: str) -> int:
    """String.length(): UTF-16 code units (a character outside the BMP counts twice)."""
    if s.isascii():
        return len(s)
    return len(s) + sum(1 for c in s if c > "\uffff")


def ljust(value: object, width: int) -> str:
    """Java `%-Ns` / `%-Nd`: pad on the right to width UTF-16 units, never truncate; null prints null."""
    s = (
        "null"
        if value is None
        else (("true" if value else "false") if isinstance(value, bool) else str(value))
    )
    pad = width - java_len(s)
    return s + " " * pad if pad > 0 else s


def front(s: str, n: int) -> str:
    """UtilAll.frontStringAtLeast: the first n characters (it truncates, despite the name)."""
    return s[:n] if len(s) > n else s


def java_2f(x: float) -> str:
    """Java `%.2f`: HALF_UP on the shortest decimal representation of the double (``repr``),
    in integers (the decimal module costs a command's start-up ~4 ms)."""
    text = repr(float(x))
    if text in ("nan", "inf", "-inf"):
        return {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}[text]
    sign = "-" if text[0] == "-" else ""
    mantissa, _, exp = text.lstrip("-").partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = int(whole + frac)  # the value is digits * 10**shift
    shift = (int(exp) if exp else 0) - len(frac) + 2  # ... and in hundredths, digits * 10**shift
    if shift >= 0:
        hundredths = digits * 10**shift
    else:
        hundredths, rest = divmod(digits, 10**-shift)
        hundredths += 2 * rest >= 10**-shift  # HALF_UP
    units, cents = divmod(hundredths, 100)
    return f"{sign}{units}.{cents:02d}"


def local_datetime(epoch_ms: int) -> str:
    """SimpleDateFormat("yyyy-MM-dd HH:mm:ss") in the process's time zone."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch_ms / 1000.0))


def local_datetime_ms(epoch_ms: int) -> str:
    """yyyy-MM-dd HH:mm:ss.SSS in local time (mqctl's own tables)."""
    return f"{local_datetime(epoch_ms)}.{epoch_ms % 1000:03d}"


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
