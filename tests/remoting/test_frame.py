"""Frame codec against the bytes of remoting.md 2/3, and hostile input into the decoder."""

from __future__ import annotations

import json
import re
import struct
from enum import Enum

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mqctl_testkit.thorough import cases

from mqctl.errors import ProtocolError
from mqctl.remoting.codes import LANGUAGE_CODES, LanguageCode
from mqctl.remoting.frame import (
    JSON,
    ROCKETMQ,
    RemotingCommand,
    encode_command,
    ext_int,
    request,
)
from mqctl.remoting.frame_decode import FrameDecoder

# remoting.md 2: GET_ROUTEINFO_BY_TOPIC for TopicTest, opaque 1, version 479.
GOLDEN_JSON_HEADER = (
    b'{"code":105,"extFields":{"topic":"TopicTest"},"flag":0,"language":"JAVA","opaque":1,'
    b'"serializeTypeCurrentRPC":"JSON","version":479}'
)
GOLDEN_JSON = bytes.fromhex("00000087 00000083") + GOLDEN_JSON_HEADER
GOLDEN_BINARY = bytes.fromhex(
    "0000002d 01000029 0069 00 01df 00000001 00000000 00000000 00000014 0005 746f706963 00000009 546f70696354657374"
)
# remoting.md 3.2 response example.
RESPONSE_HEADER = (
    b'{"code":0,"extFields":{"offset":"100"},"flag":1,"language":"JAVA","opaque":7,'
    b'"serializeTypeCurrentRPC":"JSON","version":479}'
)


def json_frame(header: bytes, body: bytes = b"", stype: int = 0) -> bytes:
    """A frame assembled by hand from the layout table of remoting.md 2."""
    return struct.pack(">iI", 4 + len(header) + len(body), (stype << 24) | len(header)) + header + body


ROUTE_REQUEST = RemotingCommand(code=105, opaque=1, ext_fields={"topic": "TopicTest"})


def test_golden_frames_follow_the_layout() -> None:
    """The golden frames read by hand with remoting.md 2/3.3's layout: a length word counting
    everything after it, a word of serialize type (high byte) and header length, then the header
    (JSON: the request's fields; ROCKETMQ: code, language, version, opaque, flag, remark and
    extFields lengths, then each field as a short-length key and an int-length value)."""
    total, marker = struct.unpack(">iI", GOLDEN_JSON[:8])
    assert (total, marker >> 24, marker & 0xFFFFFF) == (len(GOLDEN_JSON) - 4, 0, len(GOLDEN_JSON) - 8)
    assert json.loads(GOLDEN_JSON[8:]) == {
        "code": 105,
        "extFields": {"topic": "TopicTest"},
        "flag": 0,
        "language": "JAVA",
        "opaque": 1,
        "serializeTypeCurrentRPC": "JSON",
        "version": 479,
    }
    total, marker = struct.unpack(">iI", GOLDEN_BINARY[:8])
    assert (total, marker >> 24, marker & 0xFFFFFF) == (len(GOLDEN_BINARY) - 4, 1, len(GOLDEN_BINARY) - 8)
    head = struct.unpack(">hbhiiii", GOLDEN_BINARY[8:29])
    assert head == (105, LanguageCode.JAVA, 479, 1, 0, 0, len(GOLDEN_BINARY) - 29)
    assert GOLDEN_BINARY[29:] == struct.pack(">h", 5) + b"topic" + struct.pack(">i", 9) + b"TopicTest"


def test_encode_json_golden() -> None:
    assert encode_command(request(105, {"topic": "TopicTest"}, opaque=1)) == GOLDEN_JSON


def test_encode_rocketmq_golden() -> None:
    assert encode_command(request(105, {"topic": "TopicTest"}, opaque=1), ROCKETMQ) == GOLDEN_BINARY


