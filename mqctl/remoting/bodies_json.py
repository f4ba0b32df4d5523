"""Shared machinery of the body decoders: bytes -> fastjson value, and Java-lenient field access.

Every failure becomes ``ProtocolError``: a body that does not parse, or a property of a type
fastjson itself would refuse to bind, means the peer did not speak the protocol. The rules follow
fastjson 1.2.83's binding (remoting.md 8): a missing property takes the Java default, numbers may
arrive as strings (BrowserCompatible longs), booleans as ``"true"``/``1``, and a ``{"$ref":...}``
back-reference reads as null.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from itertools import accumulate
from typing import Any, TypeVar

from mqctl import cjson
from mqctl.errors import ProtocolError, StoreError
from mqctl.lazyre import lazy
from mqctl.model import MessageQueue

__all__ = [
    "INT32",
    "INT64",
    "MAX_DEPTH",
    "as_list",
    "as_map",
    "bean",
    "check_depth",
    "get_bool",
    "get_float",
    "get_int",
    "get_str",
    "message_queue",
    "parse_json",
    "parse_object",
    "parse_object_keyed",
    "parse_text",
    "run_store_decoder",
    "to_int",
]

INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)

# No body in remoting.md 7 nests deeper than ~6 levels. fastjson.loads caps value nesting at 256
# but not a chain of objects used as map keys ("{{{{..."), which recurses until RecursionError;
# bounding the whole text first keeps every parse (and FrozenKey's freezing) shallow.
MAX_DEPTH = 64

# A string literal, or an unterminated one running to the end of the text. Because a match
# can never fail once it has started at a quote, the scan stays linear on hostile input; the
# unrolled loop consumes runs of plain characters at once.
_STRING = lazy(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)
_PLAIN_STRING = lazy(r'"[^"]*(?:"|\Z)')  # the same strings in a text without backslashes
_NOT_BRACKET = lazy(r"[^\[\]{}]+")
_DELTA = {"{": 1, "[": 1, "}": -1, "]": -1, 0x7B: 1, 0x5B: 1, 0x7D: -1, 0x5D: -1}  # as text and as bytes
_NOT_MARK = bytes(b for b in range(256) if b not in b'[]{}"')  # what _brackets deletes
_INT_TEXT = lazy(r"\s*-?\d{1,20}\s*", re.ASCII)
_FLOAT_TEXT = lazy(r"\s*-?(\d+\.?\d*|\.\d+)([eE][-+]?\d{1,4})?\s*", re.ASCII)
_TRUE = ("true", "1")
_FALSE = ("false", "0")

T = TypeVar("T")


def check_depth(text: str, what: str) -> None:
    """Refuse text whose brackets (outside strings) nest deeper than ``MAX_DEPTH``."""
    if text.count("{") + text.count("[") <= MAX_DEPTH:
        return
    if max(accumulate(map(_DELTA.__getitem__, _brackets(text))), default=0) > MAX_DEPTH:
        raise ProtocolError(f"{what}: JSON nested deeper than {MAX_DEPTH} levels")


def _brackets(text: str) -> str | bytes:
    """The brackets of ``text`` that lie outside its strings, in order.

    Usually found without a pattern: the text's bytes with everything but brackets and quotes
    deleted (bytes.translate, ~1 ns a byte) hold each string as its two quotes around the
    brackets inside it. When no string holds a bracket every string is an adjacent ``""``, and
    deleting those leaves no quote: the rest are the brackets outside strings. (Deleting pairs
    from the left matches each string's quotes in turn; a string holding a bracket leaves its
    opening quote behind, and so does an unterminated one.) Escapes, or a leftover quote, take
    the patterns, which read every string in full (a 380 KB body: 5.5 ms there, 0.8 here)."""
    if "\\" not in text:
        marks = text.encode("utf-8", "surrogatepass").translate(None, _NOT_MARK)
        outside = marks.replace(b'""', b"")
        if b'"' not in outside:
            return outside
    strings = _STRING if "\\" in text else _PLAIN_STRING  # the plain form is three times faster
    return _NOT_BRACKET.sub("", strings.sub("", text))


def _text(body: bytes, what: str) -> str:
    if not isinstance(body, (bytes, bytearray, memoryview)):
        raise ProtocolError(f"{what}: expected bytes, got {type(body).__name__}")
    try:
        text = bytes(body).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProtocolError(f"{what}: body is not UTF-8 (byte {exc.start})") from None
    if not text.strip():
        raise ProtocolError(f"{what}: empty body")
    check_depth(text, what)
    return text


def parse_text(text: str, what: str) -> Any:
    """fastjson text -> value (see ``mqctl.fastjson``); the caller has bounded its depth. Standard
    JSON (routes and most answers) is read without loading fastjson's reader."""
    try:
        return cjson.loads(text, explain=False)
    except (ValueError, RecursionError):
        pass
    from mqctl.fastjson import loads_dialect

    try:
        return loads_dialect(text)
    except StoreError as exc:
        raise ProtocolError(f"{what}: {exc.message}") from None
    except (ValueError, RecursionError):
        # ValueError: an integer literal beyond the interpreter's digit limit.
        raise ProtocolError(f"{what}: malformed JSON") from None


