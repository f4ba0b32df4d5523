"""A broadcasting client's offsets.json: real files of 4.9.7, 5.3.3 and 5.5.1 clients (golden/
clientoffsets, README there says who wrote them and what each consumer received), the client's .bak
rule, damaged files (spec rocketmq-store.md 2.7; the project's broadcast notes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mqctl.errors import StoreCorruptError
from mqctl.model import MessageQueue
from mqctl.model.javaorder import bucket, message_queue_hash
from mqctl.store import clientoffsets
from mqctl.store.clientoffsets import (
    FASTJSON,
    FASTJSON2,
    client_order,
    decode_client_offsets,
    detect_dialect,
    encode_client_offsets,
    load_client_offsets,
)

GOLDEN = Path(__file__).parent / "golden" / "clientoffsets"
VERSIONS = ("4.9.7", "5.3.3", "5.5.1")
# Which layout each client line writes (fastjson 1 up to 5.3, fastjson2 in 5.5).
LAYOUT = {"4.9.7": FASTJSON, "5.3.3": FASTJSON, "5.5.1": FASTJSON2}


def _mq(broker: str, qid: int) -> MessageQueue:
    return MessageQueue("TopicBc", broker, qid)


A0, A1, A2, B0, B1 = (
    _mq("broker-a", 0),
    _mq("broker-a", 1),
    _mq("broker-a", 2),
    _mq("broker-b", 0),
    _mq("broker-b", 1),
)
# The next offsets, from what each consumer received (golden/clientoffsets/README.md).
B_FILE = {A0: 10, A1: 10, A2: 0, B0: 10, B1: 10}
A_FILE = {
    "4.9.7": {A0: 10, A1: 10, B0: 10, B1: 10},
    "5.3.3": {A0: 10, A1: 10, B0: 10, B1: 10},
    "5.5.1": {A0: 1, A1: 1, B0: 8, B1: 8},
}
B_REL = "hostB/.rocketmq_offsets/192.0.2.2@bcB/GroupBc/offsets.json"
A_REL = "hostA/.rocketmq_offsets/192.0.2.2@bcA/GroupBc/offsets.json"


def _golden() -> list[tuple[str, str, dict[MessageQueue, int]]]:
    out = []
    for v in VERSIONS:
        out += [
            (v, B_REL, B_FILE),
            (v, B_REL + ".bak", B_FILE),
            (v, A_REL, A_FILE[v]),
            (v, "bcA-restarted-offsets.json", {A0: 10, A1: 10, B0: 10, B1: 10}),
        ]
    return out


GOLDEN_FILES = _golden()
IDS = [
    f"{v}:{rel.split('/')[-1] if rel.startswith('bcA') else rel.split('/')[2] + '/' + rel.split('/')[-1]}"
    for v, rel, _ in GOLDEN_FILES
]


@pytest.mark.parametrize(("version", "rel", "expected"), GOLDEN_FILES, ids=IDS)
def test_real_files_decode_to_what_the_consumer_received(version: str, rel: str, expected: dict) -> None:
    table = decode_client_offsets((GOLDEN / version / rel).read_bytes())
    assert table.as_dict() == expected
    assert table.dialect == LAYOUT[version]


@pytest.mark.parametrize(("version", "rel", "expected"), GOLDEN_FILES, ids=IDS)
def test_real_files_encode_byte_equal(version: str, rel: str, expected: dict) -> None:
    data = (GOLDEN / version / rel).read_bytes()
    table = decode_client_offsets(data)
    assert encode_client_offsets(table.entries, LAYOUT[version]) == data


@pytest.mark.parametrize(("version", "rel", "expected"), GOLDEN_FILES, ids=IDS)
def test_real_files_are_in_the_clients_map_order(version: str, rel: str, expected: dict) -> None:
    """The client writes its ConcurrentHashMap's order: buckets of MessageQueue.hashCode, ties in
    the order it learnt the queues (bcA and bcB of 5.3.3 differ there: broker-a 0 and broker-b 1
    share bucket 7)."""
    entries = decode_client_offsets((GOLDEN / version / rel).read_bytes()).entries
    buckets = [bucket(message_queue_hash(mq), 16) for mq, _ in entries]
    assert buckets == sorted(buckets)
    assert client_order(entries) == list(entries)
    scrambled = client_order(list(reversed(entries)))
    assert [bucket(message_queue_hash(mq), 16) for mq, _ in scrambled] == buckets
    assert set(scrambled) == set(entries)


def test_the_two_layouts_side_by_side() -> None:
    """The same table as fastjson 1 and fastjson2 write it (read off the real files)."""
    entries = [(A1, 43), (A0, 42)]
    one = (
        b'{\n\t"offsetTable":{{\n\t\t\t"brokerName":"broker-a",\n\t\t\t"queueId":1,\n\t\t\t"topic":"TopicBc"\n'
        b'\t\t}:43,{\n\t\t\t"brokerName":"broker-a",\n\t\t\t"queueId":0,\n\t\t\t"topic":"TopicBc"\n\t\t}:42\n\t}\n}'
    )
    two = (
        b'{\n\t"offsetTable":{\n\t\t{\n\t\t\t"brokerName":"broker-a",\n\t\t\t"queueId":1,\n\t\t\t"topic":"TopicBc"\n'
        b'\t\t}:43,\n\t\t{\n\t\t\t"brokerName":"broker-a",\n\t\t\t"queueId":0,\n\t\t\t"topic":"TopicBc"\n\t\t}:42\n\t}\n}'
    )
    assert encode_client_offsets(entries, FASTJSON) == one
    assert encode_client_offsets(entries, FASTJSON2) == two
    assert detect_dialect(one) == FASTJSON and detect_dialect(two) == FASTJSON2
    for text in (one, two):
        assert decode_client_offsets(text).entries == tuple(entries)
    empty = b'{\n\t"offsetTable":{}\n}'
    assert encode_client_offsets([], FASTJSON) == empty
    assert decode_client_offsets(empty).entries == ()


@pytest.mark.parametrize(
    "text",
    [
        b'{"offsetTable":{{"brokerName":"broker-a","queueId":1,"topic":"TopicBc"}:43}}',  # compact
        b'{"offsetTable":{{"topic":"TopicBc","queueId":"1","brokerName":"broker-a"}:"43"}}',  # any order, strings
        b'{"offsetTable":{"{\\"brokerName\\":\\"broker-a\\",\\"queueId\\":1,\\"topic\\":\\"TopicBc\\"}":43}}',
        b'\xef\xbb\xbf{ "offsetTable" : { { "brokerName" : "broker-a" , "queueId" : 1 , "topic" : "TopicBc" } : 43 } }',
    ],
    ids=["compact", "strings-any-order", "key-as-json-string", "bom-and-spaces"],
)
def test_fastjson_leniency(text: bytes) -> None:
    assert decode_client_offsets(text).as_dict() == {A1: 43}


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (b'{"offsetTable":{"TopicBc@GroupBc":{0:10}}}', "not a MessageQueue"),  # a broker's table
        (b'{"offsets":{}}', "no offsetTable"),
        (b'{"offsetTable":[]}', "not an object"),
        (b'{"offsetTable":{{"queueId":1}:1}}', "lacks its topic"),
        (b'{"offsetTable":{{"topic":"T","brokerName":"b"}:1}}', "lacks its queueId"),
        (b'{"offsetTable":{{"topic":"T","brokerName":"b","queueId":"q"}:1}}', "expected an integer"),
        (b'{"offsetTable":{{"topic":"T","brokerName":"b","queueId":-1}:1}}', "negative queueId"),
        (b'{"offsetTable":{{"topic":"T","brokerName":"b","queueId":1}:null}}', "no offset"),
        (
            b'{"offsetTable":{{"topic":"T","brokerName":"b","queueId":1}:99999999999999999999}}',
            "out of range",
        ),
        (b"[1,2]", "not a JSON object"),
        (b"", "empty"),
        (b"\xff\xfe", "not UTF-8"),
    ],
)
def test_not_a_client_file(text: bytes, why: str) -> None:
    with pytest.raises(StoreCorruptError, match=why):
        decode_client_offsets(text, "some/offsets.json")


def test_a_brokers_file_is_not_a_clients() -> None:
    """A real 5.3.3 consumerOffset.json (the broadcast group's @broadcast entry) given as offsets.json."""
    broker = (
        b'{\n\t"dataVersion":{\n\t\t"counter":0,\n\t\t"stateVersion":0,\n\t\t"timestamp":1795596823706\n\t},\n'
        b'\t"groupTopicMap":{},\n\t"offsetTable":{\n\t\t"TopicBc@GroupBc@broadcast":{0:10,1:10,2:0\n\t\t}\n\t}\n}'
    )
    with pytest.raises(StoreCorruptError, match="not a MessageQueue object"):
        decode_client_offsets(broker)


@pytest.mark.parametrize("version", VERSIONS)
def test_every_truncation_of_a_real_file_is_corrupt(version: str) -> None:
    data = (GOLDEN / version / B_REL).read_bytes()
    for n in range(len(data)):
        with pytest.raises(StoreCorruptError):
            decode_client_offsets(data[:n])


# --------------------------------------------------------------------------- the client's .bak rule


def _client_dir(tmp_path: Path, version: str = "5.3.3", *, main: bytes | None, bak: bytes | None) -> Path:
    d = tmp_path / ".rocketmq_offsets" / "192.0.2.2@bcB" / "GroupBc"
    d.mkdir(parents=True)
    if main is not None:
        (d / "offsets.json").write_bytes(main)
    if bak is not None:
        (d / "offsets.json.bak").write_bytes(bak)
    return d / "offsets.json"


REAL = (GOLDEN / "5.3.3" / B_REL).read_bytes()
OLDER = encode_client_offsets([(A0, 3), (B0, 4)])


def test_good_file_is_read_and_its_bak_ignored(tmp_path: Path) -> None:
    path = _client_dir(tmp_path, main=REAL, bak=b"{broken")
    loaded = load_client_offsets(path, retries=0)
    assert loaded.value is not None and loaded.value.as_dict() == B_FILE
    assert loaded.path == path and not loaded.fell_back and loaded.warning is None


@pytest.mark.parametrize(
    "main", [b"", REAL[:100], None, b"   \n"], ids=["empty", "truncated", "missing", "blank"]
)
def test_the_bak_is_read_when_the_file_is_not_usable(tmp_path: Path, main: bytes | None) -> None:
    """readLocalOffset: a missing, empty or unparsable file -> readLocalOffsetBak (seen on real
    clients of every version: restarted on a truncated or empty file they resumed from the .bak)."""
    path = _client_dir(tmp_path, main=main, bak=OLDER)
    loaded = load_client_offsets(path, retries=0)
    assert loaded.value is not None and loaded.value.as_dict() == {A0: 3, B0: 4}
    assert loaded.fell_back and loaded.path == path.with_name("offsets.json.bak")
    assert loaded.warning is not None and str(path.parent) in loaded.warning


@pytest.mark.parametrize("bak", [None, b""], ids=["no-bak", "empty-bak"])
def test_unparsable_file_without_a_bak_names_the_file(tmp_path: Path, bak: bytes | None) -> None:
    """The client would start afresh (from its consumeFromWhere); mqctl refuses to read that as
    'no offsets' (a gate must never pass on it): exit 6 naming the file."""
    path = _client_dir(tmp_path, main=REAL[:100], bak=bak)
    with pytest.raises(StoreCorruptError) as info:
        load_client_offsets(path, retries=0)
    assert str(path) in info.value.message
    assert info.value.exit_status == 6


def test_unparsable_file_and_bak_names_the_file(tmp_path: Path) -> None:
    """The client fails to start (readLocalOffsetBak throws MQClientException)."""
    path = _client_dir(tmp_path, main=b"{not json", bak=b"{neither")
    with pytest.raises(StoreCorruptError, match="corrupt too") as info:
        load_client_offsets(path, retries=0)
    assert str(path) in info.value.message


def test_empty_file_without_a_bak_is_a_fresh_client(tmp_path: Path) -> None:
    """Nothing to read on either side: the client starts afresh, and so says mqctl (value None)."""
    path = _client_dir(tmp_path, main=b"", bak=None)
    loaded = load_client_offsets(path, retries=0)
    assert loaded.value is None and loaded.warning is not None and "empty" in loaded.warning


def test_size_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(clientoffsets, "MAX_CLIENT_OFFSETS_BYTES", len(REAL) - 1)
    path = _client_dir(tmp_path, main=REAL, bak=None)
    with pytest.raises(StoreCorruptError, match="limit") as info:
        load_client_offsets(path, retries=0)
    assert str(path) in info.value.message
    path.with_name("offsets.json.bak").write_bytes(OLDER)
    assert load_client_offsets(path, retries=0).fell_back


def test_a_directory_in_place_of_the_file(tmp_path: Path) -> None:
    path = _client_dir(tmp_path, main=None, bak=None)
    path.mkdir()
    with pytest.raises(StoreCorruptError, match="not a regular file"):
        load_client_offsets(path, retries=0)