@pytest.mark.parametrize(("data", "stype"), [(GOLDEN_JSON, JSON), (GOLDEN_BINARY, ROCKETMQ)])
def test_decode_goldens(data: bytes, stype: int) -> None:
    (cmd,) = FrameDecoder().feed(data)
    assert cmd == RemotingCommand(code=105, opaque=1, ext_fields={"topic": "TopicTest"}, serialize_type=stype)
    assert (cmd.language, cmd.version, cmd.flag, cmd.remark, cmd.body) == ("JAVA", 479, 0, None, b"")
    assert not cmd.is_response and not cmd.is_oneway


def test_response_example() -> None:
    (cmd,) = FrameDecoder().feed(json_frame(RESPONSE_HEADER))
    assert (cmd.code, cmd.opaque, cmd.flag, cmd.is_response) == (0, 7, 1, True)
    assert dict(cmd.ext_fields) == {"offset": "100"}
    assert ext_int(cmd, "offset") == 100
    # ...and the writer produces exactly that header for the same command.
    resp = RemotingCommand(code=0, opaque=7, flag=1, ext_fields={"offset": "100"})
    assert encode_command(resp) == json_frame(RESPONSE_HEADER)


def test_json_header_sorted_with_remark_and_without_empty_ext() -> None:
    cmd = RemotingCommand(code=1, opaque=-5, flag=3, remark="no", ext_fields={"b": "2", "a": "1", "B": "0"})
    assert encode_command(cmd)[8:] == (
        b'{"code":1,"extFields":{"B":"0","a":"1","b":"2"},"flag":3,"language":"JAVA","opaque":-5,'
        b'"remark":"no","serializeTypeCurrentRPC":"JSON","version":479}'
    )
    bare = RemotingCommand(code=106, opaque=2, version=401)
    assert encode_command(bare)[8:] == (
        b'{"code":106,"flag":0,"language":"JAVA","opaque":2,"serializeTypeCurrentRPC":"JSON","version":401}'
    )


def test_json_strings_escaped_like_fastjson() -> None:
    # fastjson 1.2.83 defaults: short escapes for \b\t\n\f\r " \, \uXXXX upper-case for the other
    # controls, DEL..U+009F and U+2028/9; other non-ASCII raw UTF-8; "/" not escaped.
    value = 'a"\\/\b\t\n\f\r\x01\x0b\x1f\x7f\x9f\xa0é\u2028\u2029中😀'
    cmd = RemotingCommand(code=1, opaque=1, remark=value)
    header = encode_command(cmd)[8:]
    expected = (
        '"remark":"a\\"\\\\/\\b\\t\\n\\f\\r\\u0001\\u000B\\u001F\\u007F\\u009F\xa0é\\u2028\\u2029中😀"'
    ).encode()
    assert expected in header
    assert json.loads(header)["remark"] == value


def test_binary_remark_and_null_values() -> None:
    cmd = RemotingCommand(code=17, opaque=9, flag=1, remark="x", ext_fields={"k": ""})
    data = encode_command(cmd, ROCKETMQ)
    # code 17, JAVA, 479, opaque 9, flag 1, remark "x", ext of 2+1+4+0 = 7 bytes: k -> "" (length 0)
    header = bytes.fromhex("0011 00 01df 00000009 00000001 00000001 78 00000007 0001 6b 00000000")
    assert data == struct.pack(">iI", 4 + len(header), (1 << 24) | len(header)) + header
    (back,) = FrameDecoder().feed(data)
    # Java reads a zero-length value as null: the field is absent.
    assert back.remark == "x" and dict(back.ext_fields) == {}


def test_request_converts_values_like_java() -> None:
    class Boundary(Enum):
        LOWER = 1

    cmd = request(
        29, {"queueId": 3, "committed": True, "force": False, "bt": Boundary.LOWER, "x": None}, opaque=4
    )
    assert dict(cmd.ext_fields) == {"queueId": "3", "committed": "true", "force": "false", "bt": "LOWER"}
    assert request(1, opaque=1, oneway=True).is_oneway


