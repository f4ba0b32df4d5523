"""Secured clusters of the matrix: ACL and TLS on one name server + one broker per version.

One cluster per version covers every case (no restart in between):

- **name server**: TLS *permissive* (TLS and plaintext both accepted), certificate for the DNS
  name ``localhost`` only, so ``-n 127.0.0.1:PORT`` over TLS is a real host-name mismatch while
  ``-n localhost:PORT`` verifies;
- **broker-a** (cluster ``SecureCluster``): TLS *enforcing* (a plaintext connection is closed)
  with *mutual* TLS (``tls.server.need.client.auth=require``: a client certificate issued by the
  test CA is required), certificate for IP 127.0.0.1 and DNS localhost (the address it
  registers), and ACL:

  - 4.x: ACL 1.0, ``aclEnable=true`` and ``<home>/conf/plain_acl.yml``: :data:`ADMIN` (admin),
    :data:`APP` (non-admin, PUB|SUB on the topic and SUB on both groups), :data:`OUTSIDER`
    (non-admin, SUB on the topic, no group), :data:`STRANGER` (non-admin, SUB on the group, no
    topic), default perms DENY, a global white list that does not match 127.0.0.1 (so every
    signature is really checked);
  - 5.x: ACL 2.0 (``authenticationEnabled``/``authorizationEnabled``, local RocksDB metadata
    under the store's ``config/``): :data:`ADMIN` is the init user (SUPER), :data:`APP` and
    :data:`OUTSIDER` are Normal users made with that version's ``mqadmin createUser`` and given
    rules with ``mqadmin createAcl`` (APP: Pub/Sub/Get/Update on the topic and both groups;
    OUTSIDER: Sub/Get on the topic only; STRANGER: Sub/Get/Update on the group only). In the
    5.5.1 cell authentication only (``authorizationEnabled=false``, no rules): its broker 5.5.1
    calls ``AuthorizationEvaluator.evaluate(RemotingCommand, List)``, which rocketmq-auth 5.5.0
    (the newest on Maven Central) lacks, so with authorization on every request fails with
    NoSuchMethodError (seen). ACL 1.0 is gone from the broker since 5.3.3 (RIP-77:
    no ``aclEnable``, ``plain_acl.yml`` is read only as a migration source), so 5.x runs ACL 2.0
    alone.

TLS settings are the JVM system properties of ``TlsSystemConfig`` (4.9.7, 5.3.3 and 5.5.x read
the same names): ``tls.server.mode``, ``tls.test.mode.enable=false`` (else the server uses a
self-signed certificate of its own), ``tls.server.certPath``/``keyPath`` (PEM, PKCS#8 key),
``tls.server.need.client.auth``, ``tls.server.authClient`` + ``trustCertPath``; on the client
side ``tls.enable``, ``tls.client.authServer`` + ``trustCertPath``, ``tls.client.certPath``/
``keyPath``. mqadmin takes its keys from ``<rocketmq.home.dir>/conf/tools.yml`` (4.x and 5.x
alike), so every account gets a home of its own; the Java helpers read theirs from the file the
``compat.acl`` property names (java/Acl.java). Certificates: matrix_pki.py (openssl CLI).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from compat_harness import REPO, HarnessError, RocketMQ
from matrix_pki import Pki
from versions import RmqVersion, write_logback_confs

SECURE_CLUSTER = "SecureCluster"
BROKER = "broker-a"
TOPIC = "TopicSecure"
GROUP = "GroupSecure"  # consumed part of the way, offline: reads and resets
LIVE_GROUP = "GroupSecureLive"  # a consumer online: connections, allocateMQ -g, online reset
QUEUES = 4


@dataclass(frozen=True)
class Account:
    access_key: str
    secret_key: str = field(repr=False)
    what: str  # how the tests call it


ADMIN = Account("rocketmq2", "Adm1n-s3cret-6b1f0e", "admin")
APP = Account("appuser1", "App-s3cret-2c9d7a", "non-admin with grants")
OUTSIDER = Account("outsider1", "Outs1der-s3cret-8e4b", "non-admin without the group")
STRANGER = Account("stranger1", "Str4nger-s3cret-0c6f", "non-admin without the topic")
GHOST = Account("ghostuser", "Gh0st-s3cret-1a7c55", "unknown access key")
WRONG = Account(ADMIN.access_key, "Wr0ng-s3cret-5d3e9a", "wrong secret")
ACCOUNTS = (ADMIN, APP, OUTSIDER, STRANGER, GHOST, WRONG)
SECRETS = tuple(a.secret_key for a in ACCOUNTS)


# --------------------------------------------------------------------------- the cluster


def _plain_acl_yml() -> str:
    """4.x ``conf/plain_acl.yml`` (ACL 1.0): the white list names a net the tests are not in."""
    return f"""globalWhiteRemoteAddresses:
  - 10.250.250.*
