"""Driver-side inputs of lagReport: small config files and the subscription map (no Spark here).

The big data (ConsumeQueue files) is read by Spark; what is read here is a few kilobytes per
broker: consumerOffset.json, topics.json and the commit log's first segment name. A live
cluster's answers arrive as a ``LiveSnapshot`` of model objects, fetched by the CLI.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from mqctl.errors import MqctlError, UsageError
from mqctl.fsio import probe_create
from mqctl.model import SubExpr, parse_subexpr
from mqctl.records import record
from mqctl.store.offsets import COMMITTED, split_offset_key

if TYPE_CHECKING:
    from mqctl.model import GroupOverview, MessageQueue

__all__ = [
    "BrokerInput",
    "ConsumerQueue",
    "CqFile",
    "check_dataset_target",
    "LiveSnapshot",
    "is_local_master",
    "local_spark",
    "consumer_queues",
    "load_broker_input",
    "list_cq_files",
    "load_subscriptions",
    "local_path",
    "parse_subscriptions",
    "unreported_groups",
]

Subscriptions = Mapping[str, Mapping[str, SubExpr]]  # group -> topic -> expression


@record(frozen=True, slots=True)
class BrokerInput:
    """What the job needs to know about one broker's store before Spark reads its CQ files."""

    broker_name: str
    root: Path
    commitlog_dirs: tuple[str, ...]
    commitlog_min: int
    offsets: Mapping[str, Mapping[int, int]]  # "topic@group" -> {queueId: committed offset}
    read_queue_nums: Mapping[str, int]  # topic -> readQueueNums, only topics with a config
    warnings: tuple[str, ...] = ()
    # The groups consumerProgress's overview lists for this broker: of a retry topic, of the
    # offset table or of the subscription-group table (system groups left out).
    groups: frozenset[str] = frozenset()


@record(frozen=True, slots=True)
class ConsumerQueue:
    """One (broker, group, topic, queue) the report covers; committed is -1 when none is stored."""

    broker_name: str
    group: str
    topic: str
    queue_id: int
    committed: int
    sub: SubExpr | None


@record(frozen=True, slots=True)
class LiveSnapshot:
    """A live cluster as lagReport -n sees it, fetched on the driver (model objects only).

    ``overviews``: every group with its consume stats; each QueueStat's ``min_offset`` (None: the
    broker did not answer) and ``committed`` (None: offset table not read) are filled in.
    ``oldest``: store time of the message at (queue, first unconsumed offset), only where one
    was found; None when lag time was not asked for.
    """

    overviews: Sequence[GroupOverview]
    oldest: Mapping[tuple[MessageQueue, int], int] | None = None

    @property
    def queue_count(self) -> int:
        return sum(len(ov.stats.queues) for ov in self.overviews if ov.stats is not None)

    @property
    def unreported(self) -> list[str]:
        """Groups of the overview whose consume stats have no queue: no rows in the report."""
        return sorted(ov.ref.name for ov in self.overviews if ov.stats is not None and not ov.stats.queues)


@record(frozen=True, slots=True)
class CqFile:
    """One ConsumeQueue file found on the driver (--cq-read direct): fileStart is the queue
    index of its first slot (the 20-digit file name / 20)."""

    broker_name: str
    topic: str
    queue_id: int
    file_start: int
    path: str