def test_command_is_immutable() -> None:
    src = {"a": "1"}
    cmd = RemotingCommand(code=1, opaque=1, ext_fields=src)
    src["a"] = "2"
    assert cmd.ext_fields["a"] == "1"
    with pytest.raises(TypeError):
        cmd.ext_fields["a"] = "3"  # type: ignore[index]
    with pytest.raises(TypeError):
        RemotingCommand(code=1, opaque=1, ext_fields={"a": 1})  # type: ignore[dict-item]


def test_json_decoding_is_lenient_where_java_is() -> None:
    header = b'{"code":0,"opaque":3,"extFields":{"n":5,"b":true,"x":null,"s":"v","f":1.5},"zzz":[1]}'
    (cmd,) = FrameDecoder().feed(json_frame(header, b"body"))
    assert (cmd.language, cmd.flag, cmd.version, cmd.body) == ("JAVA", 0, 0, b"body")
    assert dict(cmd.ext_fields) == {"n": "5", "b": "true", "s": "v", "f": "1.5"}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("100", 100),
        ("-1", -1),
        ("+7", 7),
        ("9223372036854775807", 2**63 - 1),
        ("-9223372036854775808", -(2**63)),
        ("0000000000000000000000042", 42),  # Long.parseLong takes leading zeros
    ],
)
def test_ext_int(value: str, expected: int) -> None:
    assert ext_int(RemotingCommand(code=0, opaque=1, ext_fields={"v": value}), "v") == expected


@pytest.mark.parametrize(
    "value", ["", "abc", "1.5", " 1", "1_000", "٣", "9223372036854775808", "+", "-", "1" * 5000, "--1"]
)
def test_ext_int_rejects(value: str) -> None:
    with pytest.raises(ProtocolError):
        ext_int(RemotingCommand(code=0, opaque=1, ext_fields={"v": value}), "v")
    with pytest.raises(ProtocolError):
        ext_int(RemotingCommand(code=0, opaque=1), "v")


# -- chunking ---------------------------------------------------------------------------------------

STREAM = GOLDEN_JSON + GOLDEN_BINARY + json_frame(RESPONSE_HEADER, b"\x00\x01body")


def test_every_split_point() -> None:
    for cut in range(len(STREAM) + 1):
        dec = FrameDecoder()
        first = dec.feed(STREAM[:cut])
        rest = dec.feed(STREAM[cut:])
        assert [c.code for c in first + rest] == [105, 105, 0], cut
        assert dec.buffered == 0


def test_byte_by_byte_and_buffered() -> None:
    dec = FrameDecoder()
    got = []
    for i in range(len(GOLDEN_JSON)):
        got += dec.feed(GOLDEN_JSON[i : i + 1])
        assert dec.buffered == (i + 1) % len(GOLDEN_JSON)
    assert got == FrameDecoder().feed(GOLDEN_JSON)


def test_several_frames_in_one_feed() -> None:
    cmds = FrameDecoder().feed(STREAM * 3)
    assert [c.serialize_type for c in cmds] == [JSON, ROCKETMQ, JSON] * 3
    assert cmds[2].body == b"\x00\x01body"


# -- hostile input ----------------------------------------------------------------------------------


def test_oversized_length_refused_before_buffering() -> None:
    dec = FrameDecoder(max_frame=1024)
    with pytest.raises(ProtocolError, match="exceeds"):
        dec.feed(struct.pack(">i", 1021))  # 4 + 1021 > 1024, refused from the length alone
    assert dec.buffered == 0
    with pytest.raises(ProtocolError):  # the stream stays failed
        dec.feed(b"")
    ok = FrameDecoder(max_frame=1024)
    assert ok.feed(struct.pack(">i", 1020)) == [] and ok.buffered == 4  # exactly the limit: waits
    with pytest.raises(ProtocolError):
        FrameDecoder().feed(b"\x7f\xff\xff\xff")


