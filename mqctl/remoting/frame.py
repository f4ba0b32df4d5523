"""Sans-I/O codec for RocketMQ remoting frames (remoting.md 2, 3): the command, and commands to
bytes (the decoding, bytes to commands, is in ``frame_decode``).

Nothing here touches a socket. Every malformed input raises :class:`ProtocolError` with a one-line
message; the caller adds the peer's address.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from enum import Enum
from types import MappingProxyType

from mqctl.errors import ProtocolError
from mqctl.records import field, record
from mqctl.remoting.codes import CURRENT_VERSION, LANGUAGE_CODES, SerializeType

JSON = SerializeType.JSON
ROCKETMQ = SerializeType.ROCKETMQ

FLAG_RESPONSE = 1
FLAG_ONEWAY = 2
DEFAULT_MAX_FRAME = 16 * 1024 * 1024

_U32 = struct.Struct(">I")
_I32 = struct.Struct(">i")
_I16 = struct.Struct(">h")
_PREFIX = struct.Struct(">iI")  # frame length (signed, as Java reads it), serialize type | header length
# ROCKETMQ header: code int16, language byte, version int16, opaque int32, flag int32.
_BIN_FIXED = struct.Struct(">hbhii")
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


@record(frozen=True)
class RemotingCommand:
    """One request or response: the logical header fields of remoting.md 3.1 plus the body."""

    code: int
    opaque: int
    flag: int = 0
    language: str = "JAVA"
    version: int = CURRENT_VERSION
    remark: str | None = None
    ext_fields: Mapping[str, str] = field(default_factory=dict, hash=False)
    body: bytes = b""
    serialize_type: int = 0

    def __post_init__(self) -> None:
        # Copy, so a caller's later edits to its dict cannot change a frozen command.
        ext = dict(self.ext_fields)
        for k, v in ext.items():
            if not (isinstance(k, str) and isinstance(v, str)):
                raise TypeError("ext_fields keys and values must be str (see request())")
        object.__setattr__(self, "ext_fields", MappingProxyType(ext))

    @property
    def is_response(self) -> bool:
        return bool(self.flag & FLAG_RESPONSE)

    @property
    def is_oneway(self) -> bool:
        return bool(self.flag & FLAG_ONEWAY)


def java_str(value: object) -> str:
    """``value.toString()`` as Java would write a header field: booleans lower case, enums by name."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Enum):
        return value.name
    return str(value)


def request(
    code: int,
    ext_fields: Mapping[str, object] | None = None,
    body: bytes = b"",
    *,
    opaque: int,
    oneway: bool = False,
    version: int = CURRENT_VERSION,
) -> RemotingCommand:
    """A request command; ``ext_fields`` values are turned into strings like Java's, None dropped."""
    ext = {k: java_str(v) for k, v in (ext_fields or {}).items() if v is not None}
    return RemotingCommand(
        code=int(code),
        opaque=opaque,
        flag=FLAG_ONEWAY if oneway else 0,
        version=version,
        ext_fields=ext,
        body=bytes(body),
    )


def ext_int(cmd: RemotingCommand, name: str) -> int:
    """The response header field ``name`` parsed like Java's ``Long.parseLong``."""
    value = cmd.ext_fields.get(name)
    if value is None:
        raise ProtocolError(f"response code {cmd.code} lacks the header field {name!r}")
    digits = value[1:] if value[:1] in ("+", "-") else value
    # The length check keeps int() away from its own limit on huge digit strings.
    if digits.isascii() and digits.isdigit() and len(digits.lstrip("0")) <= 19:
        number = int(value)
        if _INT64_MIN <= number <= _INT64_MAX:
            return number
    raise ProtocolError(f"response header field {name!r} is not an integer: {value[:40]!r}")


# ---------------------------------------------------------------------------------------------------
# Encoding

