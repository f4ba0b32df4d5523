"""RocketMQ release versions: MQVersion ordinals (every request and response header carries one)
and their names, as mqadmin prints them (spec/mqadmin.md 6)."""

from __future__ import annotations

# Landmarks (docs/rocketmq-versions.md): the releases mqctl is checked against.
V4_9_7 = 407
V5_0_0 = 413
V5_2_0 = 453  # the broker-side reset (useServerSideResetOffset) on by default
V5_3_3 = 479
V5_5_0 = 513
V5_5_1 = 515

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