def parse_json(body: bytes, what: str) -> Any:
    return parse_text(_text(body, what), what)


def parse_object(body: bytes, what: str) -> dict[Any, Any]:
    doc = parse_json(body, what)
    if not isinstance(doc, dict):
        raise ProtocolError(f"{what}: top level is not a JSON object")
    return doc


# A flat object used as a map key (fastjson writes MessageQueue keys so): string and integer
# fields only, no escapes, followed by ':'. As a JSON string key it parses with the C parser.
_FIELD = r'"[^"\\{}]*"\s*:\s*(?:"[^"\\{}]*"|-?\d+)'
_OBJECT_KEY = lazy(r"\{" + _FIELD + r"(?:\s*,\s*" + _FIELD + r")*\s*\}(?=\s*:)")


def _quoted(m: re.Match[str]) -> str:
    # The key holds no backslash (see _FIELD): escaping its quotes makes it a JSON string. A raw
    # control character in it stays raw, which the strict stdlib parser refuses: the lenient
    # parser then reads the body, with the same result.
    return '"' + m.group().replace('"', '\\"') + '"'


def parse_object_keyed(body: bytes, what: str) -> dict[Any, Any]:
    """``parse_object`` for bodies keyed by MessageQueue objects (consume and topic stats): those
    keys become their JSON text (``message_queue`` reads either form) so the stdlib parses the
    rest; any other shape takes the lenient parser, with the same result."""
    text = _text(body, what)
    try:
        doc = cjson.loads(_OBJECT_KEY.sub(_quoted, text), explain=False)
    except (ValueError, RecursionError):
        doc = parse_text(text, what)
    if not isinstance(doc, dict):
        raise ProtocolError(f"{what}: top level is not a JSON object")
    return doc


def run_store_decoder(decoder: Callable[[bytes, str], T], body: bytes, what: str) -> T:
    """Run a ``mqctl.store`` config decoder on a body of the same shape; its errors -> ProtocolError."""
    _text(body, what)
    try:
        return decoder(bytes(body), what)
    except StoreError as exc:
        raise ProtocolError(exc.message) from None
    except (ValueError, RecursionError):
        raise ProtocolError(f"{what}: malformed JSON") from None


# ---------------------------------------------------------------------------------------------
# Typed access


def _frozen_key(value: Any) -> bool:
    """An object fastjson's reader made a map key (no reader loaded, no such key exists)."""
    if not isinstance(value, tuple):
        return False
    from mqctl.fastjson import FrozenKey

    return isinstance(value, FrozenKey)