def list_cq_files(broker_name: str, root: str, topics: Iterable[str]) -> list[CqFile]:
    """The CQ files of these topics under a local store root: the files binaryFile's glob
    ``consumequeue/{topics}/*/[0-9]*`` selects and lagReport keeps (queue directories of digits,
    file names of 20 digits), in name order."""
    import os
    import re

    name = re.compile(r"[0-9]{20}")
    out: list[CqFile] = []
    for topic in sorted(set(topics)):
        try:
            qdirs = sorted(e.name for e in os.scandir(os.path.join(root, "consumequeue", topic)))
        except (FileNotFoundError, NotADirectoryError):
            continue  # a topic nobody ever wrote to on this broker
        for q in qdirs:
            qdir = os.path.join(root, "consumequeue", topic, q)
            if not q.isdecimal() or not os.path.isdir(qdir):
                continue
            for f in sorted(os.listdir(qdir)):
                if name.fullmatch(f) and os.path.isfile(os.path.join(qdir, f)):
                    out.append(CqFile(broker_name, topic, int(q), int(f) // 20, os.path.join(qdir, f)))
    return out


# local, local[4], local[*], local[4,2] (with task retries), local[*,2]
_LOCAL_MASTER = re.compile(r"local(\[(\d+|\*)(,\d+)?\])?")


def is_local_master(master: str | None) -> bool:
    """local, local[N], local[*] (and local[N,F]); None is mqctl's default, local[*]."""
    return master is None or _LOCAL_MASTER.fullmatch(master.strip()) is not None


def local_spark(master: str | None) -> bool:
    """Spark runs on this machine, started by mqctl: a local master and no spark-submit around it
    (which chooses the master and, on a cluster, the filesystem a plain path names)."""
    return is_local_master(master) and "PYSPARK_GATEWAY_PORT" not in os.environ


def local_path(uri: str) -> str | None:
    """The local filesystem path a Spark path names: ``file:`` URIs and plain paths (absolute or
    relative, existing or not); None for other schemes (hdfs://, s3a://, ...)."""
    if uri.startswith("file://"):
        return uri[len("file://") :]
    if uri.startswith("file:"):
        return uri[len("file:") :]
    if "://" in uri or ":" in uri.split("/", 1)[0]:
        return None
    return uri


def check_history_source(history: str) -> None:
    """--status reads the --history dataset: a local directory that is not there is refused."""
    local = local_path(history)
    if local is not None and not os.path.isdir(local):
        raise UsageError(f"--history {history}: no such directory", "lagReport ... --history DIR writes one")


def check_dataset_target(
    flag: str, target: str, stores: Iterable[str], *, must_be_new: bool, here: bool = False
) -> None:
    """Before any work: refuse a dataset directory inside a broker store root (mqctl writes a
    store only through the safe offset write) and, when ``must_be_new``, one that exists (Spark
    would refuse it only after the whole job). ``here``: Spark writes this machine's filesystem
    (``local_spark``), so a directory that cannot be created there is refused too. Paths Spark
    reaches through another scheme (hdfs://, s3a://) are not checked here."""
    local = local_path(target)
    if local is None:
        return
    resolved = Path(local).expanduser().resolve()
    for store in stores:
        root = local_path(store)
        if root is not None and resolved.is_relative_to(Path(root).expanduser().resolve()):
            raise UsageError(
                f"{flag} {target}: refusing to write inside the broker store {root}",
                f"write the dataset somewhere else, e.g. {flag} ./lag-report",
            )
    if must_be_new and (resolved.exists() or Path(local).is_symlink()):
        raise UsageError(
            f"{flag} {target}: it exists; nothing computed, nothing written",
            "pass --overwrite to replace it, or choose another directory",
        )
    if here:
        _check_creatable(flag, target, resolved)


def _check_creatable(flag: str, target: str, path: Path) -> None:
    """The directory, or where it does not exist yet the nearest one above it (Spark creates the
    rest), takes a new entry: /proc, a read-only mount, no permission, or a file in the way is
    said before the job instead of by Spark after it."""
    where = path
    try:
        while not where.exists() and where != where.parent:
            where = where.parent
        if not where.is_dir():
            raise UsageError(
                f"{flag} {target}: {where} is not a directory; nothing computed, nothing written"
            )
        probe_create(where)
    except OSError as exc:
        raise MqctlError(
            f"{flag} {target}: cannot create anything in {where}: {exc.strerror or exc}; "
            "nothing computed, nothing written",
            "choose a directory this user can write to",
        ) from None


def load_broker_input(broker_name: str, root: Path) -> BrokerInput:
    from mqctl.store.commitlog import CommitLog
    from mqctl.store.layout import StoreLayout
    from mqctl.store.metadata import load_subscription_groups, load_topics
    from mqctl.store.offsets import load_consumer_offsets

    layout = StoreLayout.open(Path(root), broker_name)
    offsets = load_consumer_offsets(layout.config_dir)
    topics = load_topics(layout.config_dir)
    configured = load_subscription_groups(layout.config_dir)
    with CommitLog(layout.commitlog_dirs) as cl:
        cl_min = cl.min_offset
    loaded = (offsets.warning, topics.warning, configured.warning)
    warnings = tuple(f"{broker_name}: {w}" for w in loaded if w)
    return BrokerInput(
        broker_name=broker_name,
        root=layout.root.resolve(),
        commitlog_dirs=tuple(str(d) for d in layout.commitlog_dirs),
        commitlog_min=cl_min,
        offsets={k: dict(v) for k, v in offsets.table.offsets.items()},
        read_queue_nums={name: cfg.read_queue_nums for name, cfg in (topics.value or {}).items()},
        warnings=warnings,
        groups=_overview_groups(offsets.table.offsets, topics.value or {}, configured.value or {}),
    )


def _overview_groups(
    offsets: Iterable[str], topics: Iterable[str], configured: Iterable[str]
) -> frozenset[str]:
    """The groups the store overview lists (backends/store.py): retry topics, offset keys,
    subscription groups other than the broker's own."""
    from mqctl.model import group_of_retry_topic, is_system_group

    out = {g for t in topics if (g := group_of_retry_topic(t))}
    out |= {
        parts[1] for key in offsets if (parts := split_offset_key(key)) and parts[1] and parts[2] == COMMITTED
    }
    return frozenset(out | {g for g in configured if not is_system_group(g)})


def unreported_groups(brokers: Iterable[BrokerInput], queues: Iterable[ConsumerQueue]) -> list[str]:
    """Groups the overview lists that have no queue row: no committed offset on a topic a broker
    has a config for (GET_CONSUME_STATS reports no queue for them either)."""
    listed = set().union(*(b.groups for b in brokers))
    return sorted(listed - {q.group for q in queues})


def consumer_queues(
    brokers: Iterable[BrokerInput], subscriptions: Subscriptions | None
) -> list[ConsumerQueue]:
    """The rows GET_CONSUME_STATS would report, for every group of every broker.

    Per broker: every ``topic@group`` key of the offset table whose topic has a config there,
    with all queue ids 0..readQueueNums-1 (queues without a stored offset read as -1).
    """
    out: list[ConsumerQueue] = []
    for b in brokers:
        for key, by_queue in b.offsets.items():
            parts = split_offset_key(key)
            if parts is None or parts[2] != COMMITTED:
                continue  # broadcast pull offsets (topic@group@broadcast) are not committed offsets
            topic, group, _ = parts
            nums = b.read_queue_nums.get(topic)
            if nums is None:
                continue
            sub = None if subscriptions is None else subscriptions.get(group, {}).get(topic)
            for qid in range(nums):
                out.append(ConsumerQueue(b.broker_name, group, topic, qid, int(by_queue.get(qid, -1)), sub))
    return out


def parse_subscriptions(doc: object, what: str) -> dict[str, dict[str, SubExpr]]:
    if not isinstance(doc, Mapping):
        raise UsageError(f"{what}: expected a table of group -> topic -> subscription expression")
    out: dict[str, dict[str, SubExpr]] = {}
    for group, topics in doc.items():
        if not isinstance(topics, Mapping):
            raise UsageError(f"{what}: group {group!r} must map topic names to expressions")
        subs: dict[str, SubExpr] = {}
        for topic, expr in topics.items():
            if not isinstance(expr, str):
                raise UsageError(
                    f"{what}: {group}/{topic}: the expression must be a string like 'TagA || TagB'"
                )
            subs[str(topic)] = parse_subexpr(expr)
        out[str(group)] = subs
    return out


def load_subscriptions(path: Path) -> dict[str, dict[str, SubExpr]]:
    """Read a JSON or TOML file ``{group: {topic: "TagA || TagB"}}`` (TOML when named *.toml)."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise UsageError(f"--subscriptions {path}: {e.strerror or e}") from None
    if Path(path).suffix.lower() == ".toml":
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover - 3.10 only
            import tomli as tomllib
        try:
            doc: object = tomllib.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
            raise UsageError(f"--subscriptions {path}: not valid TOML: {e}") from None
    else:
        try:
            doc = json.loads(data)
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise UsageError(
                f"--subscriptions {path}: not valid JSON: {e}", "name the file *.toml for TOML"
            ) from None
    return parse_subscriptions(doc, str(path))
