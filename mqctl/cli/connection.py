"""mqctl consumerConnection — needs a live cluster; a store holds no connection data."""

from __future__ import annotations

from typing import Annotated

import typer

from mqctl.cli.errors import handle_errors
from mqctl.cli.options import NamesrvOpt, OutputOpt, ProfileOpt, StoreOpt, open_backend

HELP = """Query a consumer group's connections (client id, address, language, version) and its
subscriptions.

Connections live only in a running broker's memory: on a store backend (--store) this exits 7
with a message saying so. A live-cluster backend (-n) comes in a later version.

mqadmin equivalent: mqadmin consumerConnection -g GROUP [-b BROKER_ADDR]"""


@handle_errors
def consumer_connection(
    group: Annotated[
        str, typer.Option("--consumerGroup", "-g", help="Consumer group name.", show_default=False)
    ],
    broker_addr: Annotated[
        str | None, typer.Option("--brokerAddr", "-b", help="Ask this broker directly.", show_default=False)
    ] = None,
    store: StoreOpt = None,
    profile: ProfileOpt = None,
    namesrv: NamesrvOpt = None,
    output: OutputOpt = None,
) -> None:
    with open_backend(store, profile, namesrv) as backend:
        backend.consumer_connection(group.strip())


consumer_connection.__doc__ = HELP
