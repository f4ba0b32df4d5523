"""The integer flags of resetOffsetByTime (-q, -o, --to-offset, --shift-by): what mqadmin's Java
parse takes, in the range the broker holds the value in.

The expected values are what Java 17 printed for ``Long.parseLong`` / ``Integer.parseInt`` of each
text (a one-class ``java P.java``): ARABIC-INDIC DIGIT THREE is 3, SUPERSCRIPT TWO is a
NumberFormatException, 2^63 is too big for a long and 2^31 for an int.
"""

from __future__ import annotations

import pytest

from mqctl.errors import UsageError
from mqctl.ops.resettarget import int_opt

ACCEPTED = [
    ("\u0663", "--to-offset", 3),
    ("+5", "--shift-by", 5),
    ("-9223372036854775808", "--shift-by", -(2**63)),
    ("9223372036854775807", "-o/--offset", 2**63 - 1),
    ("2147483647", "-q/--queue", 2**31 - 1),
    (" -1 ", "-q/--queue", -1),
]

REFUSED = [
    ("\u00b2", "--to-offset", "expected an integer"),
    ("1\u00b2", "-o/--offset", "expected an integer"),
    ("9223372036854775808", "--to-offset", "does not fit in a Java long"),
    ("-9223372036854775809", "--shift-by", "does not fit in a Java long"),
    ("99999999999999999999999", "--shift-by", "does not fit in a Java long"),
    ("2147483648", "-q/--queue", "does not fit in a Java int"),
    ("1_000", "-o/--offset", "expected an integer"),
]


@pytest.mark.parametrize(("text", "flag", "expected"), ACCEPTED)
def test_java_accepts(text: str, flag: str, expected: int) -> None:
    assert int_opt(text, flag) == expected


@pytest.mark.parametrize(("text", "flag", "needle"), REFUSED)
def test_java_refuses_so_do_we(text: str, flag: str, needle: str) -> None:
    with pytest.raises(UsageError) as e:
        int_opt(text, flag)
    assert str(e.value).startswith(f"{flag}: ") and needle in str(e.value)
