"""Broadcasting consumer groups: the offsets each client instance keeps in its own ``offsets.json``
(``LocalFileOffsetStore``), read from files gathered from the clients' hosts."""

from __future__ import annotations

from dataclasses import dataclass

from mqctl.model.queues import MessageQueue

CLIENT_ID_SEPARATOR = "@"


@dataclass(frozen=True, slots=True)
class ClientOffsets:
    """One client instance's offsets for one group, as its ``<clientId>/<group>/offsets.json`` holds them.

    ``offsets`` are (queue, next offset to consume) in the file's own order; a queue the file does
    not name has no offset (the client starts it by its consumeFromWhere). ``read_from`` is the file
    the offsets came from: ``path`` itself, or its ``.bak`` when the client would fall back to it,
    or None when neither holds any (the client starts afresh). ``mtime_ms``: when the client last
    wrote ``path`` (a running client rewrites it every persistConsumerOffsetInterval, 5 s by
    default), None when it does not exist.
    """

    group: str | None  # the <group> directory above the file (None: not laid out as the client does)
    client_id: str | None  # the <clientId> directory above that: clientIP@instanceName[@unitName]
    host: str | None  # the HOST directory the file was gathered under (HOST/.rocketmq_offsets/...)
    path: str
    read_from: str | None
    mtime_ms: int | None
    offsets: tuple[tuple[MessageQueue, int], ...]
    dialect: str | None = None  # which client line wrote the text (store.clientoffsets DIALECTS)
    warning: str | None = None  # e.g. the .bak fallback, said once

    @property
    def client_ip(self) -> str | None:
        if not self.client_id:
            return None
        return self.client_id.split(CLIENT_ID_SEPARATOR, 1)[0]

    @property
    def instance_name(self) -> str | None:
        if not self.client_id or CLIENT_ID_SEPARATOR not in self.client_id:
            return None
        return self.client_id.split(CLIENT_ID_SEPARATOR)[1]

    @property
    def fell_back(self) -> bool:
        return self.read_from is not None and self.read_from != self.path

    def offset_of(self, mq: MessageQueue) -> int | None:
        return next((off for q, off in self.offsets if q == mq), None)

    def topics(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(q.topic for q, _ in self.offsets))
