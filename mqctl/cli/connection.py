"""mqctl consumerConnection — a group's online clients and subscriptions (a live cluster)."""

from __future__ import annotations

from typing import Annotated

from mqctl.cli.blocks import opt
from mqctl.cli.cluster import Cluster, cluster_options
from mqctl.cli.errors import handle_errors, warn, warn_all
from mqctl.cli.output import Output, emit, output_options

HELP = """Query a consumer group's connections: per client its id, address, language and version; the
group's subscriptions (topic, expression); consume type, message model, consume-from-where.

Connections live only in a running broker's memory: this needs a live cluster (-n or
$NAMESRV_ADDR); on a store (--store) it exits 7 saying so. A group with no client online exits 3
with one line saying so (mqadmin prints a stack trace and exits 0).

RocketMQ 5's gRPC clients connect to a rocketmq-proxy, which never registers them with the brokers:
for such a (POP) group the line says so; -b PROXY_HOST:PORT (the proxy's remoting port) asks the
proxy, which lists them (its Version column is the proxy's own version).

mqadmin equivalent: mqadmin consumerConnection -g GROUP [-b BROKER_ADDR]"""

_GroupOpt = Annotated[str, opt("--consumerGroup", "-g", help="Consumer group name.")]
_BrokerAddrOpt = Annotated[
    str | None,
    opt(
        "--brokerAddr",
        "-b",
        help="Ask this address (host:port) instead of a broker: a rocketmq-proxy's remoting port lists "
        "the gRPC clients connected to it, which no broker knows.",
    ),
]


@handle_errors
@output_options(headers=True)
@cluster_options(versioned=False)
def consumer_connection(
    group: _GroupOpt, broker_addr: _BrokerAddrOpt = None, *, cluster: Cluster, out: Output
) -> None:
    from mqctl.ops.connection import consumer_connection as ask
    from mqctl.render import connection as render

    with cluster.open() as backend:
        conn = ask(backend, group.strip(), broker_addr.strip() if broker_addr else None)
        warn_all(backend.take_warnings())
    if conn.via_proxy:
        warn(render.proxy_note(conn))
    emit(out.fmt, render.views(conn, headers=out.headers), headers=out.headers)


consumer_connection.__doc__ = HELP