def _is_ref(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and "$ref" in value


def bean(value: Any, what: str) -> Mapping[Any, Any]:
    """A JSON object bound to a Java bean; null and ``$ref`` read as an all-defaults bean."""
    if value is None or _is_ref(value):
        return {}
    if isinstance(value, dict):
        return value
    if _frozen_key(value):
        return value.as_dict()  # type: ignore[no-any-return]
    raise ProtocolError(f"{what}: expected an object, got {type(value).__name__}")


def as_map(value: Any, what: str) -> dict[Any, Any]:
    """A JSON object bound to a Java Map (null -> empty)."""
    if value is None or _is_ref(value):
        return {}
    if isinstance(value, dict):
        return value
    raise ProtocolError(f"{what}: expected an object, got {type(value).__name__}")


def as_list(value: Any, what: str) -> list[Any]:
    """A JSON array bound to a Java List/Set (null -> empty)."""
    if value is None or _is_ref(value):
        return []
    if isinstance(value, list):
        return value
    raise ProtocolError(f"{what}: expected an array, got {type(value).__name__}")


def to_int(value: Any, what: str, bounds: tuple[int, int] = INT64) -> int:
    if isinstance(value, bool):
        raise ProtocolError(f"{what}: expected an integer, got {value!r}")
    if isinstance(value, int):
        n = value
    elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
        n = int(value)
    elif isinstance(value, str) and (
        (value.isdigit() and value.isascii() and len(value) <= 20) or _INT_TEXT.fullmatch(value)
    ):  # plain digits (a route's broker ids) need no pattern
        n = int(value)
    else:
        raise ProtocolError(f"{what}: expected an integer, got {_short(value)}")
    if not bounds[0] <= n <= bounds[1]:
        raise ProtocolError(f"{what}: {n} is out of range")
    return n


def get_int(
    obj: Mapping[Any, Any], key: str, what: str, default: int = 0, bounds: tuple[int, int] = INT64
) -> int:
    value = obj.get(key)
    return default if value is None else to_int(value, f"{what}.{key}", bounds)


def get_str(obj: Mapping[Any, Any], key: str, what: str, default: str | None = None) -> str | None:
    value = obj.get(key)
    if value is None:
        return default
    if isinstance(value, str):
        return value
    raise ProtocolError(f"{what}.{key}: expected a string, got {_short(value)}")


def get_bool(obj: Mapping[Any, Any], key: str, what: str, default: bool = False) -> bool:
    value = obj.get(key)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, str)):
        text = str(value).strip().lower()
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
    raise ProtocolError(f"{what}.{key}: expected true or false, got {_short(value)}")


def get_float(obj: Mapping[Any, Any], key: str, what: str, default: float = 0.0) -> float:
    """A Java double: NaN and infinities arrive as null (-> ``default``, as fastjson binds them)."""
    value = obj.get(key)
    if value is None:
        return default
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str) and _FLOAT_TEXT.fullmatch(value):
        return float(value)
    raise ProtocolError(f"{what}.{key}: expected a number, got {_short(value)}")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# A MessageQueue key as fastjson writes it (bean fields in name order, no spaces, no escapes).
# Groups: brokerName, queueId, topic (names not empty: an empty one takes the parser and its rules).
MQ_KEY_AS_WRITTEN = r'\{"brokerName":"([^"\\]+)","queueId":(\d{1,10}),"topic":"([^"\\]+)"\}'
_MQ_TEXT = lazy(MQ_KEY_AS_WRITTEN)


def message_queue(key: Any, what: str, broker_hint: str | None = None) -> MessageQueue:
    """A MessageQueue written as a map key or value: an object, or (BrowserCompatible) its JSON text.

    ``broker_hint`` stands in for a missing ``brokerName``; a missing topic is an error, since a
    queue without one names nothing.
    """
    if isinstance(key, str):
        m = _MQ_TEXT.fullmatch(key)  # what every broker writes: read without a parser
        if m is not None and int(m.group(2)) <= INT32[1]:
            return MessageQueue(m.group(3), m.group(1), int(m.group(2)))
    if isinstance(key, str) and key.lstrip().startswith("{"):
        check_depth(key, what)
        key = parse_text(key, what)
    if not (isinstance(key, dict) or _frozen_key(key)):
        raise ProtocolError(f"{what}: a message queue must be an object, got {_short(key)}")
    obj = bean(key, what)
    topic = get_str(obj, "topic", what)
    broker = get_str(obj, "brokerName", what)
    if not broker and broker_hint is not None:
        broker = broker_hint
    if not topic or broker is None:
        raise ProtocolError(f"{what}: message queue {_short(key)} lacks its topic or brokerName")
    return MessageQueue(topic, broker, get_int(obj, "queueId", what, 0, INT32))
