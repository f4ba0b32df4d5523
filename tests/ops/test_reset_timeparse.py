"""parse_timestamp: mqadmin's -s forms made strict, checked against fixed epoch values."""

from __future__ import annotations

import os
import time

import pytest

from mqctl.errors import UsageError
from mqctl.ops.timeparse import parse_timestamp


@pytest.fixture
def tz_shanghai(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TZ", "Asia/Shanghai")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("now", 1234),
        (" now ", 1234),
        ("1700000000000", 1_700_000_000_000),
        ("-1", -1),
        ("+5", 5),
        ("0", 0),
        # 2023-11-14T22:13:20Z = 1700000000 s (a well-known value)
        ("2023-11-14T22:13:20Z", 1_700_000_000_000),
        ("2023-11-14T22:13:20.123Z", 1_700_000_000_123),
        ("2023-11-15T06:13:20+08:00", 1_700_000_000_000),
        ("2023-11-14T17:13:20-05:00", 1_700_000_000_000),
    ],
)
def test_accepted(text: str, expected: int) -> None:
    assert parse_timestamp(text, now_ms=1234) == expected


def test_mqadmin_format_is_local_time(tz_shanghai) -> None:  # type: ignore[no-untyped-def]
    # Asia/Shanghai is UTC+8 without DST: 2023-11-15 06:13:20.456 local = 1700000000456.
    assert os.environ["TZ"] == "Asia/Shanghai"
    assert parse_timestamp("2023-11-15#06:13:20:456", 0) == 1_700_000_000_456


@pytest.mark.parametrize(
    "text",
    [
        "NOW",
        "",
        "2023-13-01#00:00:00:000",  # SimpleDateFormat would roll into 2024
        "2023-02-29#00:00:00:000",
        "2023-11-15#24:00:00:000",
        "2023-11-15#06:13:20:45",  # mqadmin reads ':45' as 45 ms; we refuse the ambiguity
        "2023-11-15#06:13:20:456 trailing",
        "2023-11-15 06:13:20",
        "2023-11-15T06:13:20",  # ISO without an offset
        "1.7e12",
        "0x10",
        "99999999999999999999",
        "--1",
    ],
)
def test_rejected_with_accepted_formats(text: str) -> None:
    with pytest.raises(UsageError, match="accepted: 'now', epoch milliseconds"):
        parse_timestamp(text, 0)
