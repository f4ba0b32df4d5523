"""Tag subscription expressions (``TagA || TagB``), parsed the way the Java client's FilterAPI does,
and Java's ``String.hashCode``: the tagsCode a ConsumeQueue entry stores for a message's TAGS."""

from __future__ import annotations

from mqctl.errors import UsageError
from mqctl.records import record

__all__ = ["SUB_ALL", "SubExpr", "java_string_hash", "parse_subexpr"]

SUB_ALL = "*"
# Java's String.trim strips chars <= U+0020, not Unicode whitespace, so mirror that.
_JAVA_TRIM = "".join(map(chr, range(33)))


def java_string_hash(s: str) -> int:
    """Return Java's ``s.hashCode()`` as a signed 32-bit int.

    Java folds UTF-16 code units, so a character outside the BMP contributes its two surrogates;
    hashing Python code points instead would give a different value for e.g. emoji tags.
    """
    if s.isascii():  # one byte per code unit (names nearly always): no codec, no pairing
        units: bytes | list[int] = s.encode("ascii")
    else:  # surrogatepass: a lone surrogate is a legal Java char, and a tag built by another client may hold one.
        data = s.encode("utf-16-be", "surrogatepass")
        units = [data[i] << 8 | data[i + 1] for i in range(0, len(data), 2)]
    h = 0
    if len(units) <= 256:  # folded once at the end (the same value mod 2**32; the int stays small)
        for unit in units:
            h = 31 * h + unit
    else:
        for unit in units:
            h = (31 * h + unit) & 0xFFFFFFFF
    h &= 0xFFFFFFFF
    return h - 0x1_0000_0000 if h >= 0x8000_0000 else h


@record(frozen=True, slots=True)
class SubExpr:
    """A parsed TAG subscription: either "all" or a set of exact tag strings."""

    match_all: bool
    tags: frozenset[str] = frozenset()

    @property
    def hashes(self) -> frozenset[int]:
        """The tagsCode values a CQ pre-filter compares against (empty when ``match_all``)."""
        return frozenset(java_string_hash(t) for t in self.tags)

    def text(self) -> str:
        """The expression as a subscription would print it: ``*`` or ``TagA || TagB`` (sorted)."""
        return SUB_ALL if self.match_all else " || ".join(sorted(self.tags))

    def matches(self, tag: str | None) -> bool:
        """Whether a message with TAGS ``tag`` is delivered.

        Compares the real string, as the consumer's own re-check does after the broker's hash
        pre-filter, so hash collisions (``Aa``/``BB``) do not count as matches.
        """
        if self.match_all:
            return True
        return tag is not None and tag in self.tags


def parse_subexpr(expr: str | None) -> SubExpr:
    """Parse a subscription expression like ``FilterAPI.buildSubscriptionData``.

    ``*``, empty or blank means all messages; otherwise the expression is split on ``||`` and
    each item trimmed, empty items dropped. Java accepts an expression that leaves no tag (the
    broker would then match nothing); we refuse it because it is always a typo.
    """
    # Blank counts as "all" here (Java would build an empty tag set that matches nothing, which no
    # operator means); " * " with spaces stays the literal tag "*", exactly as in Java.
    if expr is None or expr.strip(_JAVA_TRIM) == "" or expr == SUB_ALL:
        return SubExpr(match_all=True)
    tags = frozenset(t for t in (part.strip(_JAVA_TRIM) for part in expr.split("||")) if t)
    if not tags:
        raise UsageError(
            f"subscription expression {expr!r} names no tag",
            hint="use '*' for all messages or 'TagA || TagB'",
        )
    return SubExpr(match_all=False, tags=tags)
