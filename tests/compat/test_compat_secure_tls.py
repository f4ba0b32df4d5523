"""Scenario 11: TLS on the secured cluster (matrix_secure.py): a permissive name server (TLS and
plaintext on one port; its certificate names ``localhost`` only) and an enforcing broker that
wants a client certificate (mutual TLS), with ACL. What a user gets from mqctl for each way of
getting TLS wrong, and that the right flags (or a profile carrying them) work.

Truth: what each server was configured with (the certificates the test made, the modes set) —
a plaintext request the name server answers while the broker closes the connection; a CA that
issued nothing; a host name the certificate does not carry.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from matrix_secure import ADMIN, APP, BROKER, GROUP, SECRETS, TOPIC, SecureRocketMQ

pytestmark = pytest.mark.compat

PROGRESS = ("consumerProgress", "-g", GROUP, "-t", TOPIC, "--output", "json")


def _line(proc) -> str:  # type: ignore[no-untyped-def]
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("mqctl: error: ")]
    assert len(errors) == 1, proc.stderr
    assert "Traceback" not in proc.stderr and not any(s in proc.stdout + proc.stderr for s in SECRETS)
    return errors[0]


def _hint(proc) -> str:  # type: ignore[no-untyped-def]
    return next((ln for ln in proc.stderr.splitlines() if ln.startswith("hint: ")), "")


def _client(secure: SecureRocketMQ) -> list[str]:
    p = secure.pki.path
    return ["--tls-cert", str(p("client.pem")), "--tls-key", str(p("client.key"))]


def test_plaintext_reaches_the_permissive_name_server_not_the_enforcing_broker(
    secure: SecureRocketMQ,
) -> None:
    proc = secure.mqctl_as(ADMIN, *PROGRESS, tls=[])
    assert proc.returncode == 4
    broker = secure.brokers[BROKER].addr  # the name server answered the route in plaintext
    assert (
        _line(proc) == f"mqctl: error: {broker}: connection closed by the peer with 1 request(s) unanswered"
    )
    assert "requires TLS, pass --tls" in _hint(proc)
    print(f"{secure.version} plaintext:\n  {_line(proc)}\n  {_hint(proc)}")


def test_an_untrusted_certificate_is_refused(secure: SecureRocketMQ) -> None:
    for trust in ([], ["--tls-ca", str(secure.pki.other_ca)]):  # the system's CAs; a CA that issued nothing
        proc = secure.mqctl_as(ADMIN, *PROGRESS, tls=["--tls", *trust, *_client(secure)])
        assert proc.returncode == 4
        assert _line(proc) == (
            f"mqctl: error: name server {secure.tls_namesrv}: TLS: the server's certificate is not trusted "
            "(unable to get local issuer certificate)"
        )
        assert "--tls-ca FILE" in _hint(proc)
    print(f"{secure.version} untrusted:\n  {_line(proc)}\n  {_hint(proc)}")


def test_a_certificate_for_another_name_is_refused(secure: SecureRocketMQ) -> None:
    proc = secure.mqctl_as(ADMIN, *PROGRESS, namesrv=secure.namesrv_addr)  # 127.0.0.1; it names localhost
    assert proc.returncode == 4
    assert _line(proc) == (
        f"mqctl: error: name server {secure.namesrv_addr}: TLS: the server's certificate is not valid for "
        "127.0.0.1 (IP address mismatch, certificate is not valid for '127.0.0.1'.)"
    )
    print(f"{secure.version} wrong host name:\n  {_line(proc)}\n  {_hint(proc)}")


def test_the_broker_wants_a_client_certificate(secure: SecureRocketMQ) -> None:
    proc = secure.mqctl_as(ADMIN, *PROGRESS, tls=["--tls-ca", str(secure.pki.ca)])
    assert proc.returncode == 4
    line = _line(proc)
    assert line.startswith(
        f"mqctl: error: {secure.brokers[BROKER].addr}: TLS: the server refused our certificate ("
    )
    assert "--tls-cert FILE and --tls-key FILE" in _hint(proc)
    print(f"{secure.version} no client certificate:\n  {line}\n  {_hint(proc)}")


def test_insecure_works_and_says_so_once(secure: SecureRocketMQ) -> None:
    proc = secure.mqctl_as(APP, "consumerProgress", "-g", GROUP, "-w", "200ms", "--samples", "3", "--output", "json",
                           tls=["--tls-insecure", *_client(secure)])  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.splitlines()) == 3  # three samples, one warning
    assert proc.stderr.count("mqctl: warning: TLS without verification (--tls-insecure)") == 1, proc.stderr


def test_a_profile_carries_the_tls_settings(secure: SecureRocketMQ, tmp_path: Path) -> None:
    p = secure.pki.path
    config = tmp_path / "config.toml"
    config.write_text(
        f'[profiles.secured]\nnamesrv = "{secure.tls_namesrv}"\naccess_key = "{APP.access_key}"\n'
        f'secret_key = "{APP.secret_key}"\ntls_ca = "{secure.pki.ca}"\ntls_cert = "{p("client.pem")}"\n'
        f'tls_key = "{p("client.key")}"\n'
    )
    config.chmod(0o600)
    cmd = ["consumerProgress", "-g", GROUP, "-t", TOPIC, "--profile", "secured", "--output", "json"]
    proc = secure.run([*_python(), *cmd], env={"MQCTL_CONFIG": str(config)}, cwd=_repo())
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert {r["queueId"] for r in doc["rows"]} == {0, 1, 2, 3} and proc.stderr == ""


def _python() -> list[str]:
    import sys

    return [sys.executable, "-m", "mqctl"]


def _repo() -> Path:
    from compat_harness import REPO

    return REPO