def binary_header(*, remark_len: int = 0, ext: bytes = b"", ext_len: int | None = None) -> bytes:
    fixed = bytes.fromhex("0069 00 01df 00000001 00000000")
    n = len(ext) if ext_len is None else ext_len
    return fixed + struct.pack(">i", remark_len) + struct.pack(">i", n) + ext


MALFORMED = {
    "length below 4": b"\x00\x00\x00\x03abc",
    "negative length": b"\xff\xff\xff\xfe",
    "header longer than frame": struct.pack(">iI", 8, 5) + b"{}{}",
    "bad serialize type": json_frame(b"{}", stype=2),
    "empty JSON header": json_frame(b""),
    "not JSON": json_frame(b"notjson!"),
    "JSON array": json_frame(b"[1,2]"),
    "deep JSON": json_frame(b"[" * 100_000),
    "code a string": json_frame(b'{"code":"0","opaque":1}'),
    "code a bool": json_frame(b'{"code":true,"opaque":1}'),
    "code too big": json_frame(b'{"code":2147483648,"opaque":1}'),
    "no opaque": json_frame(b'{"code":0}'),
    "no code": json_frame(b'{"opaque":1}'),
    "extFields a list": json_frame(b'{"code":0,"opaque":1,"extFields":[]}'),
    "remark a number": json_frame(b'{"code":0,"opaque":1,"remark":5}'),
    "language an object": json_frame(b'{"code":0,"opaque":1,"language":{}}'),
    "binary header too short": json_frame(b"\x00\x69\x00", stype=1),
    "binary remark past header": json_frame(binary_header(remark_len=50), stype=1),
    "binary remark negative": json_frame(binary_header(remark_len=-1), stype=1),
    "binary ext past header": json_frame(binary_header(ext_len=99), stype=1),
    "binary key past ext": json_frame(binary_header(ext=b"\x00\x09ab"), stype=1),
    "binary key negative": json_frame(binary_header(ext=b"\xff\xffab"), stype=1),
    "binary value past ext": json_frame(binary_header(ext=b"\x00\x01k\x00\x00\x00\x09v"), stype=1),
    "binary value length cut": json_frame(binary_header(ext=b"\x00\x01k\x00\x00"), stype=1),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_frames_raise_protocol_error(name: str) -> None:
    with pytest.raises(ProtocolError) as info:
        FrameDecoder().feed(MALFORMED[name])
    assert "\n" not in info.value.message


def test_unknown_language_codes_survive() -> None:
    (cmd,) = FrameDecoder().feed(json_frame(b'{"code":0,"opaque":1,"language":"COBOL"}'))
    assert cmd.language == "COBOL"
    (cmd,) = FrameDecoder().feed(json_frame(b'{"code":0,"opaque":1,"language":9}'))
    assert cmd.language == "GO"
    data = bytearray(GOLDEN_BINARY)
    data[10] = 99  # the language byte
    (cmd,) = FrameDecoder().feed(bytes(data))
    assert cmd.language == "UNKNOWN_99"


def test_encoder_refuses_what_the_wire_cannot_hold() -> None:
    with pytest.raises(ProtocolError):
        encode_command(RemotingCommand(code=40000, opaque=1), ROCKETMQ)
    with pytest.raises(ProtocolError):
        encode_command(RemotingCommand(code=1, opaque=2**31), JSON)
    with pytest.raises(ProtocolError):
        encode_command(RemotingCommand(code=1, opaque=1, language="COBOL"), ROCKETMQ)
    with pytest.raises(ProtocolError):
        encode_command(ROUTE_REQUEST, 7)


def feed_all(data: bytes, chunk: int) -> None:
    dec = FrameDecoder(max_frame=4096)
    try:
        for i in range(0, len(data), chunk):
            dec.feed(data[i : i + chunk])
    except ProtocolError:
        pass


@settings(max_examples=cases(300), deadline=None)
@given(st.binary(max_size=300), st.integers(1, 64))
def test_random_bytes_raise_only_protocol_error(data: bytes, chunk: int) -> None:
    feed_all(data, chunk)


@settings(max_examples=cases(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([GOLDEN_JSON, GOLDEN_BINARY, json_frame(RESPONSE_HEADER)]), st.data())
def test_mutated_frames_raise_only_protocol_error(base: bytes, data: st.DataObject) -> None:
    buf = bytearray(base)
    for _ in range(data.draw(st.integers(1, 4))):
        pos = data.draw(st.integers(0, len(buf) - 1))
        kind = data.draw(st.sampled_from(["set", "insert", "delete"]))
        if kind == "set":
            buf[pos] = data.draw(st.integers(0, 255))
        elif kind == "insert":
            buf[pos:pos] = data.draw(st.binary(min_size=1, max_size=4))
        elif len(buf) > 1:
            del buf[pos]
    feed_all(bytes(buf), data.draw(st.integers(1, 200)))


# -- round trips ------------------------------------------------------------------------------------

INT32 = st.integers(-(2**31), 2**31 - 1)
INT16 = st.integers(-(2**15), 2**15 - 1)
LANGS = st.sampled_from(list(LANGUAGE_CODES))
TEXT = st.text(max_size=12)
NONEMPTY = st.text(min_size=1, max_size=12)


@st.composite
def commands(draw: st.DrawFn, binary: bool) -> RemotingCommand:
    word = INT16 if binary else INT32
    text = NONEMPTY if binary else TEXT  # ROCKETMQ writes "" as length 0, which reads back as null
    return RemotingCommand(
        code=draw(word),
        opaque=draw(INT32),
        flag=draw(INT32),
        language=draw(LANGS),
        version=draw(word),
        remark=draw(st.none() | text),
        ext_fields=draw(st.dictionaries(text, text, max_size=5)),
        body=draw(st.binary(max_size=40)),
        serialize_type=ROCKETMQ if binary else JSON,
    )


@settings(max_examples=cases(200), deadline=None)
@given(st.one_of(commands(binary=False), commands(binary=True)))
def test_round_trip(cmd: RemotingCommand) -> None:
    data = encode_command(cmd, cmd.serialize_type)
    assert FrameDecoder().feed(data) == [cmd]
    length, word = struct.unpack_from(">iI", data)
    assert length == len(data) - 4 and word >> 24 == cmd.serialize_type


PLAIN = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E) | st.sampled_from("é中😀"), max_size=10)


