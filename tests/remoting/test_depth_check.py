"""bodies_json.check_depth: the nesting of brackets outside strings, bounded at MAX_DEPTH.

The reference here reads the text one character at a time as JSON does (a string starts at a
quote and ends at the next quote that no backslash escapes); check_depth must refuse exactly the
texts it finds nested deeper than MAX_DEPTH, through either of its ways of finding the brackets."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mqctl_testkit.thorough import cases

from mqctl.errors import ProtocolError
from mqctl.remoting.bodies_json import MAX_DEPTH, check_depth


def _reference_depth(text: str) -> int:
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "}]":
            depth -= 1
    return deepest


def _refused(text: str) -> bool:
    try:
        check_depth(text, "body")
    except ProtocolError as exc:
        assert exc.message == f"body: JSON nested deeper than {MAX_DEPTH} levels"
        return True
    return False


def _deep(n: int) -> str:
    return "[" * n + "]" * n


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        (_deep(MAX_DEPTH), False),
        (_deep(MAX_DEPTH + 1), True),
        ('{"a":"' + "[" * 100 + '"}', False),  # brackets inside a string do not nest
        ('{"a":"x"}' + _deep(MAX_DEPTH + 1), True),
        ('{"a":"\\"' + "[" * 100 + '"}', False),  # an escaped quote does not end the string
        (
            '{"a":"\\\\"' + "," + _deep(MAX_DEPTH + 1) + "}",
            True,
        ),  # an escaped backslash does not escape the quote
        ('"' + _deep(MAX_DEPTH + 1), False),  # all of it inside an unterminated string
        ('"ab"' + '"{"' + _deep(MAX_DEPTH + 1), True),
        ('{"é":"' + "{" * 80 + '","k":' + _deep(MAX_DEPTH - 1) + "}", False),  # non-ASCII text
        ('{"é":"\ud800' + "{" * 80 + '","k":' + _deep(MAX_DEPTH + 1) + "}", True),  # a lone surrogate
        ("[" * (MAX_DEPTH + 1) + '"]]]"', True),  # closing brackets inside a string close nothing
    ],
)
def test_depth_of_known_texts(text: str, refused: bool) -> None:
    assert (_reference_depth(text) > MAX_DEPTH) is refused
    assert _refused(text) is refused


# Texts of brackets, quotes and a few other characters, long enough to cross MAX_DEPTH: both the
# bytes way (no backslash) and the patterns (a backslash, or a bracket inside a string).
_PIECES = st.sampled_from(["[", "]", "{", "}", '"', "a", ",", "é", "\\", "[[[[[[[[", "]]]]]]]]", '""'])


@settings(max_examples=cases(1500), deadline=None)
@given(st.lists(_PIECES, max_size=40), st.integers(min_value=MAX_DEPTH - 3, max_value=MAX_DEPTH + 3))
def test_depth_as_the_reference_reads_it(pieces: list[str], pad: int) -> None:
    text = "[" * pad + "".join(pieces)
    assert _refused(text) is (_reference_depth(text) > MAX_DEPTH)


@settings(max_examples=cases(1500), deadline=None)
@given(
    st.lists(_PIECES.filter(lambda p: p != "\\"), max_size=40),
    st.integers(min_value=MAX_DEPTH - 3, max_value=MAX_DEPTH + 3),
)
def test_depth_without_escapes(pieces: list[str], pad: int) -> None:
    text = "[" * pad + "".join(pieces)
    assert _refused(text) is (_reference_depth(text) > MAX_DEPTH)