accounts:
  - accessKey: {ADMIN.access_key}
    secretKey: {ADMIN.secret_key}
    admin: true
  - accessKey: {APP.access_key}
    secretKey: {APP.secret_key}
    admin: false
    defaultTopicPerm: DENY
    defaultGroupPerm: DENY
    topicPerms:
      - {TOPIC}=PUB|SUB
    groupPerms:
      - {GROUP}=SUB
      - {LIVE_GROUP}=SUB
  - accessKey: {OUTSIDER.access_key}
    secretKey: {OUTSIDER.secret_key}
    admin: false
    defaultTopicPerm: DENY
    defaultGroupPerm: DENY
    topicPerms:
      - {TOPIC}=SUB
  - accessKey: {STRANGER.access_key}
    secretKey: {STRANGER.secret_key}
    admin: false
    defaultTopicPerm: DENY
    defaultGroupPerm: DENY
    groupPerms:
      - {GROUP}=SUB
"""


def _acl2_settings(authorization: bool) -> dict[str, str]:
    """5.x broker keys of ACL 2.0 (AuthConfig), the init user being the admin account."""
    provider = "org.apache.rocketmq.auth.{0}.provider.{1}"
    return {
        "authenticationEnabled": "true",
        "authorizationEnabled": str(authorization).lower(),
        "authenticationProvider": provider.format("authentication", "DefaultAuthenticationProvider"),
        "authenticationMetadataProvider": provider.format(
            "authentication", "LocalAuthenticationMetadataProvider"
        ),
        "authorizationProvider": provider.format("authorization", "DefaultAuthorizationProvider"),
        "authorizationMetadataProvider": provider.format(
            "authorization", "LocalAuthorizationMetadataProvider"
        ),
        "initAuthenticationUser": json.dumps({"username": ADMIN.access_key, "password": ADMIN.secret_key}),
        "innerClientAuthenticationCredentials": json.dumps(
            {"accessKey": ADMIN.access_key, "secretKey": ADMIN.secret_key}
        ),
    }


class SecureRocketMQ(RocketMQ):
    """The secured cluster of one version; the helpers and mqadmin speak mutual TLS and sign as
    :data:`ADMIN` unless told otherwise."""

    def __init__(self, version: RmqVersion, lib: Path, classes: Path, workdir: Path, pki: Pki) -> None:
        super().__init__(version, lib, classes, workdir)
        self.pki = pki
        # A cell whose broker line runs on another line's auth jar cannot authorize (see above).
        self.authorization = version.legacy or version.broker == version.tools
        self.acl_files: dict[str, Path] = {}
        self.homes: dict[str, Path] = {}
        for account in ACCOUNTS:
            self._account_home(account)

    @property
    def tls_namesrv(self) -> str:
        """The name server by the name its certificate carries."""
        return f"localhost:{self.namesrv_port}"

    def _account_home(self, account: Account) -> None:
        key = account.what
        home = self.workdir / "homes" / key.replace(" ", "-")
        (home / "conf").mkdir(parents=True, exist_ok=True)
        creds = f"accessKey: {account.access_key}\nsecretKey: {account.secret_key}\n"
        (home / "conf" / "tools.yml").write_text(creds)
        if self.version.legacy:
            write_logback_confs(home, self.rmq_logs)
        acl = self.workdir / "homes" / f"{key.replace(' ', '-')}.acl"
        acl.write_text(f"accessKey={account.access_key}\nsecretKey={account.secret_key}\n")
        self.homes[key], self.acl_files[key] = home, acl

    # ---------------------------------------------------------------- JVM flags

    def _tls_flags(self, logback: str) -> list[str]:
        p = self.pki.path
        client = [
            "-Dtls.enable=true",
            "-Dtls.test.mode.enable=false",
            "-Dtls.client.authServer=true",
            f"-Dtls.client.trustCertPath={self.pki.ca}",
            f"-Dtls.client.certPath={p('client.pem')}",
            f"-Dtls.client.keyPath={p('client.key')}",
        ]
        if logback == "namesrv":
            return [
                "-Dtls.server.mode=permissive",
                "-Dtls.test.mode.enable=false",
                f"-Dtls.server.certPath={p('namesrv.pem')}",
                f"-Dtls.server.keyPath={p('namesrv.key')}",
                "-Dtls.server.need.client.auth=none",
            ]
        if logback == "broker":
            return [
                *client,
                "-Dtls.server.mode=enforcing",
                f"-Dtls.server.certPath={p('broker.pem')}",
                f"-Dtls.server.keyPath={p('broker.key')}",
                "-Dtls.server.need.client.auth=require",
                "-Dtls.server.authClient=true",
                f"-Dtls.server.trustCertPath={self.pki.ca}",
            ]
        return client

    def _jvm(self, heap: str, logback: str, role: str | None = None) -> list[str]:
        opts = [*super()._jvm(heap, logback, role), *self._tls_flags(logback)]
        if logback == "client":
            opts.append(f"-Dcompat.acl={self.acl_files[ADMIN.what]}")
        return opts

    # ---------------------------------------------------------------- lifecycle

    def start(self) -> None:
        """Name server, broker-a with ACL, the accounts, the topic and the groups."""
        extra: dict[str, str] = {"brokerClusterName": SECURE_CLUSTER}
        if self.version.legacy:
            (self.home / "conf").mkdir(parents=True, exist_ok=True)
            (self.home / "conf" / "plain_acl.yml").write_text(_plain_acl_yml())
            extra["aclEnable"] = "true"
        else:
            extra.update(_acl2_settings(self.authorization))
        self.start_namesrv()
        self.add_broker(BROKER, self.workdir / BROKER / "store", extra=[f"{k}={v}" for k, v in extra.items()])
        self.start_brokers([BROKER])
        if not self.version.legacy:
            self._acl2_accounts()
        self.admin(
            f"topic:{TOPIC}:{QUEUES}:{BROKER}", f"group:{GROUP}:{BROKER}", f"group:{LIVE_GROUP}:{BROKER}"
        )

    def _acl2_accounts(self) -> None:
        """Normal users and their rules, made with this version's mqadmin (as the init user)."""
        addr = self.brokers[BROKER].addr
        for account in (APP, OUTSIDER, STRANGER):
            self.mqadmin_ok("createUser", "-b", addr, "-u", account.access_key, "-p", account.secret_key,
                            "-t", "Normal")  # fmt: skip
        if not self.authorization:
            return
        self.mqadmin_ok("createAcl", "-b", addr, "-s", f"User:{APP.access_key}",
                        "-r", f"Topic:{TOPIC},Group:{GROUP},Group:{LIVE_GROUP}",
                        "-a", "Pub,Sub,Get,Update", "-d", "Allow")  # fmt: skip
        self.mqadmin_ok("createAcl", "-b", addr, "-s", f"User:{OUTSIDER.access_key}",
                        "-r", f"Topic:{TOPIC}", "-a", "Sub,Get", "-d", "Allow")  # fmt: skip
        self.mqadmin_ok("createAcl", "-b", addr, "-s", f"User:{STRANGER.access_key}",
                        "-r", f"Group:{GROUP}", "-a", "Sub,Get,Update", "-d", "Allow")  # fmt: skip

    # ---------------------------------------------------------------- clients

    def mqadmin(
        self, *args: str, timeout: float = 120, account: Account | None = ADMIN
    ) -> subprocess.CompletedProcess[str]:
        """Real mqadmin over mutual TLS, signing as ``account`` (its own conf/tools.yml); None:
        unsigned (a home without tools.yml)."""
        home = self.home if account is None else self.homes[account.what]
        cmd = [*self._jvm("256m", "tools", role="mqadmin"), "-cp", f"{self.classes}:{self.lib}/*", "MqadminMain",
               args[0], "-n", self.namesrv_addr, *args[1:]]  # fmt: skip
        cmd = [f"-Drocketmq.home.dir={home}" if c.startswith("-Drocketmq.home.dir=") else c for c in cmd]
        proc = self.run(cmd, timeout=timeout)
        self._adopt_cds("mqadmin")
        return proc

    def mqadmin_as(self, account: Account | None, *args: str) -> subprocess.CompletedProcess[str]:
        return self.mqadmin(*args, account=account)

    def mqadmin_ok_as(self, account: Account, *args: str) -> str:
        """mqadmin's stdout as ``account``; raises when it failed (it exits 0 even then)."""
        proc = self.mqadmin(*args, account=account)
        if "command failed" in proc.stderr or "Exception" in proc.stderr or proc.returncode != 0:
            raise HarnessError(
                f"mqadmin {' '.join(args)} as {account.what} failed:\n{proc.stdout}\n{proc.stderr}"
            )
        return proc.stdout

    @contextmanager
    def background_consumer(self, topic: str, group: str, stop: Path) -> Iterator[None]:
        """java/Consumer.java on ``group`` until the block ends (it touches ``stop``)."""
        worker = threading.Thread(target=self.consume, args=(topic, group, "*"),
                                  kwargs={"idle": 300, "linger": 1, "stop_file": stop})  # fmt: skip
        worker.start()
        try:
            yield
        finally:
            stop.touch()
            worker.join(timeout=120)

    def wait_online(self, group: str, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while self.mqctl_as(ADMIN, "consumerConnection", "-g", group).returncode != 0:
            if time.monotonic() > deadline:
                raise HarnessError(f"no consumer of {group} online after {timeout:.0f} s")
            time.sleep(2)

    def admin_request_as(self, account: Account) -> object:
        """What mqctl's client gets for an admin request signed by ``account``: 4.x
        UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (an ACL 1.0 ADMIN_CODE; the group's config as it is),
        5.x GET_BROKER_CONSUME_STATS (a rule on the cluster). mqctl itself sends neither."""
        from mqctl.backends.live import LiveBackend
        from mqctl.remoting.client import Call
        from mqctl.remoting.signing import Credentials
        from mqctl.remoting.tls import TlsSettings

        p = self.pki.path
        tls = TlsSettings(False, str(self.pki.ca), str(p("client.pem")), str(p("client.key")))
        creds = Credentials(account.access_key, account.secret_key)
        if self.version.legacy:
            code, fields, body = 200, {}, json.dumps({"groupName": GROUP}).encode()
        else:
            code, fields, body = 317, {"isOrder": False, "timeoutMillis": 3000}, b""
        with LiveBackend(self.tls_namesrv, credentials=creds, tls=tls, timeout=30) as be:
            return be.net.call_many([Call(be.net.broker_addr(BROKER), code, fields, body)])[0]

    def mqctl_as(
        self,
        account: Account | None,
        *args: str,
        tls: Sequence[str] | None = None,
        namesrv: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        """``mqctl ARGS -n localhost:PORT`` over mutual TLS verified against the test CA, the
        keys in the environment (never on the command line); ``tls`` replaces the TLS flags."""
        flags = list(self.tls_flags() if tls is None else tls)
        keys = (
            {}
            if account is None
            else {"MQCTL_ACCESS_KEY": account.access_key, "MQCTL_SECRET_KEY": account.secret_key}
        )
        cmd = [
            sys.executable,
            "-m",
            "mqctl",
            *args,
            "-n",
            namesrv or self.tls_namesrv,
            "--timeout",
            "30",
            *flags,
        ]
        return self.run(cmd, timeout=timeout, cwd=REPO, env={**keys, **(env or {})})

    def tls_flags(self) -> list[str]:
        p = self.pki.path
        return ["--tls", "--tls-ca", str(self.pki.ca), "--tls-cert", str(p("client.pem")),
                "--tls-key", str(p("client.key"))]  # fmt: skip
