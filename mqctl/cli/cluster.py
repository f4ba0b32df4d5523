"""The cluster flags, defined once for every command: which cluster (``--store``, ``-n``,
``--profile``, ``$NAMESRV_ADDR``) and how to talk to it (timeout, ACL keys, TLS, the RocketMQ line
to follow). ``@cluster_options()`` adds them to a command, which receives one ``Cluster``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from mqctl.cli.blocks import Flag, block
from mqctl.cli.values import timeout_seconds
from mqctl.errors import UsageError

if TYPE_CHECKING:
    from mqctl.backends.base import Backend
    from mqctl.backends.open import BackendOptions
    from mqctl.config import Profile
    from mqctl.model import BackendTarget

F = TypeVar("F", bound=Callable[..., Any])

StoreOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--store",
        "-S",
        metavar="NAME=PATH",
        help="A broker store: broker name = store root (the directory holding config/, consumequeue/, "
        "commitlog/). Repeat for each broker of the cluster. Read-only; never takes the broker's lock.",
        show_default=False,
    ),
]
ProfileOpt = Annotated[
    str | None,
    typer.Option(
        "--profile",
        envvar="MQCTL_PROFILE",
        help="A named cluster from the config file ($MQCTL_CONFIG or ~/.config/mqctl/config.toml).",
        show_default=False,
    ),
]
NamesrvOpt = Annotated[
    str | None,
    typer.Option(
        "--namesrvAddr",
        "-n",
        help="A live cluster: its name servers 'host:port;host:port' (default: $NAMESRV_ADDR, as mqadmin).",
        show_default=False,
    ),
]
TimeoutOpt = Annotated[
    float,
    typer.Option(
        "--timeout",
        metavar="SECONDS",
        help="Live cluster: give up after this long overall (each request also after 5 s at most).",
        callback=timeout_seconds,
    ),
]
AccessKeyOpt = Annotated[
    str | None,
    typer.Option(
        "--access-key",
        metavar="KEY",
        envvar="MQCTL_ACCESS_KEY",
        help="Live cluster with ACL: sign every request with this access key ($MQCTL_ACCESS_KEY, or a profile).",
        show_default=False,
    ),
]
SecretKeyOpt = Annotated[
    str | None,
    typer.Option(
        "--secret-key",
        metavar="SECRET",
        envvar="MQCTL_SECRET_KEY",
        help="The secret key for --access-key. Prefer $MQCTL_SECRET_KEY or a profile: a flag shows in ps. "
        "Never printed.",
        show_default=False,
        show_envvar=False,
    ),
]
TlsOpt = Annotated[
    bool,
    typer.Option(
        "--tls",
        help="Live cluster: talk TLS to name servers and brokers, verifying their certificates and names "
        "(against --tls-ca, else the system's CAs).",
    ),
]
TlsInsecureOpt = Annotated[
    bool,
    typer.Option(
        "--tls-insecure",
        help="TLS without verifying certificates or names (test clusters only; said on stderr).",
    ),
]
TlsCaOpt = Annotated[
    str | None,
    typer.Option(
        "--tls-ca",
        metavar="FILE",
        help="TLS: trust the CA certificates of this PEM file (implies --tls).",
        show_default=False,
    ),
]
TlsCertOpt = Annotated[
    str | None,
    typer.Option(
        "--tls-cert",
        metavar="FILE",
        help="TLS: present this client certificate (PEM) to servers that ask for one (mutual TLS; implies --tls).",
        show_default=False,
    ),
]
TlsKeyOpt = Annotated[
    str | None,
    typer.Option(
        "--tls-key",
        metavar="FILE",
        help="The unencrypted private key (PEM) of --tls-cert.",
        show_default=False,
    ),
]
MqadminVersionOpt = Annotated[
    str | None,
    typer.Option(
        "--mqadmin-version",
        metavar="X.Y.Z",
        envvar="MQCTL_MQADMIN_VERSION",
        help="The RocketMQ release whose mqadmin layout (-o plain) and broker rules to follow, e.g. "
        "4.9.7 or 5.3.3. Default: live, what the brokers answer with; a store, what its files say "
        "(4.x writes no stateVersion), else 5.x.",
        show_default=False,
    ),
]
ClusterNameOpt = Annotated[
    str | None,
    typer.Option(
        "--cluster", "-c", help="Cluster name (accepted for mqadmin compatibility).", show_default=False
    ),
]


def parse_store_specs(specs: list[str]) -> dict[str, Path]:
    stores: dict[str, Path] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        name, path = name.strip(), path.strip()
        if not sep or not name or not path:
            raise UsageError(f"--store {spec!r}: expected NAME=PATH, e.g. --store broker-a=/data/store")
        if name in stores:
            raise UsageError(f"--store: broker name {name!r} given twice")
        stores[name] = Path(path).expanduser()
    return stores


def _profile(profile: str | None) -> Profile:
    from mqctl.config import default_profile_name, load_profile

    name = profile or default_profile_name()
    if not name:
        raise UsageError(
            "no cluster given",
            "pass --store NAME=PATH (repeatable), -n HOST:9876, or --profile NAME (see `mqctl --help`)",
        )
    return load_profile(name)


@dataclass(frozen=True)
class Cluster:
    """The cluster flags of one command line."""

    store: list[str] | None = None
    profile: str | None = None
    namesrv: str | None = None
    timeout: float = 10.0
    access_key: str | None = field(default=None, repr=False)
    secret_key: str | None = field(default=None, repr=False)
    tls: bool = False
    tls_insecure: bool = False
    tls_ca: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    mqadmin_version: str | None = None
    name: str | None = None  # mqadmin's -c: accepted, not used

    def target(self) -> BackendTarget:
        """The cluster the user named: --store, else -n, else --profile, else $NAMESRV_ADDR (as
        mqadmin reads it), else the config file's default profile."""
        from mqctl.model import BackendKind, BackendTarget

        if self.store and self.namesrv:
            raise UsageError("-n/--namesrvAddr and --store name two different clusters: give one of them")
        if self.store:
            stores = tuple((n, str(p)) for n, p in parse_store_specs(self.store).items())
            return BackendTarget(BackendKind.STORE, stores)
        if self.namesrv:
            return BackendTarget(BackendKind.LIVE, namesrv=self.namesrv.strip())
        if not self.profile and os.environ.get("NAMESRV_ADDR", "").strip():
            return BackendTarget(BackendKind.LIVE, namesrv=os.environ["NAMESRV_ADDR"].strip())
        prof = _profile(self.profile)
        if prof.stores:
            return BackendTarget(BackendKind.STORE, tuple((n, str(p)) for n, p in prof.stores.items()))
        if prof.namesrv:
            return BackendTarget(BackendKind.LIVE, namesrv=prof.namesrv)
        raise UsageError(
            f"profile {prof.name!r} names no cluster",
            'add a [profiles.NAME.stores] table or namesrv = "host:9876"',
        )

    def options(self, *, ignore_abort_file: bool = False) -> BackendOptions:
        """Flags first, then the profile's keys and TLS switch (a profile keeps a secret out of ps)."""
        from mqctl.backends.open import BackendOptions

        version = None
        if self.mqadmin_version:
            from mqctl.model.versions import version_ordinal

            try:
                version = version_ordinal(self.mqadmin_version)
            except ValueError as exc:
                raise UsageError(f"--mqadmin-version: {exc}") from None
        prof = _profile(self.profile) if self.profile else None
        access, secret = self.access_key, self.secret_key
        if prof is not None and not (access and secret):
            access, secret = access or prof.access_key, secret or prof.secret_key
        tls = _tls(self, prof)
        return BackendOptions(
            ignore_abort_file=ignore_abort_file,
            timeout=self.timeout,
            access_key=access,
            secret_key=secret,
            version=version,
            **tls,
        )

    def open(self, *, ignore_abort_file: bool = False) -> Backend:
        """The backend of ``target()``, opened by the one shared opener (undo reopens the same way)."""
        from mqctl.backends.open import open_backend

        return open_backend(self.target(), self.options(ignore_abort_file=ignore_abort_file))


