"""TLS failures in words, against a TLS server of fakeserver.py with certificates made here by the
openssl CLI (a CA, a server certificate for IP 127.0.0.1 only, a client certificate): an untrusted
certificate, a certificate for another name, a server that wants a client certificate, plaintext
to a server that wants TLS, files that cannot be loaded. Each is one error naming the address,
what is wrong, and a hint saying which flag fixes it."""

from __future__ import annotations

import shutil
import ssl
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from mqctl_testkit.fakeserver import FakeServer

from mqctl import errors
from mqctl.remoting.client import RemotingClient
from mqctl.remoting.tls import TlsSettings

TIMEOUT = 3.0


@dataclass(frozen=True)
class Pki:
    d: Path

    def __getattr__(self, name: str) -> str:
        return str(self.d / f"{name.replace('_', '-')}.pem")

    @property
    def client_key(self) -> str:
        return str(self.d / "client.key")

    @property
    def server_key(self) -> str:
        return str(self.d / "server.key")


def _ssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    if shutil.which("openssl") is None:
        pytest.skip("openssl not installed")
    d = tmp_path_factory.mktemp("pki")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1"]
    for ca in ("ca", "other-ca"):
        _ssl(
            "req",
            "-x509",
            *ec,
            "-subj",
            f"/CN={ca}",
            "-keyout",
            str(d / f"{ca}.key"),
            "-out",
            str(d / f"{ca}.pem"),
        )
    for name, san in (("server", "subjectAltName=IP:127.0.0.1"), ("client", "extendedKeyUsage=clientAuth")):
        _ssl(
            "req",
            *ec,
            "-subj",
            f"/CN={name}",
            "-keyout",
            str(d / f"{name}.key"),
            "-out",
            str(d / f"{name}.csr"),
        )
        (d / f"{name}.ext").write_text(san + "\n")
        _ssl("x509", "-req", "-in", str(d / f"{name}.csr"), "-CA", str(d / "ca.pem"), "-CAkey", str(d / "ca.key"),
             "-CAcreateserial", "-days", "1", "-extfile", str(d / f"{name}.ext"), "-out", str(d / f"{name}.pem"))  # fmt: skip
    return Pki(d)


def _server_ctx(pki: Pki, *, want_client_cert: bool = False) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(pki.server, pki.server_key)
    if want_client_cert:  # tls.server.need.client.auth=require
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(pki.ca)
    return ctx


@pytest.fixture
def server(pki: Pki) -> Iterator[FakeServer]:
    with FakeServer("echo", tls=_server_ctx(pki)) as s:
        yield s


def _fails(tls: TlsSettings | bool, addr: str) -> errors.MqctlError:
    with RemotingClient(timeout=TIMEOUT, tls=tls) as client, pytest.raises(errors.MqctlError) as caught:
        client.call(addr, 30)
    assert caught.value.exit_status == errors.ExitStatus.UNREACHABLE
    return caught.value


def test_verified_against_the_given_ca(server: FakeServer, pki: Pki) -> None:
    with RemotingClient(timeout=TIMEOUT, tls=TlsSettings(ca_file=pki.ca)) as client:
        assert client.call(server.addr, 30).code == 0


def test_a_certificate_from_another_ca_is_not_trusted(server: FakeServer, pki: Pki) -> None:
    err = _fails(TlsSettings(ca_file=pki.other_ca), server.addr)
    assert err.message == (
        f"{server.addr}: TLS: the server's certificate is not trusted (unable to get local issuer certificate)"
    )  # today: "TLS handshake failed: unable to get local issuer certificate", no hint
    assert err.hint is not None and "--tls-ca FILE" in err.hint


def test_a_certificate_for_another_name_is_refused(server: FakeServer, pki: Pki) -> None:
    err = _fails(TlsSettings(ca_file=pki.ca), f"localhost:{server.port}")  # the certificate names 127.0.0.1
    assert err.message == (
        f"localhost:{server.port}: TLS: the server's certificate is not valid for localhost "
        "(Hostname mismatch, certificate is not valid for 'localhost'.)"
    )
    assert err.hint is not None and "a name or address the certificate lists" in err.hint


def test_a_server_that_wants_a_client_certificate(pki: Pki) -> None:
    with FakeServer("echo", tls=_server_ctx(pki, want_client_cert=True)) as s:
        err = _fails(TlsSettings(ca_file=pki.ca), s.addr)
        assert err.message.startswith(f"{s.addr}: TLS: the server refused our certificate (")
        assert err.hint is not None and "--tls-cert FILE and --tls-key FILE" in err.hint
        mutual = TlsSettings(ca_file=pki.ca, cert_file=pki.client, key_file=pki.client_key)
        with RemotingClient(timeout=TIMEOUT, tls=mutual) as client:
            assert client.call(s.addr, 30).code == 0


def test_insecure_accepts_any_certificate(server: FakeServer) -> None:
    with RemotingClient(timeout=TIMEOUT, tls=TlsSettings(insecure=True)) as client:
        assert client.call(f"localhost:{server.port}", 30).code == 0


def test_plaintext_to_a_server_that_wants_tls_hints_at_tls(server: FakeServer) -> None:
    err = _fails(False, server.addr)
    # this server resets (it read part of the request); a RocketMQ server closes (a real one in
    # tests/compat/test_compat_secure_tls.py): both say what to try
    assert err.message in (
        f"{server.addr}: connection closed by the peer with 1 request(s) unanswered",
        f"{server.addr}: receive failed: Connection reset by peer",
    )
    assert err.hint is not None and "if it requires TLS, pass --tls" in err.hint  # today: no hint


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        (lambda p: TlsSettings(ca_file=p.client_key), "--tls-ca {p.client_key}: cannot load it as PEM certificates"),
        (lambda p: TlsSettings(ca_file=str(p.d / "nope.pem")), "--tls-ca {p.d}/nope.pem: cannot load it"),
        (lambda p: TlsSettings(cert_file=p.client, key_file=p.server_key), "cannot load the client certificate and its key"),
        (lambda p: TlsSettings(key_file=p.client_key), "--tls-key needs --tls-cert"),
    ],
)  # fmt: skip
def test_files_that_cannot_be_loaded_are_usage_errors(pki: Pki, settings, words: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(errors.UsageError) as caught:
        settings(pki).context()
    assert words.format(p=pki) in caught.value.message


def test_an_encrypted_key_is_refused_not_prompted_for(pki: Pki, tmp_path: Path) -> None:
    enc = tmp_path / "enc.key"
    _ssl("pkey", "-in", pki.client_key, "-aes256", "-passout", "pass:x", "-out", str(enc))
    with pytest.raises(errors.UsageError) as caught:
        TlsSettings(cert_file=pki.client, key_file=str(enc)).context()
    assert "encrypted" in caught.value.message
