"""Decoding RocketMQ remoting frames (remoting.md 2, 3): bytes in, commands out (the encoding,
and the command itself, are in ``frame``). Sans-I/O; every malformed input raises
:class:`ProtocolError` with a one-line message, to which the caller adds the peer's address.
"""

from __future__ import annotations

import struct
from types import MappingProxyType

from mqctl import cjson
from mqctl.errors import ProtocolError
from mqctl.records import trusted
from mqctl.remoting.codes import language_name
from mqctl.remoting.frame import DEFAULT_MAX_FRAME, JSON, ROCKETMQ, RemotingCommand, header_ints

_U32 = struct.Struct(">I")
_I32 = struct.Struct(">i")
_I16 = struct.Struct(">h")
# ROCKETMQ header: code int16, language byte, version int16, opaque int32, flag int32.
_BIN_FIXED = struct.Struct(">hbhii")
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


def _json_str_field(value: object) -> str:
    if isinstance(value, str):
        return value
    # Odd peers send numbers or booleans; Java would hold their toString().
    import json

    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _json_int(obj: dict[str, object], name: str, default: int | None) -> int:
    value = obj.get(name)
    if value is None:
        if default is None:
            raise ProtocolError(f"JSON header lacks {name!r}")
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not _INT32_MIN <= value <= _INT32_MAX:
        raise ProtocolError(f"JSON header field {name!r} is not an int32: {str(value)[:40]}")
    return value


def _json_language(value: object) -> str:
    if value is None:
        return "JAVA"
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        # fastjson also accepts an enum's ordinal.
        return language_name(value)
    raise ProtocolError("JSON header field 'language' is not a string")


def _decode_json_header(data: bytes, body: bytes) -> RemotingCommand:
    try:
        obj = cjson.loads(data.decode("utf-8", "replace"))
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(f"header is not JSON: {str(exc)[:80]}") from None
    if not isinstance(obj, dict):
        raise ProtocolError("JSON header is not an object")
    remark = obj.get("remark")
    if remark is not None and not isinstance(remark, str):
        raise ProtocolError("JSON header field 'remark' is not a string")
    ext_raw = obj.get("extFields")
    if ext_raw is None:
        ext_raw = {}
    if not isinstance(ext_raw, dict):
        raise ProtocolError("JSON header field 'extFields' is not an object")
    code, opaque, flag, version = (
        obj.get("code"),
        obj.get("opaque"),
        obj.get("flag", 0),
        obj.get("version", 0),
    )
    language = obj.get("language", "JAVA")
    if (
        header_ints(code, opaque, flag, version)
        and type(language) is str
        and all(type(v) is str for v in ext_raw.values())
    ):  # a header as brokers write it: the values are the command's as they are (own dict, fresh)
        fields = {"code": code, "opaque": opaque, "flag": flag, "language": language, "version": version}
        fields.update(remark=remark, ext_fields=MappingProxyType(ext_raw), body=body, serialize_type=JSON)
        return trusted(RemotingCommand, fields)
    ext = {k: _json_str_field(v) for k, v in ext_raw.items() if v is not None}
    return RemotingCommand(
        # Without a code or an opaque a command means nothing (Java would invent both).
        code=_json_int(obj, "code", None),
        opaque=_json_int(obj, "opaque", None),
        flag=_json_int(obj, "flag", 0),
        language=_json_language(obj.get("language")),
        version=_json_int(obj, "version", 0),
        remark=remark,
        ext_fields=ext,
        body=body,
        serialize_type=JSON,
    )


def _read_str(data: bytes, pos: int, end: int, short: bool, what: str) -> tuple[str | None, int]:
    size = 2 if short else 4
    if pos + size > end:
        raise ProtocolError(f"ROCKETMQ header: {what} length past the end of the header")
    n = (_I16 if short else _I32).unpack_from(data, pos)[0]
    pos += size
    if n < 0 or pos + n > end:
        raise ProtocolError(f"ROCKETMQ header: {what} of {n} bytes past the end of the header")
    # A zero length is Java's null.
    text = data[pos : pos + n].decode("utf-8", "replace") if n else None
    return text, pos + n


