"""A small real-format store for the --watch / --history / --why tests, with what it holds.

broker-a: Orders q0 = 8 messages (keys order-0..7, tags TagA/TagB alternating, store times
T0 + 1000 * i), q1 = 5 messages; %RETRY%G q0 = 4 messages, the third (offset 2) a retried copy of
Orders q0 offset 3 (ORIGIN_MESSAGE_ID = its offset id, reconsume times 2). G committed Orders
q0 = 3 (5 unconsumed), q1 = 5 (caught up); no committed offset on the retry topic.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from mqctl.store.offsets import OffsetTable, encode_consumer_offsets
from mqctl.store.writer import StoreWriter

T0 = 1_767_225_600_000
STORE_HOST = ("127.0.0.1", 10911)


@dataclass
class WatchStore:
    root: Path
    msg_ids: dict[int, str]  # Orders q0 offset -> offset message id
    uniq_keys: dict[int, str]

    def args(self) -> list[str]:
        return ["--store", f"broker-a={self.root}"]

    def commit(self, q0: int, q1: int = 5) -> None:
        """Rewrite consumerOffset.json as a broker's flush does (temp file, then rename)."""
        table = OffsetTable(offsets={"Orders@G": {0: q0, 1: q1}})
        path = self.root / "config" / "consumerOffset.json"
        tmp = path.with_name("consumerOffset.json.tmp")
        tmp.write_bytes(encode_consumer_offsets(table))
        os.replace(tmp, path)


def offset_msg_id(phys: int) -> str:
    """Store host 127.0.0.1:10911 + commit-log offset, upper-case hex (MessageDecoder.createMessageId)."""
    return (bytes([127, 0, 0, 1]) + (10911).to_bytes(4, "big") + phys.to_bytes(8, "big")).hex().upper()


def build(root: Path) -> WatchStore:
    w = StoreWriter(root, broker_name="broker-a", commitlog_file_size=64 * 1024, store_host=STORE_HOST)
    w.create_topic("Orders", queues=2)
    w.create_topic("%RETRY%G", queues=1)
    w.create_group("G")
    ids, uniq = {}, {}
    for i in range(8):
        put = w.put(
            "Orders",
            0,
            f"order {i}".encode(),
            tags="TagA" if i % 2 == 0 else "TagB",
            keys=f"order-{i}",
            store_timestamp=T0 + 1000 * i,
            properties={"UNIQ_KEY": f"UNIQ{i:04d}"},
        )
        ids[i], uniq[i] = offset_msg_id(put.phys), f"UNIQ{i:04d}"
    for i in range(5):
        w.put("Orders", 1, b"q1", keys=f"q1-{i}", store_timestamp=T0 + 9000 + i)
    for i in range(4):
        props = {"RETRY_TOPIC": "Orders"}
        if i == 2:
            props.update({"ORIGIN_MESSAGE_ID": ids[3], "UNIQ_KEY": uniq[3]})
        w.put("%RETRY%G", 0, b"retry", store_timestamp=T0 + 20_000 + i, properties=props, reconsume_times=i)
    w.commit_offset("G", "Orders", 0, 3)
    w.commit_offset("G", "Orders", 1, 5)
    w.close()
    return WatchStore(root, ids, uniq)
