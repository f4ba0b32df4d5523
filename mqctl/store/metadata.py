"""``config/topics.json`` and ``config/subscriptionGroup.json`` (spec 2.3, 2.4)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mqctl.errors import StoreCorruptError
from mqctl.model import SubscriptionGroup, TopicConfig
from mqctl.model.queues import JAVA_INT, JAVA_LONG
from mqctl.store.offsets import LoadedConfig, as_int, decode_document, load_config_file

__all__ = [
    "SUBSCRIPTION_GROUP_FILE",
    "TOPICS_FILE",
    "decode_subscription_groups",
    "decode_topics",
    "default_group_config",
    "load_subscription_groups",
    "load_topics",
    "subscription_group",
]

TOPICS_FILE = "topics.json"
SUBSCRIPTION_GROUP_FILE = "subscriptionGroup.json"

_INT32 = JAVA_INT


def _as_bool(value: Any, what: str) -> bool:
    if isinstance(value, bool):
        return value
    # fastjson also reads "true"/"false" strings into boolean fields.
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise StoreCorruptError(f"{what}: expected true or false, got {value!r}")


def _table(doc: dict[Any, Any], prop: str, what: str) -> dict[Any, Any]:
    table = doc.get(prop)
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise StoreCorruptError(f"{what}: {prop} is not an object")
    return table


# ---------------------------------------------------------------------------------------------
# topics.json


def _topic(name: str, raw: Any, what: str) -> TopicConfig:
    if not isinstance(raw, dict):
        raise StoreCorruptError(f"{what}: topic {name!r} is not an object")
    where = f"{what}: topic {name!r}"
    attributes = raw.get("attributes") or {}
    if not isinstance(attributes, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in attributes.items()
    ):
        raise StoreCorruptError(f"{where}: attributes is not a string map")
    filter_type = raw.get("topicFilterType", "SINGLE_TAG")
    if not isinstance(filter_type, str):
        raise StoreCorruptError(f"{where}: topicFilterType is not a string")
    # Missing fields take TopicConfig's Java defaults, which is what fastjson leaves them at.
    return TopicConfig(
        name=name,
        read_queue_nums=as_int(raw.get("readQueueNums", 16), f"{where}: readQueueNums", _INT32),
        write_queue_nums=as_int(raw.get("writeQueueNums", 16), f"{where}: writeQueueNums", _INT32),
        perm=as_int(raw.get("perm", 6), f"{where}: perm", _INT32),
        order=_as_bool(raw.get("order", False), f"{where}: order"),
        topic_filter_type=filter_type,
        topic_sys_flag=as_int(raw.get("topicSysFlag", 0), f"{where}: topicSysFlag", _INT32),
        attributes=dict(attributes),
    )


def decode_topics(data: bytes, what: str = TOPICS_FILE) -> dict[str, TopicConfig]:
    """topic name -> TopicConfig, in file order; 4.x files (no attributes) read with ``{}``."""
    doc = decode_document(data, what)
    out: dict[str, TopicConfig] = {}
    for name, raw in _table(doc, "topicConfigTable", what).items():
        if not isinstance(name, str):
            raise StoreCorruptError(f"{what}: topic key {name!r} is not a string")
        out[name] = _topic(name, raw, what)
    return out


def decode_topic_names(data: bytes, what: str = TOPICS_FILE) -> list[str]:
    """The topic names of topics.json (or GET_ALL_TOPIC_CONFIG's body), their configs unread."""
    names = list(_table(decode_document(data, what), "topicConfigTable", what))
    for name in names:
        if not isinstance(name, str):
            raise StoreCorruptError(f"{what}: topic key {name!r} is not a string")
    return names


def load_topics(
    config_dir: Path, *, retries: int = 3, retry_delay: float | None = None
) -> LoadedConfig[dict[str, TopicConfig]]:
    """topics.json with the broker's ``.bak`` rule; ``value`` is None when the broker would start empty."""
    return load_config_file(
        Path(config_dir) / TOPICS_FILE, decode_topics, retries=retries, retry_delay=retry_delay
    )


# ---------------------------------------------------------------------------------------------
# subscriptionGroup.json


def default_group_config(group: str) -> dict[str, Any]:
    """A 5.x ``SubscriptionGroupConfig`` with the class defaults, properties in fastjson's order."""
    return {
        "attributes": {},
        "brokerId": 0,
        "consumeBroadcastEnable": True,
        "consumeEnable": True,
        "consumeFromMinEnable": True,
        "consumeMessageOrderly": False,
        "consumeTimeoutMinute": 15,
        "groupName": group,
        "groupRetryPolicy": {"type": "CUSTOMIZED"},
        "groupSysFlag": 0,
        "notifyConsumerIdsChangedEnable": True,
        "retryMaxTimes": 16,
        "retryQueueNums": 1,
        "whichBrokerWhenConsumeSlowly": 1,
    }


def subscription_group(
    name: str, props: Mapping[str, Any], what: str = SUBSCRIPTION_GROUP_FILE
) -> SubscriptionGroup:
    """One group's properties -> SubscriptionGroup; missing ones take the Java class defaults."""
    where = f"{what}: group {name!r}"
    defaults = default_group_config(name)

    def num(key: str, bounds: tuple[int, int] = _INT32) -> int:
        value = props.get(key, defaults[key])
        if isinstance(value, float) and value.is_integer():
            value = int(value)  # fastjson casts an integral number into an int field
        return as_int(value, f"{where}: {key}", bounds)

    def flag(key: str) -> bool:
        return _as_bool(props.get(key, defaults[key]), f"{where}: {key}")

    return SubscriptionGroup(
        name=name,
        consume_enable=flag("consumeEnable"),
        consume_broadcast_enable=flag("consumeBroadcastEnable"),
        consume_message_orderly=flag("consumeMessageOrderly"),
        retry_queue_nums=num("retryQueueNums"),
        retry_max_times=num("retryMaxTimes"),
        broker_id=num("brokerId", JAVA_LONG),
        group_sys_flag=num("groupSysFlag"),
    )


def decode_subscription_groups(data: bytes, what: str = SUBSCRIPTION_GROUP_FILE) -> dict[str, dict[str, Any]]:
    """group name -> its SubscriptionGroupConfig properties as written (4.x or 5.x)."""
    doc = decode_document(data, what)
    out: dict[str, dict[str, Any]] = {}
    for name, raw in _table(doc, "subscriptionGroupTable", what).items():
        if not isinstance(name, str) or not isinstance(raw, dict):
            raise StoreCorruptError(f"{what}: subscription group {name!r} is not a name -> object entry")
        out[name] = dict(raw)
    return out


def load_subscription_groups(
    config_dir: Path, *, retries: int = 3, retry_delay: float | None = None
) -> LoadedConfig[dict[str, dict[str, Any]]]:
    return load_config_file(
        Path(config_dir) / SUBSCRIPTION_GROUP_FILE,
        decode_subscription_groups,
        retries=retries,
        retry_delay=retry_delay,
    )
