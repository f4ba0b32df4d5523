"""Standard JSON read by the standard library's C parser, without importing ``json``.

``import json`` loads three Python modules and compiles six regular expressions (~1.3-3 ms of a
new process); the parser that does the work is the C accelerator ``_json`` (~0.25 ms), which
needs none of it when it is handed a context of its own. A live command reads every broker
answer's header and body as JSON: this module reads them for the cost of ``_json`` alone.

:func:`loads` answers exactly what ``json.loads(text)`` answers for a ``str``: the same value,
and for text that is not JSON the standard library's own error (``json`` is imported then, to
say why). Where ``_json`` is missing (an interpreter without it), ``json`` does all the work.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_make_scanner: Any
try:
    from _json import make_scanner as _make_scanner
except ImportError:  # pragma: no cover - CPython always has it
    _make_scanner = None

_WS = " \t\n\r"  # what json.decoder's WHITESPACE pattern skips around the value
_CONSTANTS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}

PairsHook = Callable[[list[tuple[str, Any]]], Any]


class _Context:
    """The attributes ``_json.make_scanner`` reads, as ``json.JSONDecoder()`` sets them."""

    def __init__(self, object_pairs_hook: PairsHook | None) -> None:
        self.strict = True
        self.object_hook = None
        self.object_pairs_hook = object_pairs_hook
        self.parse_float = float
        self.parse_int = int
        self.parse_constant = _CONSTANTS.__getitem__


_scanners: dict[PairsHook | None, Any] = {}


class NotJSON(ValueError):
    """``text`` is not standard JSON (raised by ``loads(..., explain=False)``)."""


def _scan(text: str, object_pairs_hook: PairsHook | None) -> Any:
    scanner = _scanners.get(object_pairs_hook)
    if scanner is None:
        scanner = _scanners[object_pairs_hook] = _make_scanner(_Context(object_pairs_hook))
    start = 0
    while start < len(text) and text[start] in _WS:  # (no stripped copy of a large body)
        start += 1
    value, end = scanner(text, start)
    if end != len(text) and text[end:].strip(_WS):
        raise NotJSON("extra data")
    return value


def loads(text: str, object_pairs_hook: PairsHook | None = None, *, explain: bool = True) -> Any:
    """``json.loads(text, object_pairs_hook=...)``. Text that is not JSON raises the standard
    library's ``JSONDecodeError`` (a ``ValueError``) with its message; with ``explain=False``,
    for a caller that only falls back to another reader, a bare :class:`NotJSON` without
    importing ``json``. Nesting too deep for the interpreter raises ``RecursionError``, as
    ``json.loads`` does."""
    if _make_scanner is not None:
        try:
            return _scan(text, object_pairs_hook)
        # StopIteration: no value where one starts. The C parser's own errors are JSONDecodeError
        # once json.decoder is imported and SystemError before (it looks the class up there).
        # RecursionError is none of these: it goes to the caller.
        except (StopIteration, ValueError, SystemError):
            if not explain:
                raise NotJSON("not standard JSON") from None
    import json

    return json.loads(text, object_pairs_hook=object_pairs_hook)
