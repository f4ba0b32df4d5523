"""Request signing of ACL 1.0's ``AclClientRPCHook`` (remoting.md 9), still checked by 5.3+ brokers."""

from __future__ import annotations

from collections.abc import Mapping

from mqctl.records import field, record

ACCESS_KEY = "AccessKey"
SECURITY_TOKEN = "SecurityToken"
SIGNATURE = "Signature"


@record(frozen=True)
class Credentials:
    """An access key pair; ``repr`` and ``str`` never show the secret key or the token."""

    access_key: str
    secret_key: str = field(repr=False)
    security_token: str | None = field(default=None, repr=False)

    def __str__(self) -> str:
        return repr(self)


def _java_order(key: str) -> bytes:
    # Java's TreeMap<String,...> compares UTF-16 code units; big-endian UTF-16 bytes compare the same
    # way ("surrogatepass" keeps a lone surrogate sortable instead of failing).
    return key.encode("utf-16-be", "surrogatepass")


def sign(ext_fields: Mapping[str, str], body: bytes, creds: Credentials) -> dict[str, str]:
    """``ext_fields`` plus ``AccessKey``, ``SecurityToken`` (if set) and their ``Signature``.

    The signed content is every field's value except ``Signature``'s, in Java TreeMap key order,
    concatenated and UTF-8 encoded, then the body when it is not empty; the signature is the
    padded standard Base64 of its HMAC-SHA1 under the secret key.
    """
    # Imported here: hashlib loads OpenSSL, a cost only signed requests should pay.
    import base64
    import hashlib
    import hmac

    fields = dict(ext_fields)
    fields[ACCESS_KEY] = creds.access_key
    if creds.security_token is not None:
        fields[SECURITY_TOKEN] = creds.security_token
    fields.pop(SIGNATURE, None)
    content = "".join(fields[k] for k in sorted(fields, key=_java_order))
    data = content.encode("utf-8", "replace") + bytes(body)
    digest = hmac.new(creds.secret_key.encode("utf-8", "replace"), data, hashlib.sha1).digest()
    fields[SIGNATURE] = base64.b64encode(digest).decode("ascii")
    return fields