# fastjson 1.2.83 default escaping (SerializeWriter.writeStringWithDoubleQuote, IOUtils tables):
# short escapes for \b \t \n \f \r " \\; \uXXXX (upper-case hex) for other C0 controls, DEL..U+009F
# and U+2028/U+2029; everything else, non-ASCII included, raw.
_FJ_ESCAPES: dict[int, str] = {c: f"\\u{c:04X}" for c in (*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029)}
_FJ_ESCAPES.update(
    {0x22: '\\"', 0x5C: "\\\\", 0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r"}
)


def _plain(s: str) -> bool:
    """Nothing in ``s`` that fastjson escapes."""
    return s.isascii() and s.isprintable() and '"' not in s and "\\" not in s


def _fj_str(s: str) -> str:
    if _plain(s):
        return f'"{s}"'  # the usual header value: nothing to escape
    return '"' + s.translate(_FJ_ESCAPES) + '"'


def _utf8(s: str) -> bytes:
    # Java's getBytes(UTF_8) writes '?' for a lone surrogate; so does Python's "replace".
    return s.encode("utf-8", "replace")


def _check_int(value: object, name: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ProtocolError(f"cannot encode {name}={value!r}: outside {lo}..{hi}")
    return value


def header_ints(code: object, opaque: object, flag: object, version: object) -> bool:
    """Whether a header's four ints are ints (not bools) in int32: the common case, in one look."""
    return (
        type(code) is int
        and type(opaque) is int
        and type(flag) is int
        and type(version) is int
        and _INT32_MIN <= code <= _INT32_MAX
        and _INT32_MIN <= opaque <= _INT32_MAX
        and _INT32_MIN <= flag <= _INT32_MAX
        and _INT32_MIN <= version <= _INT32_MAX
    )


def _int32s(**values: object) -> list[int]:
    """Each value checked as an int32 (the error names the first that is not)."""
    return [_check_int(v, name, _INT32_MIN, _INT32_MAX) for name, v in values.items()]


def _json_header(cmd: RemotingCommand) -> bytes:
    return _json_header_of(
        cmd.code, cmd.opaque, cmd.flag, cmd.version, cmd.language, cmd.remark, cmd.ext_fields
    )


def _json_header_of(
    code: int, opaque: int, flag: int, version: int, language: str, remark: str | None, ext: Mapping[str, str]
) -> bytes:
    if not header_ints(code, opaque, flag, version):  # checked again one by one: the error names the field
        code, opaque, flag, version = _int32s(code=code, opaque=opaque, flag=flag, version=version)
    # fastjson sorts bean properties by name and omits nulls; an empty extFields is left out.
    parts = [f'{{"code":{code}']
    if ext:
        if _plain("".join(ext) + "".join(ext.values())):  # the usual fields: nothing to escape
            items = ",".join(f'"{k}":"{v}"' for k, v in sorted(ext.items()))
        else:
            items = ",".join(f"{_fj_str(k)}:{_fj_str(v)}" for k, v in sorted(ext.items()))
        parts.append(f',"extFields":{{{items}}}')
    parts.append(f',"flag":{flag},"language":{_fj_str(language)},"opaque":{opaque}')
    if remark is not None:
        parts.append(f',"remark":{_fj_str(remark)}')
    parts.append(f',"serializeTypeCurrentRPC":"JSON","version":{version}}}')
    return _utf8("".join(parts))


def _binary_header(cmd: RemotingCommand) -> bytes:
    try:
        language = LANGUAGE_CODES[cmd.language]
    except KeyError:
        raise ProtocolError(f"cannot encode language {cmd.language!r}: no ROCKETMQ code") from None
    fixed = _BIN_FIXED.pack(
        _check_int(cmd.code, "code", -(2**15), 2**15 - 1),
        language,
        _check_int(cmd.version, "version", -(2**15), 2**15 - 1),
        _check_int(cmd.opaque, "opaque", _INT32_MIN, _INT32_MAX),
        _check_int(cmd.flag, "flag", _INT32_MIN, _INT32_MAX),
    )
    remark = _utf8(cmd.remark) if cmd.remark else b""
    entries = bytearray()
    for k, v in sorted(cmd.ext_fields.items()):
        kb, vb = _utf8(k), _utf8(v)
        if len(kb) > 2**15 - 1:
            raise ProtocolError(f"cannot encode header field name of {len(kb)} bytes (int16 length)")
        entries += _I16.pack(len(kb)) + kb + _I32.pack(len(vb)) + vb
    return b"".join((fixed, _I32.pack(len(remark)), remark, _I32.pack(len(entries)), entries))


def encode_command(cmd: RemotingCommand, serialize_type: int = JSON) -> bytes:
    """One whole frame: length, serialize type and header length, header, body."""
    if serialize_type == JSON:
        header = _json_header(cmd)
    elif serialize_type == ROCKETMQ:
        header = _binary_header(cmd)
    else:
        raise ProtocolError(f"cannot encode serialize type {serialize_type!r}")
    return _framed(header, cmd.body, serialize_type)


def encode_request(
    code: int,
    ext_fields: Mapping[str, object] | None,
    body: bytes,
    *,
    opaque: int,
    version: int,
    serialize_type: int,
) -> bytes:
    """``encode_command(request(...))``, the JSON header written without the command object (the
    client encodes every request it sends this way: thousands in an overview)."""
    if serialize_type != JSON:
        return encode_command(request(code, ext_fields, body, opaque=opaque, version=version), serialize_type)
    ext = {k: java_str(v) for k, v in (ext_fields or {}).items() if v is not None}
    shape = _shape(code, tuple(ext), version)
    if shape is not None and type(opaque) is int and _INT32_MIN <= opaque <= _INT32_MAX:
        template, order = shape
        values = [*ext.values()]
        if _plain("".join(values)):
            header = (template % (*[values[i] for i in order], opaque)).encode("ascii")
            if not body:
                return _PREFIX.pack(4 + len(header), (JSON << 24) | len(header)) + header
            return _framed(header, bytes(body), JSON)
    return _framed(_json_header_of(code, opaque, 0, version, "JAVA", None, ext), bytes(body), JSON)


# A request's JSON header by its code, field names (in the caller's order) and version: a
# %-template of its field values and opaque, and the order the values take in it. An overview sends
# 2,000 requests of two shapes; each is written in a third of the time _json_header_of takes. The
# template is _json_header_of's own text, with a mark in each value's place. Only int32 codes and
# versions and identifier names (no quote, "%", "<" or escape) make one; a value with anything to
# escape takes _json_header_of.
_SHAPES: dict[tuple[int, tuple[str, ...], int], tuple[str, tuple[int, ...]] | None] = {}


def _shape(code: int, names: tuple[str, ...], version: int) -> tuple[str, tuple[int, ...]] | None:
    key = (code, names, version)
    if key in _SHAPES:
        return _SHAPES[key]
    shape = None
    # (header_ints checks the code and version are ints, not bools, in int32)
    if header_ints(code, 0, 0, version) and all(n.isascii() and n.isidentifier() for n in names):
        marks = [f"<{i}>" for i in range(len(names))]
        text = _json_header_of(code, 0, 0, version, "JAVA", None, dict(zip(names, marks))).decode("ascii")
        order = tuple(sorted(range(len(names)), key=lambda i: text.index(marks[i])))
        for mark in marks:
            text = text.replace(mark, "%s")
        shape = (text.replace(',"opaque":0,', ',"opaque":%d,'), order)
    if len(_SHAPES) < 64:  # a few shapes per command: a bound, not a cache policy
        _SHAPES[key] = shape
    return shape


def _framed(header: bytes, body: bytes, serialize_type: int) -> bytes:
    if len(header) > 0xFFFFFF:
        raise ProtocolError(f"cannot encode a header of {len(header)} bytes (24-bit length)")
    length = 4 + len(header) + len(body)
    if length > _INT32_MAX:
        raise ProtocolError(f"cannot encode a frame of {length} bytes")
    return b"".join((_PREFIX.pack(length, (serialize_type << 24) | len(header)), header, body))
