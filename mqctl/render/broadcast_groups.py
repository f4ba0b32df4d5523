"""The groups overview's broadcasting groups: the fields they add to every row (JSON, CSV) and
what the table says of them. Their progress lives on their clients: with the clients' files
(``--client-offsets``) the row's diff total and lag time are the worst client's; without them the
brokers' numbers are meaningless and nothing is shown as lag."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mqctl.model import GroupSummary

FIELDS = ("progressOn", "worstClient", "clientFiles", "staleClients")

ON_CLIENTS = "on clients"

FOOTER = (
    "(broadcast): each client keeps its own offsets (offsets.json): diff total and lag time are the worst "
    "client's when their files are given (--client-offsets PATH), else 'on clients'; "
    "consumerProgress -g GROUP says what the brokers know of it"
)


def unknown(g: GroupSummary) -> bool:
    """A broadcasting group without its clients' files: its lag is not known here."""
    return g.offsets_on_clients and not g.client_files


def values(g: GroupSummary) -> dict[str, Any]:
    on = g.offsets_on_clients
    return {
        "progressOn": "clients" if on else "broker",
        "worstClient": g.worst_client,
        "clientFiles": g.client_files if on else None,
        "staleClients": g.stale_clients if on else None,
    }
