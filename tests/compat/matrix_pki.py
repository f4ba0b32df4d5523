"""The secured clusters' certificates (matrix_secure.py), made with the openssl CLI: a test CA,
the name server's, the broker's and a client's certificate issued by it, and a second CA that
issued nothing the servers use."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from compat_harness import HarnessError


@dataclass(frozen=True)
class Pki:
    dir: Path

    def path(self, name: str) -> Path:
        return self.dir / name

    @property
    def ca(self) -> Path:
        return self.path("ca.pem")

    @property
    def other_ca(self) -> Path:
        """A CA that issued none of the servers' certificates."""
        return self.path("other-ca.pem")


_LEAF_EXT = (
    "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
    "extendedKeyUsage={eku}\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n{san}"
)


def _openssl(*args: str | Path) -> None:
    proc = subprocess.run(["openssl", *map(str, args)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise HarnessError(f"openssl {' '.join(map(str, args))} failed:\n{proc.stderr}")


def _ca(d: Path, name: str) -> None:
    key, cert = d / f"{name}.key", d / f"{name}.pem"
    _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key)
    _openssl("req", "-new", "-x509", "-key", key, "-subj", f"/CN=mqctl compat {name}", "-days", "3",
             "-out", cert, "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign")  # fmt: skip


def _leaf(d: Path, name: str, san: str | None, eku: str) -> None:
    """``name``.pem/.key (PKCS#8, as netty's SslContextBuilder reads keys) issued by ca.pem."""
    key, csr, cert, ext = d / f"{name}.key", d / f"{name}.csr", d / f"{name}.pem", d / f"{name}.ext"
    ext.write_text(_LEAF_EXT.format(eku=eku, san=f"subjectAltName={san}\n" if san else ""))
    _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key)
    _openssl("req", "-new", "-key", key, "-subj", f"/CN=mqctl compat {name}", "-out", csr)
    _openssl("x509", "-req", "-in", csr, "-CA", d / "ca.pem", "-CAkey", d / "ca.key", "-CAcreateserial",
             "-days", "3", "-extfile", ext, "-out", cert)  # fmt: skip


def make_pki(d: Path) -> Pki:
    """A test CA and what it issues: the name server's certificate (DNS:localhost only), the
    broker's (IP:127.0.0.1, DNS:localhost), a client certificate for mutual TLS; and a second CA
    that issued nothing the servers use."""
    d.mkdir(parents=True, exist_ok=True)
    _ca(d, "ca")
    _ca(d, "other-ca")
    _leaf(d, "namesrv", "DNS:localhost", "serverAuth")
    _leaf(d, "broker", "IP:127.0.0.1,DNS:localhost", "serverAuth,clientAuth")
    _leaf(d, "client", None, "clientAuth")
    return Pki(d)
