"""RocketMQ release versions: MQVersion ordinals (every request and response header carries one)
and their names, as mqadmin prints them (spec/mqadmin.md 6)."""

from __future__ import annotations

# Landmarks (docs/rocketmq-versions.md): the releases mqctl is checked against.
V4_9_7 = 407
V5_0_0 = 413
V5_1_0 = 433  # the first to keep broadcasting groups' pull offsets (topic@group@broadcast)
V5_2_0 = 453  # the broker-side reset (useServerSideResetOffset) on by default
V5_3_3 = 479
V5_5_0 = 513
V5_5_1 = 515


def is_legacy(ordinal: int | None) -> bool:
    """A 4.x release: mqadmin's 4.x layouts, the 4.x broker's time search and reset paths."""
    return ordinal is not None and ordinal < V5_0_0


def version_ordinal(text: str) -> int:
    """The MQVersion ordinal of a release named ``4.9.7`` / ``V5_3_3`` / ``5.5.1`` (4.0.0 on);
    ValueError for anything else."""
    parts = text.strip().upper().lstrip("V").replace("_", ".").split(".")
    if len(parts) != 3 or not all(p.isdecimal() for p in parts):
        raise ValueError(f"not a RocketMQ release: {text!r} (expected e.g. 4.9.7, 5.3.3, 5.5.1)")
    major, minor, patch = (int(p) for p in parts)
    if major < 4 or minor > 9 or patch > 9:
        raise ValueError(f"not a RocketMQ release mqctl knows: {text!r} (4.0.0 to 5.9.9)")
    # The enum runs 4.0.0-SNAPSHOT, 4.0.0, 4.0.1-SNAPSHOT, ... from ordinal 212 (see version_name).
    return 212 + (major - 4) * 200 + minor * 20 + patch * 2 + 1


# MQVersion ordinals 0-15: the 3.0.0 pre-releases, in enum order.
_V3_0_0 = (
    "V3_0_0_SNAPSHOT",
    "V3_0_0_ALPHA1",
    "V3_0_0_BETA1",
    "V3_0_0_BETA2",
    "V3_0_0_BETA3",
    "V3_0_0_BETA4",
    "V3_0_0_BETA5",
    "V3_0_0_BETA6_SNAPSHOT",
    "V3_0_0_BETA6",
    "V3_0_0_BETA7_SNAPSHOT",
    "V3_0_0_BETA7",
    "V3_0_0_BETA8_SNAPSHOT",
    "V3_0_0_BETA8",
    "V3_0_0_BETA9_SNAPSHOT",
    "V3_0_0_BETA9",
    "V3_0_0_FINAL",
)
_HIGHER_VERSION = 612


def version_name(ordinal: int) -> str:
    """MQVersion.getVersionDesc: the enum constant named by ``ordinal`` (mqadmin.md 6).

    Ordinals past the table are ``HIGHER_VERSION``, as in Java. Java throws for a negative ordinal;
    a peer can send one (the binary header's int16), so this returns ``UNKNOWN_VERSION_<n>`` instead.
    """
    v = ordinal
    if v < 0:
        return f"UNKNOWN_VERSION_{v}"
    if v < 16:
        return _V3_0_0[v]
    if v >= _HIGHER_VERSION:
        return "HIGHER_VERSION"
    if v < 46:
        o = v - 16
        name = f"V3_0_{o // 2 + 1}"
    elif v < 86:
        o = v - 46
        name = f"V3_{1 + o // 20}_{(o % 20) // 2}"
    elif v < 212:
        o = v - 86
        name = f"V3_{3 + o // 18}_{1 + (o % 18) // 2}"
    else:
        o = v - 212
        name = f"V{4 + o // 200}_{(o % 200) // 20}_{(o % 20) // 2}"
    # Each release is preceded by its own snapshot constant.
    return name + "_SNAPSHOT" if o % 2 == 0 else name
