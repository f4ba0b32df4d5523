"""Read and write the JSON dialect fastjson 1.2.83 produces for the broker's config files.

fastjson writes maps with non-String keys with the key unquoted (``{0:250}``) and a map keyed
by an object with the object itself as the key (client ``offsets.json``); neither is valid
JSON, so the standard library cannot read these files. Python value mapping:

* object -> ``dict`` whose keys are ``str``, ``int`` (a bare integer key) or ``FrozenKey``
  (an object used as a key). Quoted keys stay strings even when they look like numbers.
* array -> ``list``; string -> ``str`` (a number written as a string stays a string: the
  typed decoders convert); integer -> ``int``; fraction/exponent -> ``float``; true, false,
  null -> ``True``, ``False``, ``None``.

Writing: ``dict`` and ``FrozenKey`` write as a Java Map/bean in the dict's own order (callers
order bean properties alphabetically, as fastjson does); ``list`` writes as a Java ``List``
(one item per line in pretty mode); ``tuple``, ``set`` and ``frozenset`` write as a Java
``Set`` (always inline, as fastjson's CollectionCodec does). ``None`` values inside a map are
omitted, like fastjson's default.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from mqctl import cjson
from mqctl.errors import StoreCorruptError
from mqctl.lazyre import lazy

__all__ = ["FrozenKey", "dumps_compact", "dumps_pretty", "loads", "loads_dialect"]

# Nesting beyond this is not a broker file; refusing it keeps a hostile file from a RecursionError.
MAX_DEPTH = 256

_WS = lazy(r"[ \t\r\n\f\b]*")
_NUMBER = lazy(r"-?\d+(\.\d+)?([eE][-+]?\d+)?", re.ASCII)
_INT_KEY = lazy(r"-?\d+", re.ASCII)
_NEXT = lazy(r"[ \t\r\n\f\b]*(.)", re.DOTALL)
# Fast path for the bulk of consumerOffset.json: a non-empty map of int keys to int values,
# e.g. {0:250,1:251}. Anything else (or anything malformed) goes through the general parser.
_INT_MAP = lazy(
    r"\{(?:[ \t\r\n]*-?\d+[ \t\r\n]*:[ \t\r\n]*-?\d+[ \t\r\n]*,)*"
    r"[ \t\r\n]*-?\d+[ \t\r\n]*:[ \t\r\n]*-?\d+[ \t\r\n]*\}",
    re.ASCII,
)
_INT_PAIR = lazy(r"(-?\d+)[ \t\r\n]*:[ \t\r\n]*(-?\d+)", re.ASCII)
_LITERALS = (("true", True), ("false", False), ("null", None))


def _sort_key(item: tuple[Any, Any]) -> tuple[int, Any]:
    key = item[0]
    if isinstance(key, str):
        return (0, key)
    if isinstance(key, int):
        return (1, key)
    return (2, repr(key))


class FrozenKey(tuple):  # type: ignore[type-arg]
    """An object that fastjson wrote as a map key, e.g. a MessageQueue in ``offsets.json``.

    A tuple of ``(key, value)`` pairs sorted by key (strings first, then ints), so equal
    objects are equal keys regardless of field order. Nested objects become ``FrozenKey`` and
    nested arrays tuples, so the whole key stays hashable. Bean properties are alphabetical,
    so the sorted order is also the order fastjson writes them in.
    """

    __slots__ = ()

    def __new__(cls, items: Mapping[Any, Any] | Any = ()) -> FrozenKey:
        pairs = items.items() if isinstance(items, Mapping) else items
        return super().__new__(cls, sorted(((k, _freeze(v)) for k, v in pairs), key=_sort_key))

    def as_dict(self) -> dict[Any, Any]:
        return dict(self)

    def get(self, key: Any, default: Any = None) -> Any:
        for k, v in self:
            if k == key:
                return v
        return default

    def __repr__(self) -> str:
        return f"FrozenKey({dict(self)!r})"


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return FrozenKey(value)
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


# ---------------------------------------------------------------------------------------------
# Parser


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, what: str, pos: int | None = None) -> StoreCorruptError:
        at = self.pos if pos is None else pos
        snippet = self.text[at : at + 20]
        err = StoreCorruptError(f"malformed JSON at character {at}: {what} (near {snippet!r})")
        err.position = at  # type: ignore[attr-defined]
        return err

    def skip_ws(self) -> None:
        self.pos = _WS.match(self.text, self.pos).end()  # type: ignore[union-attr]

    def peek(self) -> str:
        """Skip whitespace and return the next character without consuming it."""
        m = _NEXT.match(self.text, self.pos)
        if m is None:
            self.skip_ws()
            raise self.fail("unexpected end of text")
        self.pos = m.start(1)
        return m.group(1)

    def expect(self, ch: str) -> None:
        if self.peek() != ch:
            raise self.fail(f"expected {ch!r}")
        self.pos += 1

    def value(self, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise self.fail(f"nested deeper than {MAX_DEPTH} levels")
        ch = self.peek()
        if ch == "{":
            return self.obj(depth)
        if ch == "[":
            return self.array(depth)
        if ch == '"':
            return self.string()
        if ch == "-" or "0" <= ch <= "9":
            return self.number()
        for word, val in _LITERALS:
            if self.text.startswith(word, self.pos):
                self.pos += len(word)
                return val
        raise self.fail("expected a value")

    def string(self) -> str:
        import json  # the lenient reader only: a file the standard parser refused

        start = self.pos
        try:
            # The C scanner of the stdlib; strict=False accepts raw control characters, which
            # a lenient reader of a hand-edited file should.
            s, self.pos = json.decoder.scanstring(self.text, self.pos + 1, False)  # type: ignore[attr-defined]
        except json.JSONDecodeError as exc:
            raise self.fail(f"bad string: {exc.msg}", exc.pos) from None
        except (ValueError, IndexError):
            raise self.fail("bad string", start) from None
        return s

    def number(self) -> int | float:
        m = _NUMBER.match(self.text, self.pos)
        if m is None:
            raise self.fail("bad number")
        self.pos = m.end()
        tok = m.group()
        if m.group(1) is None and m.group(2) is None:
            return int(tok)
        try:
            return float(tok)
        except ValueError:  # pragma: no cover - the regex only admits float syntax
            raise self.fail("bad number") from None

    def key(self, depth: int) -> Any:
        ch = self.peek()
        if ch == '"':
            return self.string()
        if ch == "{":
            return FrozenKey(self.obj(depth + 1))
        m = _INT_KEY.match(self.text, self.pos)
        if m is None:
            raise self.fail("expected an object key")
        self.pos = m.end()
        return int(m.group())

    def obj(self, depth: int) -> dict[Any, Any]:
        fast = _INT_MAP.match(self.text, self.pos)
        if fast is not None:
            self.pos = fast.end()
            return {int(k): int(v) for k, v in _INT_PAIR.findall(fast.group())}
        self.pos += 1  # "{"
        out: dict[Any, Any] = {}
        while True:
            ch = self.peek()
            if ch == "}":
                self.pos += 1
                return out
            k = self.key(depth)
            self.expect(":")
            out[k] = self.value(depth + 1)
            ch = self.peek()
            if ch == ",":
                self.pos += 1
            elif ch != "}":
                raise self.fail("expected ',' or '}'")

    def array(self, depth: int) -> list[Any]:
        self.pos += 1  # "["
        out: list[Any] = []
        while True:
            ch = self.peek()
            if ch == "]":
                self.pos += 1
                return out
            out.append(self.value(depth + 1))
            ch = self.peek()
            if ch == ",":
                self.pos += 1
            elif ch != "]":
                raise self.fail("expected ',' or ']'")


# A bare integer key where a key may start (after "{" or ","). Quoted for the stdlib parser with an
# escaped NUL in front, which marks it: no other key can start with a NUL, since a text holding
# one (raw or escaped) never takes this path. A match inside a string splits it into string, raw NUL, string, which no
# JSON parser accepts: such a text goes to the lenient parser instead of being misread.
_BARE_INT_KEY = lazy(r"([{,][ \t\r\n]*)(-?\d+)(?=[ \t\r\n]*:)", re.ASCII)


def _int_keys(pairs: list[tuple[str, Any]]) -> dict[Any, Any]:
    return {int(k[1:]) if k[:1] == "\0" else k: v for k, v in pairs}


def _loads_int_keys(text: str) -> Any:
    """fastjson's most common departure from JSON, unquoted integer keys (``{0:250}``: every
    offset table), read by the stdlib's C parser: the keys are quoted with a mark and turned
    back into ints. ``None`` when the text is anything else (the lenient parser decides)."""
    if "\0" in text or "\\u0000" in text:
        return None
    # split + join, not sub with a template: Python 3.11 expands a template in Python per match
    parts = _BARE_INT_KEY.split(text)  # [text, prefix, key, text, prefix, key, ..., text]
    parts[2::3] = ['"\\u0000' + key + '"' for key in parts[2::3]]
    try:
        return cjson.loads("".join(parts), _int_keys, explain=False)
    except (ValueError, RecursionError):
        return None


def loads(text: str) -> Any:
    """Parse fastjson output (a superset of JSON); raise ``StoreCorruptError`` with a position.

    Standard JSON (every map key a string: route data, subscription-group tables, consume-queue
    pages) goes through the stdlib's C parser, many times faster; so do unquoted integer keys
    (``_loads_int_keys``); anything the stdlib refuses after that (object keys, raw control
    characters, damage) through the lenient one, which says where the text is wrong.
    """
    try:
        return cjson.loads(text, explain=False)
    except (ValueError, RecursionError):
        pass
    return loads_dialect(text)


def loads_dialect(text: str) -> Any:
    """``loads`` for text the standard parser refused (a caller that tried it first)."""
    fast = _loads_int_keys(text)
    if fast is not None:
        return fast
    p = _Parser(text.removeprefix("\ufeff"))
    result = p.value(0)
    p.skip_ws()
    if p.pos != len(p.text):
        raise p.fail("trailing characters after the JSON value")
    return result


# ---------------------------------------------------------------------------------------------
# Writers

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_NEEDS_ESCAPE = lazy(r'["\\\x00-\x1f]')


def _escape_char(m: re.Match[str]) -> str:
    ch = m.group()
    return _ESCAPES.get(ch) or f"\\u{ord(ch):04x}"


def _string(s: str) -> str:
    # Non-ASCII stays raw (fastjson writes UTF-8 as is); "/" is not escaped.
    return '"' + _NEEDS_ESCAPE.sub(_escape_char, s) + '"'


def _scalar(value: Any) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return "null"  # Java's NaN/Infinity are written as null by fastjson
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    raise TypeError(f"cannot write {type(value).__name__} as fastjson")


def _entries(value: Mapping[Any, Any] | FrozenKey) -> Iterator[tuple[Any, Any]]:
    pairs = value if isinstance(value, FrozenKey) else value.items()
    return ((k, v) for k, v in pairs if v is not None)


def _write(out: list[str], value: Any, level: int, pretty: bool) -> None:
    if isinstance(value, (dict, FrozenKey)):
        _write_map(out, value, level, pretty)
    elif isinstance(value, list):
        _write_list(out, value, level, pretty)
    elif isinstance(value, (tuple, set, frozenset)):
        # A Java Set goes through CollectionCodec, which never breaks lines.
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _write(out, item, level, pretty)
        out.append("]")
    else:
        out.append(_scalar(value))


def _write_map(out: list[str], value: Mapping[Any, Any] | FrozenKey, level: int, pretty: bool) -> None:
    out.append("{")
    inner = level + 1
    empty = True
    for k, v in _entries(value):
        if not empty:
            out.append(",")
        empty = False
        if isinstance(k, str):
            # Only String keys start a new line; fastjson writes other keys right after the
            # comma, which is why int-keyed maps stay on the opening line.
            if pretty:
                out.append("\n" + "\t" * inner)
            out.append(_string(k))
        elif isinstance(k, (dict, FrozenKey)):
            _write_map(out, k, inner, pretty)
        elif isinstance(k, int) and not isinstance(k, bool):
            out.append(str(int(k)))
        else:
            raise TypeError(f"cannot write a map key of type {type(k).__name__}")
        out.append(":")
        _write(out, v, inner, pretty)
    if pretty and not empty:
        out.append("\n" + "\t" * level)
    out.append("}")


def _write_list(out: list[str], value: list[Any], level: int, pretty: bool) -> None:
    if not value:
        out.append("[]")
        return
    out.append("[")
    inner = level + 1
    for i, item in enumerate(value):
        if i:
            out.append(",")
        if pretty:
            out.append("\n" + "\t" * inner)
        _write(out, item, inner, pretty)
    if pretty:
        out.append("\n" + "\t" * level)
    out.append("]")


def dumps_pretty(obj: Any) -> str:
    """fastjson ``PrettyFormat`` as the broker's ``encode(true)``: TAB indents, no final newline."""
    out: list[str] = []
    _write(out, obj, 0, True)
    return "".join(out)


def dumps_compact(obj: Any) -> str:
    """fastjson's default compact form (``JSON.toJSONString``), non-ASCII raw."""
    out: list[str] = []
    _write(out, obj, 0, False)
    return "".join(out)