@settings(max_examples=cases(100), deadline=None)
@given(INT32, INT32, st.none() | PLAIN, st.dictionaries(PLAIN, PLAIN, max_size=4))
def test_json_header_is_compact_sorted_raw_utf8(
    code: int, opaque: int, remark: str | None, ext: dict
) -> None:
    header = encode_command(RemotingCommand(code=code, opaque=opaque, remark=remark, ext_fields=ext))[8:]
    # Python's own writer agrees byte for byte when nothing needs fastjson's special escapes.
    assert header == json.dumps(
        json.loads(header), separators=(",", ":"), sort_keys=True, ensure_ascii=False
    ).encode("utf-8")
    assert ("extFields" in json.loads(header)) == bool(ext)


@settings(max_examples=cases(300), deadline=None)
@given(st.text(st.sampled_from("0123456789+-_ .٣e"), max_size=25))
def test_ext_int_agrees_with_java_long_rules(value: str) -> None:
    # Oracle: Long.parseLong accepts an optional sign and ASCII digits within the int64 range.
    valid = re.fullmatch(r"[+-]?[0-9]+", value) is not None and -(2**63) <= int(value) < 2**63
    cmd = RemotingCommand(code=0, opaque=1, ext_fields={"v": value})
    if valid:
        assert ext_int(cmd, "v") == int(value)
    else:
        with pytest.raises(ProtocolError):
            ext_int(cmd, "v")