def _decode_binary_header(data: bytes, body: bytes) -> RemotingCommand:
    end = len(data)
    if end < _BIN_FIXED.size:
        raise ProtocolError(f"ROCKETMQ header of {end} bytes is shorter than its fixed part")
    code, lang, version, opaque, flag = _BIN_FIXED.unpack_from(data, 0)
    remark, pos = _read_str(data, _BIN_FIXED.size, end, False, "remark")
    if pos + 4 > end:
        raise ProtocolError("ROCKETMQ header: extFields length past the end of the header")
    ext_len = _I32.unpack_from(data, pos)[0]
    pos += 4
    if ext_len < 0 or pos + ext_len > end:
        raise ProtocolError(f"ROCKETMQ header: extFields of {ext_len} bytes past the end of the header")
    ext: dict[str, str] = {}
    ext_end = pos + ext_len
    while pos < ext_end:
        key, pos = _read_str(data, pos, ext_end, True, "extFields key")
        value, pos = _read_str(data, pos, ext_end, False, "extFields value")
        # Java keeps a null key or value, which reads back as an absent field.
        if key is not None and value is not None:
            ext[key] = value
    language = language_name(lang)
    return RemotingCommand(
        code=code,
        opaque=opaque,
        flag=flag,
        language=language,
        version=version,
        remark=remark,
        ext_fields=ext,
        body=body,
        serialize_type=ROCKETMQ,
    )


def decode_frame(frame: bytes | bytearray) -> RemotingCommand:
    """One frame without its 4-byte length prefix: header-length word, header, body."""
    if len(frame) < 4:
        raise ProtocolError(f"frame of {len(frame)} bytes has no header-length word")
    word = _U32.unpack_from(frame, 0)[0]
    stype, header_len = word >> 24, word & 0xFFFFFF
    if header_len > len(frame) - 4:
        raise ProtocolError(f"header length {header_len} exceeds the frame's {len(frame) - 4} bytes")
    header = bytes(frame[4 : 4 + header_len])
    body = bytes(frame[4 + header_len :])
    if stype == JSON:
        return _decode_json_header(header, body)
    if stype == ROCKETMQ:
        return _decode_binary_header(header, body)
    raise ProtocolError(f"unknown serialize type {stype}")


class FrameDecoder:
    """Incremental decoder: ``feed`` any chunks, get back every command they complete.

    ``max_frame`` bounds a whole frame including its 4-byte length, as Netty's
    LengthFieldBasedFrameDecoder does; it is checked from the length alone, before buffering.
    After a ProtocolError the stream is unusable and every later ``feed`` raises it again.
    """

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        self.max_frame = max_frame
        self._buf = bytearray()
        self._error: ProtocolError | None = None

    @property
    def buffered(self) -> int:
        """Bytes held of a frame not yet complete (0 between frames)."""
        return len(self._buf)

    def feed(self, data: bytes) -> list[RemotingCommand]:
        if self._error is not None:
            raise self._error
        self._buf += data
        out: list[RemotingCommand] = []
        pos = 0
        buf = self._buf
        try:
            while len(buf) - pos >= 4:
                length = _I32.unpack_from(buf, pos)[0]
                if length < 4:
                    raise ProtocolError(f"frame length {length} is below the minimum of 4")
                if length + 4 > self.max_frame:
                    raise ProtocolError(f"frame of {length + 4} bytes exceeds the limit of {self.max_frame}")
                if len(buf) - pos - 4 < length:
                    break
                out.append(decode_frame(buf[pos + 4 : pos + 4 + length]))
                pos += 4 + length
        except ProtocolError as exc:
            self._error = exc
            self._buf = bytearray()
            raise
        # One compaction per feed keeps many small frames in one chunk linear.
        del buf[:pos]
        return out
