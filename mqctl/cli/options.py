"""Shared option aliases (mqadmin's short letters), output-format choice and backend opening."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TextIO

import typer

from mqctl.errors import UsageError

if TYPE_CHECKING:
    from mqctl.backends.base import Backend


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
        help="Name server list 'host:port;host:port' (a live cluster). Not available yet: use --store.",
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


def open_backend(store: list[str] | None, profile: str | None, namesrv: str | None = None) -> Backend:
    """The backend the user asked for: --store entries, else a profile, else a clear usage error."""
    from mqctl.backends.store import StoreBackend

    if store:
        return StoreBackend(parse_store_specs(store))
    if profile:
        from mqctl.config import load_profile

        prof = load_profile(profile)
        if prof.stores:
            return StoreBackend(dict(prof.stores))
        raise UsageError(f"profile {profile!r} names no stores", "add a [profiles.NAME.stores] table")
    if namesrv:
        from mqctl.errors import NotAvailableError

        raise NotAvailableError(
            "the live-cluster backend (-n/--namesrvAddr) is not available in this version",
            "point mqctl at the broker's store directory with --store NAME=PATH",
        )
    from mqctl.config import default_profile_name

    name = default_profile_name()
    if name:
        return open_backend(None, name)
    raise UsageError(
        "no cluster given", "pass --store NAME=PATH (repeatable) or --profile NAME (see `mqctl --help`)"
    )


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
