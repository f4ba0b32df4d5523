"""consumerConnection output: mqadmin's plain layout, a rich table, JSON and CSV."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from mqctl.model import version_name
from mqctl.render import Views
from mqctl.render.plain import ljust

if TYPE_CHECKING:
    from mqctl.model import ConsumerConnection

SCHEMA = "mqctl/consumerConnection/v1"


def _null(value: object) -> str:
    return "null" if value is None else str(value)


def plain(c: ConsumerConnection, out: TextIO, headers: bool = True) -> None:
    """mqadmin's printf lines (spec/mqadmin.md 5), byte for byte."""
    w = out.write
    if headers:
        w(f"{ljust('#ClientId', 36)} {ljust('#ClientAddr', 22)} {ljust('#Language', 10)} #Version\n")
    for conn in c.connections:
        w(
            f"{ljust(conn.client_id, 36)} {ljust(conn.client_addr, 22)} {ljust(conn.language, 10)} "
            f"{version_name(conn.version)}\n"
        )
    w("\nBelow is subscription:\n")
    w(f"{ljust('#Topic', 20)} #SubExpression\n")
    for s in c.subscriptions:
        w(f"{ljust(s.topic, 20)} {_null(s.sub_string)}\n")
    w("\n")
    w(f"ConsumeType: {_null(c.consume_type)}\n")
    w(f"MessageModel: {_null(c.message_model)}\n")
    w(f"ConsumeFromWhere: {_null(c.consume_from_where)}\n")


def json_doc(c: ConsumerConnection) -> dict:
    return {
        "schema": SCHEMA,
        "group": c.group,
        "clients": [
            {
                "clientId": x.client_id,
                "clientAddr": x.client_addr,
                "language": x.language,
                "version": x.version,
                "versionName": version_name(x.version),
            }
            for x in c.connections
        ],
        "subscriptions": [
            {
                "topic": s.topic,
                "expression": s.sub_string,
                "expressionType": s.expression_type,
                "tags": list(s.tags),
            }
            for s in c.subscriptions
        ],
        "consumeType": c.consume_type,
        "messageModel": c.message_model,
        "consumeFromWhere": c.consume_from_where,
    }


CSV_COLUMNS = [
    "group",
    "clientId",
    "clientAddr",
    "language",
    "version",
    "versionName",
    "consumeType",
    "messageModel",
    "consumeFromWhere",
    "subscriptions",
]


def csv_rows(c: ConsumerConnection) -> list[list]:
    subs = "; ".join(f"{s.topic}={s.sub_string}" for s in c.subscriptions)
    return [
        [
            c.group,
            x.client_id,
            x.client_addr,
            x.language,
            x.version,
            version_name(x.version),
            c.consume_type,
            c.message_model,
            c.consume_from_where,
            subs,
        ]
        for x in c.connections
    ]


def table(c: ConsumerConnection, out: TextIO) -> None:
    from mqctl.render.table import Column, TableSpec, write_table

    clients = TableSpec(
        [
            Column("Client Id"),
            Column("Address"),
            Column("Language", optional=True),
            Column("Version", optional=True, priority=1),
        ],
        [[x.client_id, x.client_addr, x.language, version_name(x.version)] for x in c.connections],
        title=f"consumerConnection {c.group}: {len(c.connections)} client(s)",
    )
    write_table(clients, out)
    subs = TableSpec(
        [Column("Topic"), Column("Expression", kind="text"), Column("Type", optional=True)],
        [[s.topic, _null(s.sub_string), _null(s.expression_type)] for s in c.subscriptions],
        title="\nsubscriptions",
        footer_lines=[
            f"\nconsume type {_null(c.consume_type)}, message model {_null(c.message_model)}, "
            f"consume from {_null(c.consume_from_where)}"
        ],
    )
    write_table(subs, out)


def proxy_note(c: ConsumerConnection) -> str:
    """What an answer from a rocketmq-proxy means (ClientActivity at the proxy builds it)."""
    version = f" ({version_name(c.via_version)})" if c.via_version is not None else ""
    return (
        f"asked at {c.via}, which is no broker of the cluster: a rocketmq-proxy listing the gRPC clients "
        f"connected to it; #Version is the proxy's own version{version}, not the client's; ConsumeType "
        "CONSUME_ACTIVELY = SimpleConsumer, CONSUME_PASSIVELY = PushConsumer, both consume in POP mode"
    )


def views(c: ConsumerConnection, *, headers: bool) -> Views:
    return Views(
        plain=lambda o: plain(c, o, headers=headers),
        table=lambda o: table(c, o),
        json_doc=lambda: json_doc(c),
        csv=lambda: (CSV_COLUMNS, csv_rows(c)),
    )