# -- the client's request path: encode_request == encode_command(request(...)) ---------------------

FIELD_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63), TEXT)


@settings(max_examples=cases(300), deadline=None)
@given(
    st.integers(-(2**31) - 2, 2**31 + 1),
    st.integers(-(2**31) - 2, 2**31 + 1),
    st.dictionaries(TEXT, FIELD_VALUES, max_size=4),
    st.binary(max_size=20),
    st.sampled_from([JSON, ROCKETMQ]),
)
def test_encode_request_writes_what_encode_command_writes(
    code: int, opaque: int, fields: dict, body: bytes, stype: int
) -> None:
    """The same bytes, or the same error, as the command object's path (escapes, ints out of
    range, both serialize types; codes past int16 only fail in ROCKETMQ)."""
    from mqctl.remoting.frame import encode_request

    def old() -> bytes | str:
        try:
            return encode_command(request(code, fields, body, opaque=opaque, version=479), stype)
        except ProtocolError as exc:
            return exc.message

    def new() -> bytes | str:
        try:
            return encode_request(code, fields, body, opaque=opaque, version=479, serialize_type=stype)
        except ProtocolError as exc:
            return exc.message

    assert new() == old()


# A shape (code, field names, version) seen before writes from its template: many requests of a
# few shapes, names in any order, values that need escaping or not, opaques in range or not.
_SHAPED_NAMES = st.sampled_from(
    [
        (),
        ("consumerGroup",),
        ("topic", "consumerGroup"),
        ("consumerGroup", "topic"),
        ("b", "a", "c"),
        ("a-b", "x"),
    ]
)


@settings(max_examples=cases(400), deadline=None)
@given(
    st.sampled_from([208, 203, 105, 2**31, -1]),
    _SHAPED_NAMES,
    st.lists(
        st.one_of(FIELD_VALUES, st.sampled_from(["bench-og-0001", "bench-topic", "50%", "<0>", "%s"])),
        min_size=3,
        max_size=3,
    ),
    st.one_of(st.integers(0, 2000), st.integers(-(2**31) - 1, 2**31), st.booleans()),
    st.binary(max_size=4),
    st.sampled_from([453, 479, 2**40]),
)
def test_encode_request_by_shape_writes_what_encode_command_writes(
    code: int, names: tuple[str, ...], values: list, opaque: int, body: bytes, version: int
) -> None:
    from mqctl.remoting.frame import encode_request

    fields = dict(zip(names, values))
    try:
        old: bytes | str = encode_command(request(code, fields, body, opaque=opaque, version=version), JSON)
    except ProtocolError as exc:
        old = exc.message
    for _ in range(2):  # the second time from the template the first one made
        try:
            new: bytes | str = encode_request(
                code, fields, body, opaque=opaque, version=version, serialize_type=JSON
            )
        except ProtocolError as exc:
            new = exc.message
        assert new == old


def test_decoded_commands_are_whole_records() -> None:
    """A header as brokers write it is read without the constructor's copies: the command is
    still equal to, hashed and shown like, and as immutable as one built by the constructor."""
    from mqctl.remoting.frame_decode import decode_frame

    header = (
        b'{"code":0,"extFields":{"offset":"12","b":"x"},"flag":1,"language":"JAVA","opaque":7,"version":479}'
    )
    cmd = decode_frame(struct.pack(">I", len(header)) + header + b"body")
    built = RemotingCommand(0, 7, 1, "JAVA", 479, None, {"offset": "12", "b": "x"}, b"body", JSON)
    assert cmd == built and hash(cmd) == hash(built) and repr(cmd) == repr(built)
    with pytest.raises(AttributeError):
        cmd.code = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        cmd.ext_fields["offset"] = "13"  # type: ignore[index]
