"""render.plain's Java printf helpers against independent readings: ``%.2f`` against the decimal
module's HALF_UP quantize of the double's shortest representation (what Java's Formatter does),
``String.length()`` against the UTF-16 encoding's length."""

from __future__ import annotations

import math
import random
import struct
from decimal import ROUND_HALF_UP, Decimal, localcontext

import pytest

from mqctl.render.plain import java_2f, java_len


def _decimal_2f(x: float) -> str:
    with localcontext() as ctx:
        ctx.prec = 400  # every double's digits (the default 28 refuses 1e300's)
        return str(Decimal(repr(x)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


@pytest.mark.parametrize(
    ("x", "java"),
    [
        (0.0, "0.00"),
        (-0.0, "-0.00"),
        (0.005, "0.01"),  # repr 0.005: HALF_UP up, where the binary value (0.00500000000000000010..) agrees
        (0.015, "0.02"),  # the double is 0.01499999999999999944..: Java rounds its shortest repr, up
        (1.005, "1.01"),  # the double is 1.00499999999999989..: Java prints 1.01 (C's printf: 1.00)
        (2.675, "2.68"),
        (-2.675, "-2.68"),
        (-0.001, "-0.00"),
        (12.3, "12.30"),
        (1e-05, "0.00"),
        (1.5e16, "15000000000000000.00"),
        (123456.789, "123456.79"),
        (0.995, "1.00"),
        (99.995, "100.00"),
        (float("nan"), "NaN"),
        (float("inf"), "Infinity"),
        (float("-inf"), "-Infinity"),
    ],
)
def test_java_2f_hand_values(x: float, java: str) -> None:
    assert java_2f(x) == java


def test_java_2f_equals_decimal_half_up_on_many_doubles() -> None:
    rng = random.Random(20261127)
    values = [rng.uniform(-1e6, 1e6) for _ in range(3000)]
    values += [round(rng.uniform(0, 1000), rng.randint(0, 4)) for _ in range(3000)]  # short reprs, ties
    values += [k / 1000 + 0.005 for k in range(2000)]  # x.xx5 ties
    bits = [rng.getrandbits(64) for _ in range(3000)]  # any finite double, tiny and huge ones too
    values += [v for v in (struct.unpack("<d", struct.pack("<Q", b))[0] for b in bits) if math.isfinite(v)]
    for v in values:
        assert java_2f(v) == _decimal_2f(v), v


def test_java_2f_accepts_ints() -> None:
    assert java_2f(3) == "3.00"  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "s", ["", "abc", "héllo", "日本語", "a\U0001f600b", "\U0001f600\U00010000", "\ud800x"]
)
def test_java_len_counts_utf16_units(s: str) -> None:
    assert java_len(s) == len(s.encode("utf-16-le", "surrogatepass")) // 2
