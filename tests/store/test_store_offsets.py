"""consumerOffset.json codec and the broker's .bak load rule (spec 2.2, 2.6); offsets.json: test_clientoffsets."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mqctl_testkit.thorough import cases

from mqctl.errors import StoreCorruptError, StoreError
from mqctl.store.offsets import (
    LoadedOffsets,
    OffsetTable,
    decode_consumer_offsets,
    encode_consumer_offsets,
    load_consumer_offsets,
    split_offset_key,
)

# Spec 2.2, exactly as fastjson 1.2.83 writes it.
SPEC_TEXT = (
    b"{\n"
    b'\t"dataVersion":{\n'
    b'\t\t"counter":0,\n'
    b'\t\t"stateVersion":0,\n'
    b'\t\t"timestamp":1700000000000\n'
    b"\t},\n"
    b'\t"groupTopicMap":{\n'
    b'\t\t"GroupA":["TopicTest","%RETRY%GroupA"]\n'
    b"\t},\n"
    b'\t"offsetTable":{\n'
    b'\t\t"%RETRY%GroupA@GroupA":{0:5\n'
    b"\t\t},\n"
    b'\t\t"TopicTest@GroupA":{0:250,1:251,2:0,10:9999999999\n'
    b"\t\t}\n"
    b"\t}\n"
    b"}"
)

EMPTY_5X = b'{\n\t"dataVersion":{\n\t\t"counter":0,\n\t\t"stateVersion":0,\n\t\t"timestamp":1\n\t},\n\t"groupTopicMap":{},\n\t"offsetTable":{}\n}'

FOUR_X = b'{\n\t"offsetTable":{\n\t\t"TopicTest@g1":{"0":"12",1:13\n\t\t},\n\t\t"T2@g2":{}\n\t}\n}'


def spec_table() -> OffsetTable:
    return OffsetTable(
        offsets={
            "%RETRY%GroupA@GroupA": {0: 5},
            "TopicTest@GroupA": {0: 250, 1: 251, 2: 0, 10: 9999999999},
        },
        data_version={"counter": 0, "stateVersion": 0, "timestamp": 1700000000000},
    )


def test_decode_spec_sample() -> None:
    t = decode_consumer_offsets(SPEC_TEXT)
    assert t == spec_table()
    assert t.extra == {}  # groupTopicMap is derived, never kept


def test_encode_reproduces_spec_sample_byte_for_byte() -> None:
    assert encode_consumer_offsets(spec_table()) == SPEC_TEXT


def test_encode_empty_manager() -> None:
    t = OffsetTable(data_version={"counter": 0, "stateVersion": 0, "timestamp": 1})
    assert encode_consumer_offsets(t) == EMPTY_5X
    assert decode_consumer_offsets(EMPTY_5X) == t


def test_decode_4x_lenient() -> None:
    t = decode_consumer_offsets(FOUR_X)
    assert t.data_version is None
    assert t.offsets == {"TopicTest@g1": {0: 12, 1: 13}, "T2@g2": {}}
    assert sorted(split_offset_key(k)[1] for k in t.offsets) == ["g1", "g2"]  # type: ignore[index]


def test_lmq_extra_kept_and_written_alphabetically() -> None:
    data = b'{"dataVersion":{"counter":3,"timestamp":5},"lmqOffsetTable":{"%LMQ%1@g":7},"offsetTable":{"t@g":{0:1}}}'
    t = decode_consumer_offsets(data)
    assert t.extra == {"lmqOffsetTable": {"%LMQ%1@g": 7}}
    text = encode_consumer_offsets(t).decode()
    assert text.index('"groupTopicMap"') < text.index('"lmqOffsetTable"') < text.index('"offsetTable"')
    assert decode_consumer_offsets(text.encode()) == t


def test_with_offsets() -> None:
    t = spec_table()
    t2 = t.with_offsets("GroupA", {("TopicTest", 1): 100, ("TopicTest", 3): 7, ("New", 0): 1}, now_ms=42)
    assert t2.offsets["TopicTest@GroupA"] == {0: 250, 1: 100, 2: 0, 10: 9999999999, 3: 7}
    assert t2.offsets["New@GroupA"] == {0: 1}
    assert t2.offsets["%RETRY%GroupA@GroupA"] == {0: 5}
    assert t2.data_version == {"counter": 1, "stateVersion": 0, "timestamp": 42}
    # The original is untouched.
    assert t == spec_table()


def test_with_offsets_creates_data_version_and_keeps_other_groups() -> None:
    t = decode_consumer_offsets(FOUR_X)
    t2 = t.with_offsets("g1", {("TopicTest", 0): 1}, now_ms=9)
    assert t2.data_version == {"counter": 1, "stateVersion": 0, "timestamp": 9}
    assert t2.offsets == {"TopicTest@g1": {0: 1, 1: 13}, "T2@g2": {}}
    t3 = t2.with_offsets("g1", {}, now_ms=10)
    assert t3.data_version == {"counter": 2, "stateVersion": 0, "timestamp": 10}


def test_with_offsets_4x_data_version_keeps_its_fields() -> None:
    t = OffsetTable({"t@g": {0: 1}}, {"counter": "4", "timestamp": 1})
    assert t.with_offsets("g", {}, now_ms=2).data_version == {"counter": 5, "timestamp": 2}


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"   ",
        b"[1]",
        b'{"offsetTable":[1]}',
        b'{"offsetTable":{"t@g":5}}',
        b'{"offsetTable":{"t@g":{"x":5}}}',
        b'{"offsetTable":{"t@g":{0:1.5}}}',
        b'{"offsetTable":{"t@g":{0:true}}}',
        b'{"offsetTable":{"t@g":{4294967296:1}}}',
        b'{"offsetTable":{"t@g":{0:99999999999999999999}}}',
        b'{"offsetTable":{7:{0:1}}}',
        b'{"dataVersion":{"counter":"x"}}',
        b"\xff\xfe",
    ],
)
def test_decode_rejects(data: bytes) -> None:
    with pytest.raises(StoreCorruptError):
        decode_consumer_offsets(data)


@pytest.mark.parametrize(
    "entry",
    [
        b'"t@g":{0:1.5}',
        b'"t@g":{0:true}',
        b'"t@g":{2147483648:1}',
        b'"t@g":{-2147483649:1}',
        b'"t@g":{0:9223372036854775808}',
        b'"t@g":{0:-9223372036854775809}',
        b'"t@g":{0:"1"}',  # a number written as a string: read as the number
        b'"t@g":{"2":"3"}',
        b'"t@g":[1]',
        b"7:{0:1}",
    ],
)
def test_an_entry_among_plain_ones_reads_as_alone(entry: bytes) -> None:
    # A table is read at once when every entry is plain; one that is not sends the whole table
    # entry by entry, with the same result (or error) as that entry alone.
    def outcome(data: bytes) -> object:
        try:
            offsets = decode_consumer_offsets(data).offsets
        except StoreCorruptError as exc:
            return exc.message
        return {k: v for k, v in offsets.items() if k not in ("a@g", "b@g")}

    alone = b'{"offsetTable":{' + entry + b"}}"
    among = b'{"offsetTable":{"a@g":{0:1,1:2},' + entry + b',"b@g":{3:4}}}'
    assert outcome(among) == outcome(alone)


def test_plain_table_reads_every_entry() -> None:
    data = b'{"offsetTable":{"a@g":{0:1,1:-1},"b@g":{},"c@g":{2147483647:9223372036854775807,-2147483648:0}}}'
    assert decode_consumer_offsets(data).offsets == {
        "a@g": {0: 1, 1: -1},
        "b@g": {},
        "c@g": {2147483647: 2**63 - 1, -(2**31): 0},
    }


@settings(max_examples=cases(200))
@given(st.binary(max_size=80))
def test_random_bytes_only_typed_errors(data: bytes) -> None:
    try:
        decode_consumer_offsets(data)
    except StoreCorruptError:
        pass


@given(st.integers(min_value=0, max_value=len(SPEC_TEXT) - 1))
def test_truncated_is_corrupt(n: int) -> None:
    with pytest.raises(StoreCorruptError):
        decode_consumer_offsets(SPEC_TEXT[:n])


names = st.text(alphabet="%|abcXYZ019_-", min_size=1, max_size=8)
tables = st.builds(
    OffsetTable,
    offsets=st.dictionaries(
        st.builds(lambda t, g: f"{t}@{g}", names, names),
        st.dictionaries(st.integers(0, 2**31 - 1), st.integers(-1, 2**63 - 1), max_size=4),
        max_size=5,
    ),
    data_version=st.one_of(
        st.none(),
        st.fixed_dictionaries({"counter": st.integers(0, 10**6), "timestamp": st.integers(0, 2**42)}),
    ),
)


@settings(max_examples=cases(100))
@given(tables)
def test_round_trip(t: OffsetTable) -> None:
    back = decode_consumer_offsets(encode_consumer_offsets(t))
    assert back == t
    assert list(back.offsets) == list(t.offsets)  # order preserved


# --- load rule -----------------------------------------------------------------------------


def write(d: Path, name: str, data: bytes) -> None:
    (d / name).write_bytes(data)


def load(d: Path) -> LoadedOffsets:
    return load_consumer_offsets(d, retries=2, retry_delay=0.0)


def test_load_main(tmp_path: Path) -> None:
    write(tmp_path, "consumerOffset.json", SPEC_TEXT)
    write(tmp_path, "consumerOffset.json.bak", b"garbage")
    got = load(tmp_path)
    assert got == LoadedOffsets(spec_table(), tmp_path / "consumerOffset.json", False, None)


@pytest.mark.parametrize(
    ("main", "reason"), [(None, "missing"), (b"", "empty"), (b'{"offsetTable":{', "unparsable")]
)
def test_load_falls_back_to_bak(tmp_path: Path, main: bytes | None, reason: str) -> None:
    if main is not None:
        write(tmp_path, "consumerOffset.json", main)
    write(tmp_path, "consumerOffset.json.bak", SPEC_TEXT)
    got = load(tmp_path)
    assert got.table == spec_table()
    assert got.path == tmp_path / "consumerOffset.json.bak"
    assert got.fell_back
    assert got.warning is not None and reason in got.warning and "consumerOffset.json.bak" in got.warning


@pytest.mark.parametrize("bak", [None, b"", b"\n"])
def test_load_empty_when_bak_missing_or_empty(tmp_path: Path, bak: bytes | None) -> None:
    write(tmp_path, "consumerOffset.json", b"")
    if bak is not None:
        write(tmp_path, "consumerOffset.json.bak", bak)
    got = load(tmp_path)
    assert got.table == OffsetTable()
    assert got.path is None and not got.fell_back
    assert got.warning is not None and "empty" in got.warning


def test_load_nothing_at_all(tmp_path: Path) -> None:
    got = load(tmp_path)
    assert got.table == OffsetTable() and got.path is None
    assert got.warning is not None and "missing" in got.warning


def test_load_corrupt_bak_is_fatal(tmp_path: Path) -> None:
    write(tmp_path, "consumerOffset.json", b"{")
    write(tmp_path, "consumerOffset.json.bak", b"{oops")
    with pytest.raises(StoreCorruptError, match="consumerOffset.json.bak"):
        load(tmp_path)


def test_load_retries_until_rewrite_finishes(tmp_path: Path) -> None:
    # A 5.1-5.3 broker truncates the file and rewrites it in place: the reader must wait.
    from mqctl.store.offsets import decode_consumer_offsets as decode
    from mqctl.store.offsets import load_config_file

    main = tmp_path / "consumerOffset.json"
    main.write_bytes(b"")
    write(tmp_path, "consumerOffset.json.bak", EMPTY_5X)
    sleeps: list[float] = []

    def fake_sleep(delay: float) -> None:
        sleeps.append(delay)
        if len(sleeps) == 2:
            main.write_bytes(SPEC_TEXT)

    got = load_config_file(main, decode, retries=3, retry_delay=0.01, sleep=fake_sleep)
    assert got.value == spec_table() and got.path == main and not got.fell_back and got.warning is None
    assert sleeps == [0.01, 0.01]


def test_load_unreadable_is_store_error(tmp_path: Path) -> None:
    (tmp_path / "consumerOffset.json").mkdir()
    with pytest.raises(StoreError):
        load(tmp_path)


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        # String.split("@") by hand: trailing empty strings dropped, leading ones kept
        ("TopicTest@GroupA", ("TopicTest", "GroupA")),
        ("TopicTest@GroupA@broadcast", None),
        ("@GroupA", ("", "GroupA")),
        ("TopicTest@GroupA@", ("TopicTest", "GroupA")),
        ("a@b@@", ("a", "b")),
        ("TopicTest@@", None),
        ("@", None),
        ("TopicTest", None),
    ],
)
def test_java_topic_and_group(key: str, expected: tuple[str, str] | None) -> None:
    from mqctl.store.offsets import java_topic_and_group

    assert java_topic_and_group(key) == expected