_warned_insecure = False


def _tls(flags: Cluster, prof: Profile | None) -> dict[str, Any]:
    """The TLS options: each flag, else the profile's key; any of them turns TLS on. Without
    verification it says so on stderr, once per command."""
    global _warned_insecure
    pick = {
        "tls_insecure": flags.tls_insecure or (prof is not None and prof.tls_insecure),
        "tls_ca": flags.tls_ca or (prof.tls_ca if prof else None),
        "tls_cert": flags.tls_cert or (prof.tls_cert if prof else None),
        "tls_key": flags.tls_key or (prof.tls_key if prof else None),
    }
    on = flags.tls or (prof is not None and prof.tls) or any(pick.values())
    if on and pick["tls_insecure"] and not _warned_insecure:
        from mqctl.cli.errors import warn

        warn("TLS without verification (--tls-insecure): any server certificate is accepted")
        _warned_insecure = True
    return {"tls": bool(on), **pick}


def cluster_options(
    *, timeout: float = 10.0, versioned: bool = True, mqadmin_cluster: bool = False
) -> Callable[[F], F]:
    """Add the cluster flags to a command, which then takes ``cluster: Cluster``. ``timeout``: the
    default --timeout; ``versioned``: with --mqadmin-version; ``mqadmin_cluster``: with mqadmin's -c."""
    flags = [
        Flag("store", StoreOpt),
        Flag("profile", ProfileOpt),
        Flag("namesrv", NamesrvOpt),
        Flag("timeout", TimeoutOpt, timeout),
        Flag("access_key", AccessKeyOpt),
        Flag("secret_key", SecretKeyOpt),
        Flag("tls", TlsOpt, False),
        Flag("tls_insecure", TlsInsecureOpt, False),
        Flag("tls_ca", TlsCaOpt),
        Flag("tls_cert", TlsCertOpt),
        Flag("tls_key", TlsKeyOpt),
    ]
    if versioned:
        flags.append(Flag("mqadmin_version", MqadminVersionOpt))
    if mqadmin_cluster:
        flags.append(Flag("name", ClusterNameOpt))
    return block("cluster", flags, Cluster)
