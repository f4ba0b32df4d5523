"""mqctl.cjson against the standard library: the same value or the same error as json.loads."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from mqctl import cjson

VALID = [
    '{"a": 1}',
    '  \t\r\n[1, 2.5, -3e2, null, true, false, "x"]  \n',
    '"just a string"',
    "0",
    "-0.0",
    '{"nested": {"list": [{"k": "v"}, [], {}]}}',
    '{"unicode": "\\u00e9\\ud83d\\ude00 caf\u00e9", "esc": "\\"\\\\\\/\\b\\f\\n\\r\\t"}',
    '{"big": 123456789012345678901234567890}',
    '{"dup": 1, "dup": 2}',
    "[NaN, Infinity, -Infinity]",
    '{"brokerAddrs":{"0":"127.0.0.1:10911"},"brokerName":"broker-a","cluster":"DefaultCluster"}',
]

INVALID = [
    "",
    "   ",
    "{",
    '{"a": 1,}',
    "[1 2]",
    '{"a": 1} x',
    '{"a": 1}{"b": 2}',
    "{0:250}",  # fastjson's bare integer key
    '"unterminated',
    '"bad escape \\x"',
    '"raw\ncontrol"',  # strict: a raw control character inside a string
    "\ufeff{}",  # a byte-order mark
    "nan",
    "01",
    "[1,]",
    "\f{}",  # json skips space, tab, CR and LF around the value, not form feed
    "{} \f",
]


@pytest.mark.parametrize("text", VALID)
def test_valid_text_reads_as_json_reads_it(text: str) -> None:
    expected = json.loads(text)
    got = cjson.loads(text)
    assert repr(got) == repr(expected)  # repr: NaN != NaN, and float vs int shows
    assert got == expected or any(isinstance(v, float) and math.isnan(v) for v in got)


@pytest.mark.parametrize("text", INVALID)
def test_invalid_text_raises_jsons_own_error(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as want:
        json.loads(text)
    with pytest.raises(json.JSONDecodeError) as got:
        cjson.loads(text)
    assert (got.value.msg, got.value.pos) == (want.value.msg, want.value.pos)


@pytest.mark.parametrize("text", INVALID)
def test_quiet_refusal_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError):
        cjson.loads(text, explain=False)


def test_pairs_hook_is_used_like_jsons() -> None:
    text = '{"b": 1, "a": {"c": 2}}'
    assert (
        cjson.loads(text, list)
        == json.loads(text, object_pairs_hook=list)
        == [
            ("b", 1),
            ("a", [("c", 2)]),
        ]
    )
    assert cjson.loads(text) == {"b": 1, "a": {"c": 2}}  # the hook's scanner is not reused


def test_too_deep_raises_recursion_error_as_json_does() -> None:
    text = "[" * 100_000 + "]" * 100_000
    with pytest.raises(RecursionError):
        json.loads(text)
    with pytest.raises(RecursionError):
        cjson.loads(text)


def _fresh(code: str) -> str:
    """stdout of ``code`` in a new interpreter (where nothing has imported json yet)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout


_JSON_LOADED = "print(sorted(m for m in sys.modules if m == 'json' or m.startswith('json.')))"


def test_reading_json_does_not_import_json() -> None:
    out = _fresh(
        f"import sys\nfrom mqctl import cjson\nprint(cjson.loads('{{\"a\": [1, 2]}}'))\n{_JSON_LOADED}"
    )
    assert out.split("\n")[:2] == ["{'a': [1, 2]}", "[]"]


def test_a_quiet_refusal_does_not_import_json() -> None:
    refuse = "try:\n    cjson.loads('{0:250}', explain=False)\nexcept ValueError as e:\n    print(type(e).__name__)"
    out = _fresh(f"import sys\nfrom mqctl import cjson\n{refuse}\n{_JSON_LOADED}")
    assert out.split("\n")[:2] == ["NotJSON", "[]"]


def test_a_fresh_process_gets_jsons_message() -> None:
    """Before json is imported the C parser cannot raise its error class (it looks it up in
    json.decoder): the refusal still ends in the standard library's error and message."""
    refuse = (
        "try:\n    cjson.loads('{0:250}')\nexcept ValueError as e:\n    print(type(e).__name__, e.pos, e.msg)"
    )
    out = _fresh(f"from mqctl import cjson\n{refuse}")
    assert out.strip() == "JSONDecodeError 1 Expecting property name enclosed in double quotes"
