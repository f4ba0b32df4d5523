"""VIEW_MESSAGE_BY_ID (33) and QUERY_CONSUME_QUEUE (321) bodies.

The stored-message records are packed here with struct, row by row from the table of
remoting.md 7.14, independently of mqctl's store writer; the expected offset message ids are
worked out by hand in the comments.
"""

from __future__ import annotations

import struct

import pytest

from mqctl.errors import ProtocolError
from mqctl.model import MessageQueue
from mqctl.remoting.bodies import CqAnswer, CqEntry, decode_query_consume_queue, decode_stored_message

MAGIC_V1 = 0xDAA320A7
MAGIC_V2 = 0xDAA320AB

# KEYS 4+1+5+1, TAGS 4+1+4+1, UNIQ_KEY 8+1+12+1: 43 bytes.
PROPS = b"KEYS\x01k1 k2\x02TAGS\x01tagA\x02UNIQ_KEY\x01AC1100010001\x02"


def record(
    *,
    born: bytes,
    store: bytes,
    sys_flag: int,
    magic: int = MAGIC_V1,
    topic: bytes = b"TopicTest",
    props: bytes = PROPS,
    total: int | None = None,
) -> bytes:
    """One commit-log record, rows 1-17 of remoting.md 7.14 (``born``/``store`` = IP bytes + port)."""
    rows = [
        struct.pack(">I", magic),  # 2 magic
        struct.pack(">i", 0x1234),  # 3 body CRC (deliberately wrong: the client does not check it)
        struct.pack(">i", 3),  # 4 queue id
        struct.pack(">i", 0),  # 5 flag
        struct.pack(">q", 42),  # 6 queue offset
        struct.pack(">q", 1234567),  # 7 commit-log offset
        struct.pack(">i", sys_flag),  # 8 sysFlag
        struct.pack(">q", 1704164645000),  # 9 born timestamp
        born,  # 10
        struct.pack(">q", 1704164645006),  # 11 store timestamp
        store,  # 12
        struct.pack(">i", 2),  # 13 reconsume times
        struct.pack(">q", 0),  # 14 prepared transaction offset
        struct.pack(">i", 5) + b"Hello",  # 15 body
        (struct.pack(">h", len(topic)) if magic == MAGIC_V2 else struct.pack(">b", len(topic))) + topic,  # 16
        struct.pack(">h", len(props)) + props,  # 17
    ]
    rest = b"".join(rows)
    return struct.pack(">i", len(rest) + 4 if total is None else total) + rest


V4_BORN = bytes([192, 168, 1, 10]) + struct.pack(">i", 51234)
V4_STORE = bytes([10, 0, 0, 5]) + struct.pack(">i", 10911)
V6_BORN = bytes.fromhex("20010db8000000000000000000000001") + struct.pack(">i", 51234)
V6_STORE = bytes(15) + b"\x01" + struct.pack(">i", 10911)

# 84 fixed + 9 body + 10 topic + 45 properties = 148 bytes.
RECORD_V4 = record(born=V4_BORN, store=V4_STORE, sys_flag=0)
# Both hosts IPv6 (sysFlag 0x10 | 0x20): 24 more bytes; topic length in 2 bytes (v2): 1 more.
RECORD_V6 = record(born=V6_BORN, store=V6_STORE, sys_flag=0x30, magic=MAGIC_V2)

# 10.0.0.5 = 0A000005, port 10911 = 0x2A9F, offset 1234567 = 0x12D687.
MSG_ID_V4 = "0A000005" + "00002A9F" + "000000000012D687"
# ::1 = 15 zero bytes then 01.
MSG_ID_V6 = "00000000000000000000000000000001" + "00002A9F" + "000000000012D687"


def test_record_sizes_as_worked_out() -> None:
    assert len(RECORD_V4) == 148
    assert len(RECORD_V6) == 148 + 24 + 1


def test_stored_message_ipv4() -> None:
    msg = decode_stored_message(RECORD_V4, "broker-a")
    assert msg.queue == MessageQueue("TopicTest", "broker-a", 3)
    assert msg.queue_offset == 42
    assert msg.physical_offset == 1234567
    assert msg.msg_id == MSG_ID_V4
    assert len(msg.msg_id) == 32
    assert msg.store_timestamp == 1704164645006
    assert msg.born_timestamp == 1704164645000
    assert msg.born_host == "192.168.1.10:51234"
    assert msg.store_host == "10.0.0.5:10911"
    assert msg.reconsume_times == 2
    assert msg.size == 148
    assert msg.tags == "tagA"
    assert msg.keys == "k1 k2"
    assert msg.unique_key == "AC1100010001"
    assert msg.properties == (("KEYS", "k1 k2"), ("TAGS", "tagA"), ("UNIQ_KEY", "AC1100010001"))


