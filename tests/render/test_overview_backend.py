"""The groups overview says what the backend could not know only when it could not: a live
cluster with no group at all still draws the live columns and never claims to be a store.

Before: the table chose its columns by whether any group had clients, so `consumerProgress -n`
on a cluster without groups printed "... need a live cluster; a store cannot know them", and the
JSON document carried that note for every live answer.
"""

from __future__ import annotations

import io

from mqctl.model import BackendKind
from mqctl.render import overview

STORE_LINE = "Clients, version, type, model and TPS need a live cluster; a store cannot know them."


def _table(kind: BackendKind) -> str:
    out = io.StringIO()
    overview.views([], [], "lag", kind, headers=True).table(out)
    return out.getvalue()


def test_live_without_groups_has_the_live_columns_and_no_store_note() -> None:
    text = _table(BackendKind.LIVE)
    header = next(line for line in text.splitlines() if line.startswith("Group"))
    assert header.split() == [
        "Group",
        "Clients",
        "Version",
        "Diff",
        "Total",
        "Max",
        "Lag",
        "Time",
        "TPS",
        "Topics",
        "Brokers",
    ]
    assert STORE_LINE not in text
    assert overview.views([], [], "lag", BackendKind.LIVE, headers=True).json_doc()["note"] is None


def test_a_store_says_what_it_cannot_know() -> None:
    text = _table(BackendKind.STORE)
    header = next(line for line in text.splitlines() if line.startswith("Group"))
    assert header.split() == ["Group", "Diff", "Total", "Max", "Lag", "Time", "Topics", "Brokers"]
    assert STORE_LINE in text
    assert (
        "a store cannot know them"
        in overview.views([], [], "lag", BackendKind.STORE, headers=True).json_doc()["note"]
    )
