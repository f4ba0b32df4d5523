"""TLS towards name servers and brokers: what to trust, who we are, and the words for a failure.

RocketMQ servers run TLS in one of three modes (``tls.server.mode``): *disabled*, *permissive*
(TLS and plaintext on the same port: the server looks at the first byte) and *enforcing* (a
plaintext connection is closed at once); with ``tls.server.need.client.auth=require`` a server
wants a client certificate too (mutual TLS). mqctl verifies the server's certificate and its name
like any TLS client (Java's netty client does not check the name): against ``ca_file`` (a PEM
bundle) or the system store; ``insecure`` checks nothing (test clusters).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqctl.errors import UnreachableError, UsageError
from mqctl.records import record

if TYPE_CHECKING:
    import ssl

_TRUST_HINT = "pass --tls-ca FILE with the CA that issued the server's certificate (or --tls-insecure for a test cluster)"
_NAME_HINT = (
    "connect by a name or address the certificate lists (-n NAME:PORT), or --tls-insecure for a test cluster"
)
_CLIENT_HINT = "the server wants a client certificate it trusts: pass --tls-cert FILE and --tls-key FILE"
_PLAIN_HINT = "the server may not speak TLS: drop --tls"


@record(frozen=True)
class TlsSettings:
    """How to talk TLS: whom to trust (``ca_file``, else the system store; ``insecure``: nobody
    is checked) and the client certificate for mutual TLS (PEM files, the key unencrypted)."""

    insecure: bool = False
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None

    def context(self) -> ssl.SSLContext:
        """The client context; a file that cannot be loaded is a usage error naming it."""
        import ssl

        try:
            ctx = ssl.create_default_context(cafile=self.ca_file)
        except (OSError, ssl.SSLError, ValueError) as exc:
            raise UsageError(
                f"--tls-ca {self.ca_file}: cannot load it as PEM certificates: {_reason(exc)}",
                "give the CA certificate (PEM, -----BEGIN CERTIFICATE-----) that issued the servers' certificates",
            ) from None
        if self.insecure:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        if self.cert_file or self.key_file:
            self._client_cert(ctx)
        return ctx

    def _client_cert(self, ctx: ssl.SSLContext) -> None:
        import ssl

        if not self.cert_file:
            raise UsageError("--tls-key needs --tls-cert (the client certificate it belongs to)")

        def no_password() -> str:
            raise UsageError(f"--tls-key {self.key_file}: the key is encrypted; give an unencrypted PEM key")

        try:
            ctx.load_cert_chain(self.cert_file, self.key_file, password=no_password)
        except (OSError, ssl.SSLError, ValueError) as exc:
            files = f"--tls-cert {self.cert_file}" + (f" --tls-key {self.key_file}" if self.key_file else "")
            raise UsageError(
                f"{files}: cannot load the client certificate and its key: {_reason(exc)}",
                "PEM files: the certificate (and its chain), then the unencrypted private key "
                "(--tls-key may be left out when the certificate file holds the key too)",
            ) from None


def _reason(exc: BaseException) -> str:
    """OpenSSL's words without its decoration: "[SSL: CODE] text (_ssl.c:123)" -> "text"."""
    verify = getattr(exc, "verify_message", None)
    if verify:
        return str(verify)
    text = str(getattr(exc, "strerror", None) or exc)
    if text.startswith("[") and "] " in text:
        text = text.split("] ", 1)[1]
    if text.endswith(")") and " (_ssl.c:" in text:
        text = text.rsplit(" (_ssl.c:", 1)[0]
    return text or type(exc).__name__


def handshake_error(addr: str, host: str, exc: BaseException) -> UnreachableError:
    """A failed handshake in words: an untrusted certificate, one for another name, a server that
    wants our certificate, a server that does not speak TLS."""
    reason = _reason(exc)
    if getattr(exc, "verify_message", None):
        if "mismatch" in reason:
            return UnreachableError(
                f"{addr}: TLS: the server's certificate is not valid for {host} ({reason})", _NAME_HINT
            )
        return UnreachableError(
            f"{addr}: TLS: the server's certificate is not trusted ({reason})", _TRUST_HINT
        )
    refused = peer_refused(addr, exc)
    if refused is not None:
        return refused
    text = reason.lower()
    if "wrong version" in text or "eof" in text or "unexpected" in text or "record layer" in text:
        return UnreachableError(f"{addr}: TLS handshake failed: {reason}", _PLAIN_HINT)
    return UnreachableError(f"{addr}: TLS handshake failed: {reason}")


def peer_refused(addr: str, exc: BaseException) -> UnreachableError | None:
    """The server's TLS alert about our certificate (no certificate, an untrusted one): with TLS
    1.3 it comes on the first read, after the handshake looked complete."""
    reason = _reason(exc)
    text = f"{reason} {getattr(exc, 'reason', '')}".lower()
    if "alert" in text and ("certificate" in text or "unknown ca" in text or "unknown_ca" in text):
        return UnreachableError(f"{addr}: TLS: the server refused our certificate ({reason})", _CLIENT_HINT)
    return None