def test_stored_message_ipv6_v2() -> None:
    msg = decode_stored_message(RECORD_V6, "broker-b")
    assert msg.queue == MessageQueue("TopicTest", "broker-b", 3)
    assert msg.msg_id == MSG_ID_V6
    assert len(msg.msg_id) == 56
    assert msg.born_host == "[2001:db8::1]:51234"
    assert msg.store_host == "[::1]:10911"
    assert msg.size == 173


def test_stored_message_without_properties() -> None:
    msg = decode_stored_message(record(born=V4_BORN, store=V4_STORE, sys_flag=0, props=b""), "b")
    assert (msg.tags, msg.keys, msg.unique_key, msg.properties) == (None, None, None, ())


@pytest.mark.parametrize(
    "body",
    [
        b"",
        RECORD_V4[:-1],
        record(born=V4_BORN, store=V4_STORE, sys_flag=0, total=147),
        record(born=V4_BORN, store=V4_STORE, sys_flag=0, total=-1),
        record(born=V4_BORN, store=V4_STORE, sys_flag=0, magic=0xCBD43194),
        record(born=V4_BORN, store=V4_STORE, sys_flag=0, magic=0),
        record(born=V4_BORN, store=V4_STORE, sys_flag=0x20),  # claims an IPv6 store host it lacks
        record(born=V4_BORN, store=V4_STORE, sys_flag=0, topic=b"\xff\xfe"),
    ],
)
def test_stored_message_refusals(body: bytes) -> None:
    with pytest.raises(ProtocolError):
        decode_stored_message(body, "b")


def test_stored_message_every_truncation_refused() -> None:
    for n in range(len(RECORD_V6)):
        with pytest.raises(ProtocolError):
            decode_stored_message(RECORD_V6[:n], "b")


# ---------------------------------------------------------------------------------------------
# QUERY_CONSUME_QUEUE: QueryConsumeQueueResponseBody as fastjson writes it (properties sorted,
# nulls omitted, "eval" always present).

CQ_PLAIN = (
    b'{"maxQueueIndex":1000,"minQueueIndex":0,"queueData":['
    b'{"eval":false,"physicOffset":0,"physicSize":186,"tagsCode":0},'
    b'{"eval":false,"physicOffset":186,"physicSize":190,"tagsCode":3552645}]}'
)
CQ_WITH_GROUP = (
    b'{"filterData":"g1@TopicTest is not online!","maxQueueIndex":12,"minQueueIndex":4,'
    b'"queueData":[{"eval":false,"msg":"Cq extend not exist!addr: -2147483649","physicOffset":4096,'
    b'"physicSize":200,"tagsCode":-2147483649}]}'
)


def test_query_consume_queue() -> None:
    answer = decode_query_consume_queue(CQ_PLAIN, 640)
    assert answer == CqAnswer(
        entries=(CqEntry(640, 0, 186, 0), CqEntry(641, 186, 190, 3552645)),
        min_offset=0,
        max_offset=1000,
    )


def test_query_consume_queue_with_group() -> None:
    answer = decode_query_consume_queue(CQ_WITH_GROUP, 5)
    assert answer.entries == (CqEntry(offset=5, phys_offset=4096, size=200, tags_code=-2147483649),)
    assert (answer.min_offset, answer.max_offset) == (4, 12)


def test_query_consume_queue_count_zero() -> None:
    assert decode_query_consume_queue(b'{"maxQueueIndex":3,"minQueueIndex":0,"queueData":[]}', 0) == CqAnswer(
        (), 0, 3
    )


@pytest.mark.parametrize(
    "body",
    [
        b"",  # the broker's "Index ... is not exist!" answer carries no body
        b'{"queueData":{}}',
        b'{"queueData":[{"physicOffset":"x"}]}',
        b'{"queueData":[{"physicSize":2147483648}]}',
        b'{"maxQueueIndex":[]}',
    ],
)
def test_query_consume_queue_refusals(body: bytes) -> None:
    with pytest.raises(ProtocolError):
        decode_query_consume_queue(body, 0)
