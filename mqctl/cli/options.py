"""Shared option aliases (mqadmin's short letters), output-format choice and backend opening."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TextIO

import typer

from mqctl.errors import UsageError

if TYPE_CHECKING:
    from mqctl.backends.base import Backend
    from mqctl.backends.open import BackendOptions
    from mqctl.config import Profile
    from mqctl.model import BackendTarget


class OutputFormat(str, Enum):
    table = "table"
    plain = "plain"
    json = "json"
    csv = "csv"


def resolve_format(fmt: OutputFormat | None) -> OutputFormat:
    """table on a terminal, mqadmin's plain layout when piped (scripts written for mqadmin keep working)."""
    if fmt is not None:
        return fmt
    return OutputFormat.table if sys.stdout.isatty() else OutputFormat.plain


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
TlsOpt = Annotated[bool, typer.Option("--tls", help="Live cluster: talk TLS to name servers and brokers.")]
TlsInsecureOpt = Annotated[
    bool, typer.Option("--tls-insecure", help="With --tls: do not verify certificates (test clusters only).")
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
OutputOpt = Annotated[
    OutputFormat | None,
    typer.Option(
        "--output",
        "-o",
        help="table (default on a terminal), plain (mqadmin's layout, default when piped), json or csv.",
        show_default=False,
        case_sensitive=False,
    ),
]
OutputLongOpt = Annotated[
    OutputFormat | None,
    typer.Option(
        "--output",
        help="table (default on a terminal), plain (mqadmin's layout, default when piped), json or csv.",
        show_default=False,
        case_sensitive=False,
    ),
]
ClusterOpt = Annotated[
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


def cluster_target(store: list[str] | None, profile: str | None, namesrv: str | None) -> BackendTarget:
    """The cluster the user named: --store, else -n, else --profile, else $NAMESRV_ADDR (as
    mqadmin reads it), else the config file's default profile."""
    from mqctl.model import BackendKind, BackendTarget

    if store and namesrv:
        raise UsageError("-n/--namesrvAddr and --store name two different clusters: give one of them")
    if store:
        return BackendTarget(
            BackendKind.STORE, tuple((n, str(p)) for n, p in parse_store_specs(store).items())
        )
    if namesrv:
        return BackendTarget(BackendKind.LIVE, namesrv=namesrv.strip())
    if not profile and os.environ.get("NAMESRV_ADDR", "").strip():
        return BackendTarget(BackendKind.LIVE, namesrv=os.environ["NAMESRV_ADDR"].strip())
    prof = _profile(profile)
    if prof.stores:
        return BackendTarget(BackendKind.STORE, tuple((n, str(p)) for n, p in prof.stores.items()))
    if prof.namesrv:
        return BackendTarget(BackendKind.LIVE, namesrv=prof.namesrv)
    raise UsageError(
        f"profile {prof.name!r} names no cluster",
        'add a [profiles.NAME.stores] table or namesrv = "host:9876"',
    )


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
class LiveOptions:
    """The live-cluster flags every command takes (see TimeoutOpt and its neighbours)."""

    timeout: float = 10.0
    access_key: str | None = field(default=None, repr=False)
    secret_key: str | None = field(default=None, repr=False)
    tls: bool = False
    tls_insecure: bool = False


def backend_options(
    live: LiveOptions,
    profile: str | None,
    *,
    ignore_abort_file: bool = False,
    mqadmin_version: str | None = None,
) -> BackendOptions:
    """Flags first, then the profile's keys and TLS switch (a profile keeps a secret out of ps)."""
    from mqctl.backends.open import BackendOptions

    if live.timeout <= 0:
        raise UsageError(f"--timeout {live.timeout}: expected a positive number of seconds")
    version = None
    if mqadmin_version:
        from mqctl.model.versions import version_ordinal

        try:
            version = version_ordinal(mqadmin_version)
        except ValueError as exc:
            raise UsageError(f"--mqadmin-version: {exc}") from None
    access, secret, tls = live.access_key, live.secret_key, live.tls
    if profile and not (access and secret):
        prof = _profile(profile)
        access, secret, tls = access or prof.access_key, secret or prof.secret_key, tls or prof.tls
    return BackendOptions(
        ignore_abort_file=ignore_abort_file,
        timeout=live.timeout,
        access_key=access,
        secret_key=secret,
        tls=tls or live.tls_insecure,
        tls_insecure=live.tls_insecure,
        version=version,
    )


def open_backend(
    store: list[str] | None,
    profile: str | None,
    namesrv: str | None = None,
    options: BackendOptions | None = None,
) -> Backend:
    """The backend the user asked for (see ``cluster_target``), opened by the one shared opener."""
    from mqctl.backends.open import open_backend as open_target

    return open_target(cluster_target(store, profile, namesrv), options)


def emit(
    fmt: OutputFormat,
    out: TextIO,
    *,
    plain: Callable[[TextIO], None],
    table: Callable[[TextIO], None],
    json_doc: Callable[[], dict],
    csv: Callable[[], tuple[Sequence[str], Iterable[Sequence[object]]]],
    headers: bool = True,
) -> None:
    """Write one result in the chosen format; each renderer is only called (and imported) if chosen."""
    if fmt is OutputFormat.plain:
        plain(out)
    elif fmt is OutputFormat.json:
        from mqctl.render.jsonout import write_json

        write_json(json_doc(), out)
    elif fmt is OutputFormat.csv:
        from mqctl.render.csvout import write_csv

        columns, rows = csv()
        write_csv(columns if headers else None, rows, out)
    else:
        table(out)
    out.flush()
