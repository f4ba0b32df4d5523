"""mqctl consumerConnection — a group's online clients and subscriptions (a live cluster)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from mqctl.cli.errors import handle_errors, warn
from mqctl.cli.options import (
    AccessKeyOpt,
    LiveOptions,
    NamesrvOpt,
    OutputOpt,
    ProfileOpt,
    SecretKeyOpt,
    StoreOpt,
    TimeoutOpt,
    TlsInsecureOpt,
    TlsOpt,
    backend_options,
    emit,
    open_backend,
    resolve_format,
)

HELP = """Query a consumer group's connections: per client its id, address, language and version; the
group's subscriptions (topic, expression); consume type, message model, consume-from-where.

Connections live only in a running broker's memory: this needs a live cluster (-n or
$NAMESRV_ADDR); on a store (--store) it exits 7 saying so. A group with no client online exits 3
with one line saying so (mqadmin prints a stack trace and exits 0).

mqadmin equivalent: mqadmin consumerConnection -g GROUP [-b BROKER_ADDR]"""

_GroupOpt = Annotated[
    str, typer.Option("--consumerGroup", "-g", help="Consumer group name.", show_default=False)
]
_BrokerAddrOpt = Annotated[
    str | None,
    typer.Option(
        "--brokerAddr",
        "-b",
        help="Accepted for mqadmin compatibility (any broker answers).",
        show_default=False,
    ),
]
_NoHeadersOpt = Annotated[
    bool, typer.Option("--no-headers", help="plain and csv: leave out the header line.")
]


@handle_errors
def consumer_connection(
    group: _GroupOpt,
    broker_addr: _BrokerAddrOpt = None,
    no_headers: _NoHeadersOpt = False,
    store: StoreOpt = None,
    profile: ProfileOpt = None,
    namesrv: NamesrvOpt = None,
    timeout: TimeoutOpt = 10.0,
    access_key: AccessKeyOpt = None,
    secret_key: SecretKeyOpt = None,
    tls: TlsOpt = False,
    tls_insecure: TlsInsecureOpt = False,
    output: OutputOpt = None,
) -> None:
    from mqctl.ops.connection import consumer_connection as ask
    from mqctl.render import connection as render

    options = backend_options(LiveOptions(timeout, access_key, secret_key, tls, tls_insecure), profile)
    with open_backend(store, profile, namesrv, options) as backend:
        conn = ask(backend, group.strip())
        for w in backend.take_warnings():
            warn(str(w))
    emit(
        resolve_format(output),
        sys.stdout,
        plain=lambda o: render.plain(conn, o, headers=not no_headers),
        table=lambda o: render.table(conn, o),
        json_doc=lambda: render.json_doc(conn),
        csv=lambda: (render.CSV_COLUMNS, render.csv_rows(conn)),
        headers=not no_headers,
    )


consumer_connection.__doc__ = HELP
