"""bodies.holds_broadcast_entry: a GET_ALL_CONSUMER_OFFSET body is decoded only when it may hold
the group's ``topic@group@broadcast`` keys; bodies as the brokers write them (fastjson: bare
integer keys, names unescaped), checked against the decoded body."""

from __future__ import annotations

import pytest

from mqctl.remoting.bodies import decode_consumer_offsets_body, holds_broadcast_entry
from mqctl.store.offsets import split_offset_key

BODY = (
    b'{"offsetTable":{"TopicA@GroupA":{0:3,1:4},"TopicA@GroupBc@broadcast":{0:9},'
    b'"%RETRY%GroupA@GroupA":{0:0},"TopicB@xGroupC@broadcast":{1:2}}}'
)


def _decoded_holds(body: bytes, group: str) -> bool:
    keys = (split_offset_key(k) for k in decode_consumer_offsets_body(body))
    return any(p is not None and p[1] == group and p[2] == "broadcast" for p in keys)


@pytest.mark.parametrize(
    "group", ["GroupA", "GroupBc", "GroupC", "xGroupC", "Group", "Bc", "broadcast", "TopicA"]
)
def test_ruled_out_only_where_the_decoded_body_has_no_entry(group: str) -> None:
    if _decoded_holds(BODY, group):
        assert holds_broadcast_entry(BODY, group)
    assert holds_broadcast_entry(BODY, group) == _decoded_holds(BODY, group)


def test_a_body_that_is_not_one_whole_object_is_decoded() -> None:
    for n in range(len(BODY)):  # a table cut anywhere: decoding it says so, never "no entries"
        assert holds_broadcast_entry(BODY[:n], "GroupC"), BODY[:n]
    assert holds_broadcast_entry(b"", "GroupC") and holds_broadcast_entry(b"garbage", "GroupC")
    assert not holds_broadcast_entry(b"  \n" + BODY + b"\n", "GroupC")


@pytest.mark.parametrize("group", ["Group@A", 'Gr"oup', "Grüppe", "G\\u0041", ""])
def test_a_name_outside_the_brokers_charset_is_never_ruled_out(group: str) -> None:
    assert holds_broadcast_entry(BODY, group)
