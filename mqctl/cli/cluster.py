"""The cluster flags, defined once for every command: which cluster (``--store``, ``-n``,
``--profile``, ``$NAMESRV_ADDR``) and how to talk to it (timeout, ACL keys, TLS, the RocketMQ line
to follow). ``@cluster_options()`` adds them to a command, which receives one ``Cluster``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from mqctl.cli.blocks import Flag, block, opt
from mqctl.cli.command import given
from mqctl.cli.values import timeout_seconds
from mqctl.ops.clusterspec import ClusterSpec

if TYPE_CHECKING:
    from mqctl.backends.open import BackendOptions

F = TypeVar("F", bound=Callable[..., Any])

StoreOpt = Annotated[
    list[str] | None,
    opt(
        "--store",
        "-S",
        metavar="NAME=PATH",
        help="A broker store: broker name = store root (the directory holding config/, consumequeue/, "
        "commitlog/). Repeat for each broker of the cluster. Read-only; never takes the broker's lock.",
    ),
]
ProfileOpt = Annotated[
    str | None,
    opt(
        "--profile",
        envvar="MQCTL_PROFILE",
        help="A named cluster from the config file ($MQCTL_CONFIG or ~/.config/mqctl/config.toml).",
    ),
]
NamesrvOpt = Annotated[
    str | None,
    opt(
        "--namesrvAddr",
        "-n",
        help="A live cluster: its name servers 'host:port;host:port' (default: $NAMESRV_ADDR, as mqadmin).",
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
    opt(
        "--access-key",
        metavar="KEY",
        envvar="MQCTL_ACCESS_KEY",
        help="Live cluster with ACL: sign every request with this access key ($MQCTL_ACCESS_KEY, or a profile).",
    ),
]
SecretKeyOpt = Annotated[
    str | None,
    opt(
        "--secret-key",
        metavar="SECRET",
        envvar="MQCTL_SECRET_KEY",
        help="The secret key for --access-key. Prefer $MQCTL_SECRET_KEY or a profile: a flag shows in ps. "
        "Never printed.",
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
    opt(
        "--tls-ca",
        metavar="FILE",
        help="TLS: trust the CA certificates of this PEM file (implies --tls).",
    ),
]
TlsCertOpt = Annotated[
    str | None,
    opt(
        "--tls-cert",
        metavar="FILE",
        help="TLS: present this client certificate (PEM) to servers that ask for one (mutual TLS; implies --tls).",
    ),
]
TlsKeyOpt = Annotated[
    str | None,
    opt(
        "--tls-key",
        metavar="FILE",
        help="The unencrypted private key (PEM) of --tls-cert.",
    ),
]
MqadminVersionOpt = Annotated[
    str | None,
    opt(
        "--mqadmin-version",
        metavar="X.Y.Z",
        envvar="MQCTL_MQADMIN_VERSION",
        help="The RocketMQ release whose mqadmin layout (-o plain) and broker rules to follow, e.g. "
        "4.9.7 or 5.3.3. Default: live, what the brokers answer with; a store, what its files say "
        "(4.x writes no stateVersion), else 5.x.",
    ),
]
ClusterNameOpt = Annotated[
    str | None,
    opt("--cluster", "-c", help="Cluster name (accepted for mqadmin compatibility)."),
]


class Cluster(ClusterSpec):
    """The cluster flags of one command line: ``target()``, ``options()`` and ``open()`` are
    ``ops.clusterspec``'s; TLS without verification is said on stderr, once per command. Its
    fields, ``__init__`` and frozenness are ClusterSpec's (no second record class at start-up)."""

    def options(self, *, ignore_abort_file: bool = False) -> BackendOptions:
        global _warned
        opts = super().options(ignore_abort_file=ignore_abort_file)
        if _warned:
            return opts
        from mqctl.cli.errors import warn

        idle = [flag for name, flag in _LIVE_ONLY if given(name, environment=False)]
        insecure = opts.tls and opts.tls_insecure
        if not (idle or insecure):
            return opts
        _warned = True
        if self._reads_files():  # no connection: TLS settings (a profile's too) unused
            if idle:
                them = "them" if len(idle) > 1 else "it"
                warn(f"{', '.join(idle)}: for a live cluster (-n); store files are read without {them}")
        elif insecure:
            warn("TLS without verification (--tls-insecure): any server certificate is accepted")
        return opts

    def _reads_files(self) -> bool:
        """The flags name store files. Named nowhere (an undo takes its journal's cluster), or
        wrongly (said by ``target()`` where it is used), they do not."""
        from mqctl.errors import MqctlError

        try:
            return self.target().kind.reads_files
        except MqctlError:
            return False


_warned = False  # once per command (a reset asks for its options more than once)
# The flags that only talk to a live cluster (a profile's or the environment's keys are not said).
_LIVE_ONLY = (
    ("timeout", "--timeout"),
    ("access_key", "--access-key"),
    ("secret_key", "--secret-key"),
    ("tls", "--tls"),
    ("tls_insecure", "--tls-insecure"),
    ("tls_ca", "--tls-ca"),
    ("tls_cert", "--tls-cert"),
    ("tls_key", "--tls-key"),
)


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
