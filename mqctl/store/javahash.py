"""Java ``String.hashCode`` — the tagsCode a ConsumeQueue entry stores for a message's TAGS."""

from __future__ import annotations

__all__ = ["java_string_hash"]


def java_string_hash(s: str) -> int:
    """Return Java's ``s.hashCode()`` as a signed 32-bit int.

    Java folds UTF-16 code units, so a character outside the BMP contributes its two surrogates;
    hashing Python code points instead would give a different value for e.g. emoji tags.
    """
    # surrogatepass: a lone surrogate is a legal Java char, and a tag built by another client may hold one.
    data = s.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - 0x1_0000_0000 if h >= 0x8000_0000 else h
