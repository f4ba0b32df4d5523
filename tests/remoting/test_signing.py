"""Request signing (remoting.md 9) against vectors worked out by hand.

Each expected signature is given twice: as a literal computed once with
``printf '<content>' | openssl dgst -sha1 -hmac <secret> -binary | base64``, and recomputed here
with hmac over a content string spelled out in the expected key order.
"""

from __future__ import annotations

import base64
import hashlib
import hmac

from mqctl.remoting.signing import Credentials, sign


def hmac_b64(secret: str, content: bytes) -> str:
    return base64.b64encode(hmac.new(secret.encode(), content, hashlib.sha1).digest()).decode()


def test_vector_plain() -> None:
    signed = sign({"topic": "TopicTest", "queueId": "0"}, b"", Credentials("AK", "SK"))
    # TreeMap order: "AccessKey" < "queueId" < "topic" (upper case before lower case).
    content = b"AK" + b"0" + b"TopicTest"
    assert signed["Signature"] == hmac_b64("SK", content) == "LhG5phX+r+ijmYrR1w4DscZWYt8="
    assert signed == {
        "topic": "TopicTest",
        "queueId": "0",
        "AccessKey": "AK",
        "Signature": signed["Signature"],
    }


def test_vector_with_token_body_and_a_stale_signature() -> None:
    ext = {"consumerGroup": "G", "topic": "T", "Signature": "stale"}
    signed = sign(ext, b'{"x":1}', Credentials("AK", "SK", security_token="TOK"))
    # "AccessKey" < "SecurityToken" < "consumerGroup" < "topic"; Signature is left out; body appended.
    content = b"AK" + b"TOK" + b"G" + b"T" + b'{"x":1}'
    assert signed["Signature"] == hmac_b64("SK", content) == "r3aefY6bUqPSXAvZE+ffRR7WcsQ="
    assert signed["SecurityToken"] == "TOK"
    assert ext["Signature"] == "stale"  # the input is not modified


def test_keys_sort_by_utf16_code_units() -> None:
    # U+1F600 is the surrogate pair D83D DE00 in UTF-16, so it sorts before U+FB01 in Java's
    # TreeMap, although its code point is larger.
    ext = {"\ufb01": "2", "\U0001f600": "1"}
    signed = sign(ext, b"", Credentials("AK", "SK"))
    assert signed["Signature"] == hmac_b64("SK", b"AK12") == "d3vJKL2iRdr4ZykZfY+lxfQlfdc="
    assert signed["Signature"] != hmac_b64("SK", b"AK21")  # code-point order would give "vcAE8yhb..."


def test_non_ascii_values_are_utf8() -> None:
    signed = sign({"topic": "主题"}, b"", Credentials("AK", "SK"))
    assert signed["Signature"] == hmac_b64("SK", "AK主题".encode())


def test_empty_body_adds_nothing() -> None:
    creds = Credentials("AK", "SK")
    assert sign({"a": "x"}, b"", creds)["Signature"] == hmac_b64("SK", b"AKx")
    assert sign({"a": "x"}, b"\x00", creds)["Signature"] == hmac_b64("SK", b"AKx\x00")


def test_credentials_never_show_secrets() -> None:
    creds = Credentials("my-access", "s3cr3t-value", security_token="t0ken-value")
    for text in (repr(creds), str(creds), f"{creds}", repr([creds])):
        assert "my-access" in text
        assert "s3cr3t-value" not in text
        assert "t0ken-value" not in text
