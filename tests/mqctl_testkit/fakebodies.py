"""What the fake name server and brokers answer, from the model of fakemodel.py: the broker's
semantics of each request (remoting.md 5, mqadmin.md 2.2) and its body written by hand as a Java
broker's fastjson writes it (compact, bean properties sorted by name, MessageQueue objects and
integer ids as unquoted map keys; the name server's route in its standard-JSON form for
requesters of version >= 401). Nothing here uses mqctl's decoders or encoders.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from mqctl_testkit.fakemodel import Broker, Cluster, Online, Queue, hashset_order, tags_code

NO_ROUTE = (
    "No topic route info in name server for the topic: {}\n"
    "See https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details."
)
DATA_VERSION = '{"counter":3,"stateVersion":0,"timestamp":1767225000000}'


@dataclass
class Reply:
    code: int = 0
    remark: str | None = None
    ext: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""


def js(s: str) -> str:
    assert '"' not in s and "\\" not in s and s.isprintable(), s
    return f'"{s}"'


def jdouble(x: float) -> str:
    return repr(float(x))  # Double.toString for the plain values used here (1.5, 0.125, 0.0)


def mq(topic: str, broker: str, qid: int) -> str:
    return f'{{"brokerName":{js(broker)},"queueId":{qid},"topic":{js(topic)}}}'


def _ok(text: str) -> Reply:
    return Reply(body=text.encode())


def _int(fields: Mapping[str, str], name: str, default: int = 0) -> int:
    try:
        return int(fields.get(name, default))
    except ValueError:
        return default


# --- name server -----------------------------------------------------------------------------


def namesrv_answer(cluster: Cluster, code: int, fields: Mapping[str, str], version: int) -> Reply:
    if code == 105:
        return _route(cluster, fields.get("topic", ""), version >= 401 or "acceptStandardJsonOnly" in fields)
    if code == 106:
        table = ",".join(
            f'{js(b.name)}:{{"brokerAddrs":{{0:{js(b.addr)}}},"brokerName":{js(b.name)},'
            f'"cluster":{js(cluster.name)},"enableActingMaster":false}}'
            for b in cluster.brokers
        )
        names = ",".join(js(b.name) for b in cluster.brokers)
        return _ok(f'{{"brokerAddrTable":{{{table}}},"clusterAddrTable":{{{js(cluster.name)}:[{names}]}}}}')
    if code == 206:
        return _ok(f'{{"topicList":[{",".join(js(t) for t in hashset_order(cluster.topic_names()))}]}}')
    return Reply(3, f" request type {code} not supported")


def _route(cluster: Cluster, topic: str, standard: bool) -> Reply:
    brokers = [b for b in cluster.brokers if topic in b.topics]
    if not brokers:
        return Reply(17, NO_ROUTE.format(topic))
    zero = '"0"' if standard else "0"  # BrowserCompatible writes the broker id as a string
    datas = ",".join(
        f'{{"brokerAddrs":{{{zero}:{js(b.addr)}}},"brokerName":{js(b.name)},"cluster":{js(cluster.name)},'
        f'"enableActingMaster":false}}'
        for b in brokers
    )
    queues = ",".join(
        f'{{"brokerName":{js(b.name)},"perm":{t.perm},"readQueueNums":{t.read_nums},"topicSysFlag":0,'
        f'"writeQueueNums":{t.write_nums}}}'
        for b in brokers
        for t in [b.topics[topic]]
    )
    return _ok(f'{{"brokerDatas":[{datas}],"filterServerTable":{{}},"queueDatas":[{queues}]}}')


# --- broker ----------------------------------------------------------------------------------


def broker_answer(cluster: Cluster, b: Broker, code: int, fields: Mapping[str, str]) -> Reply:
    handlers = {
        208: _consume_stats,
        202: _topic_stats,
        203: _connections,
        307: _running_info,
        29: _search_offset,
        321: _query_cq,
        33: _view_message,
        43: _all_offsets,
        201: _all_groups,
        21: _all_topics,
        14: _query_offset,
        15: _update_offset,
        222: _reset_offset,
        26: _broker_config,
        345: _query_subscription,
    }
    handler = handlers.get(code)
    if handler is None:
        return Reply(3, f" request type {code} not supported")
    return handler(cluster, b, fields)


def _queue(b: Broker, fields: Mapping[str, str]) -> Queue | None:
    t = b.topics.get(fields.get("topic", ""))
    qid = _int(fields, "queueId", -1)
    return t.queues[qid] if t is not None and 0 <= qid < len(t.queues) else None


def _stats_topics(cluster: Cluster, b: Broker, group: str) -> list[str]:
    """The topics both stats requests walk for a group (no topic asked): its committed ones that
    have a config here, less those an online group does not subscribe to."""
    topics = [t for t in b.offsets.get(group, {}) if t in b.topics]
    online = cluster.online.get(group)
    return [t for t in topics if t in online.subscriptions] if online is not None else topics


def _wrapper(b: Broker, group: str, topic: str, qid: int, *, clamp: bool, pull: bool) -> str:
    q = b.topics[topic].queues[qid]
    committed = b.offsets.get(group, {}).get(topic, {}).get(qid, -1)
    consumer = max(committed, 0) if clamp else committed
    last = q.time_at(consumer - 1) or 0
    text = f'"brokerOffset":{q.max_offset},"consumerOffset":{consumer},"lastTimestamp":{last}'
    pulled = max(consumer, b.pulls.get(group, {}).get(topic, {}).get(qid, 0)) if pull else 0
    return f'{{{text},"pullOffset":{pulled}}}'


def _consume_stats(cluster: Cluster, b: Broker, f: Mapping[str, str]) -> Reply:
    """GET_CONSUME_STATS (208): each topic's READ queues; a static topic keeps a negative
    committed offset (5.x getConsumeStats clamps only when there is no queue mapping)."""
    group = f.get("consumerGroup", "")
    listed = [t for t in f.get("topicList", "").split(";") if t]
    topics = listed or ([f["topic"]] if f.get("topic") else _stats_topics(cluster, b, group))
    if f.get("topic") and not listed:
        online = cluster.online.get(group)
        topics = [t for t in topics if online is None or t in online.subscriptions]
    entries = []
    for topic in topics:
        t = b.topics.get(topic)
        if t is None:
            continue
        for qid in range(t.read_nums):
            wrapper = _wrapper(b, group, topic, qid, clamp=not t.static, pull=True)
            entries.append(f"{mq(topic, b.name, qid)}:{wrapper}")
    # The model keeps one TPS per group and broker: the broker's per-topic figures are that on the
    # group's first topic and 0 on the others, so asking topic by topic adds up to the same.
    first = _stats_topics(cluster, b, group)[:1]
    share = not f.get("topic") or listed or [f["topic"]] == first
    tps = jdouble(b.tps.get(group, 0.0) if share else 0.0)
    return _ok(f'{{"consumeTps":{tps},"offsetTable":{{{",".join(entries)}}}}}')


def _topic_stats(cluster: Cluster, b: Broker, f: Mapping[str, str]) -> Reply:
    topic = f.get("topic", "")
    t = b.topics.get(topic)
    if t is None:
        return Reply(17, f"topic[{topic}] not exist")
    entries = ",".join(
        f'{mq(topic, b.name, qid)}:{{"lastUpdateTimestamp":{q.time_at(q.max_offset - 1) or 0},'
        f'"maxOffset":{q.max_offset},"minOffset":{q.min_offset}}}'
        for qid, q in enumerate(t.queues)
    )
    return _ok(f'{{"offsetTable":{{{entries}}},"topicPutTps":0.0}}')


def _subscription(topic: str, expr: str) -> str:
    tags = [] if expr == "*" else [t.strip() for t in expr.split("||")]
    codes = ",".join(str(tags_code(t)) for t in tags)
    return (
        f'{{"classFilterMode":false,"codeSet":[{codes}],"expressionType":"TAG","subString":{js(expr)},'
        f'"subVersion":1767225000000,"tagsSet":[{",".join(js(t) for t in tags)}],"topic":{js(topic)}}}'
    )


def _connections(cluster: Cluster, b: Broker, f: Mapping[str, str]) -> Reply:
    group = f.get("consumerGroup", "")
    online: Online | None = cluster.online.get(group)
    if online is None or not online.clients or b.name not in (online.heartbeats_to or (b.name,)):
        return Reply(206, f"the consumer group[{group}] not online")
    conns = ",".join(
        f'{{"clientAddr":{js(c.addr)},"clientId":{js(c.client_id)},"language":{js(c.language)},'
        f'"version":{c.version}}}'
        for c in online.clients
    )
    subs = ",".join(f"{js(t)}:{_subscription(t, e)}" for t, e in online.subscriptions.items())
    return _ok(
        f'{{"connectionSet":[{conns}],"consumeFromWhere":{js(online.consume_from)},'
        f'"consumeType":{js(online.consume_type)},"messageModel":{js(online.message_model)},'
        f'"subscriptionTable":{{{subs}}}}}'
    )


def _running_info(cluster: Cluster, b: Broker, f: Mapping[str, str]) -> Reply:
    group, cid = f.get("consumerGroup", ""), f.get("clientId", "")
    online = cluster.online.get(group)
    client = next((c for c in online.clients if c.client_id == cid), None) if online else None
    if online is None or client is None:
        return Reply(1, f"The Consumer <{group}> <{cid}> not online")
    pq = (
        '{"cachedMsgCount":0,"cachedMsgMaxOffset":0,"cachedMsgMinOffset":0,"cachedMsgSizeInMiB":0,'
        '"commitOffset":0,"droped":false,"lastConsumeTimestamp":1767225000000,"lastLockTimestamp":0,'
        '"lastPullTimestamp":1767225000000,"locked":false,"transactionMsgCount":0,'
        '"transactionMsgMaxOffset":0,"transactionMsgMinOffset":0,"tryUnlockTimes":0}'
    )
    table = ",".join(f"{mq(t, bn, q)}:{pq}" for t, bn, q in client.owns)
    subs = ",".join(_subscription(t, e) for t, e in online.subscriptions.items())
    return _ok(
        f'{{"mqPopTable":{{}},"mqTable":{{{table}}},"properties":{{"PROP_CLIENT_VERSION":"V5_3_3",'
        f'"PROP_CONSUME_TYPE":{js(online.consume_type)}}},"statusTable":{{}},"subscriptionSet":[{subs}],'
        f'"userConsumerInfo":{{}}}}'
    )


def _search_offset(cluster: Cluster, b: Broker, f: Mapping[str, str]) -> Reply:
    q = _queue(b, f)
    if q is None:
        return Reply(1, f"{f.get('queueId')}@{f.get('topic')} is not exist!")
    return Reply(ext={"offset": str(q.search_lower(_int(f, "timestamp")))})


def _query_cq(cluster: Cluster, b: Broker, f: Mapping[str, str]) -> Reply:
    """Units from ``index``: at most ``count``, never past the end of the consume-queue file
    holding ``index`` (``cq_file_units`` units each) nor the queue's max."""
    q, topic, qid = _queue(b, f), f.get("topic", ""), _int(f, "queueId", -1)
    if q is None:
        return Reply(1, f"{qid}@{topic} is not exist!")
    index, count = _int(f, "index"), _int(f, "count")
    if not q.min_offset <= index < q.max_offset:
        return Reply(0, f"Index {index} of {qid}@{topic} is not exist!")
    file_end = (index // cluster.cq_file_units + 1) * cluster.cq_file_units
    end = min(index + max(count, 0), file_end, q.max_offset)
    units = []
    for off in range(index, end):
        phys = b.phys[(topic, qid, off)]
        units.append(
            f'{{"eval":false,"physicOffset":{phys},"physicSize":{len(b.records[phys])},'
            f'"tagsCode":{tags_code(q.msgs[off].tags)}}}'
        )
    return _ok(
        f'{{"maxQueueIndex":{q.max_offset},"minQueueIndex":{q.min_offset},"queueData":[{",".join(units)}]}}'
    )


def _view_message(cluster: Cluster, b: Broker, f: Mapping[str, str]) -> Reply:
    rec = b.records.get(_int(f, "offset", -1))
    if rec is None:
        return Reply(1, f"can not find message by the offset, {f.get('offset')}")
    return Reply(body=rec)


def _all_offsets(cluster: Cluster, b: Broker, f: Mapping[str, str]) -> Reply:
    if not b.offsets:
        return Reply(1, "No consumer offset in this broker")
    gtm = ",".join(f"{js(g)}:[{','.join(js(t) for t in topics)}]" for g, topics in b.offsets.items())
    table = ",".join(
        f"{js(f'{t}@{g}')}:{{{','.join(f'{q}:{o}' for q, o in offs.items())}}}"
        for g, topics in b.offsets.items()
        for t, offs in topics.items()
    )
    return _ok(f'{{"dataVersion":{DATA_VERSION},"groupTopicMap":{{{gtm}}},"offsetTable":{{{table}}}}}')


def _all_groups(cluster: Cluster, b: Broker, f: Mapping[str, str]) -> Reply:
    table = ",".join(
        f'{js(g)}:{{"brokerId":0,"consumeBroadcastEnable":true,"consumeEnable":true,'
        f'"consumeFromMinEnable":true,"consumeMessageOrderly":false,"consumeTimeoutMinute":15,'
        f'"groupName":{js(g)},"groupRetryPolicy":{{"type":"CUSTOMIZED"}},"groupSysFlag":0,'
        f'"notifyConsumerIdsChangedEnable":true,"retryMaxTimes":16,"retryQueueNums":1,'
        f'"whichBrokerWhenConsumeSlowly":1}}'
        for g in b.groups
    )
    return _ok(f'{{"dataVersion":{DATA_VERSION},"forbiddenTable":{{}},"subscriptionGroupTable":{{{table}}}}}')


def _all_topics(cluster: Cluster, b: Broker, f: Mapping[str, str]) -> Reply:
    table = ",".join(
        f'{js(name)}:{{"attributes":{{}},"order":false,"perm":{t.perm},"readQueueNums":{t.read_nums},'
        f'"topicFilterType":"SINGLE_TAG","topicName":{js(name)},"topicSysFlag":0,'
        f'"writeQueueNums":{t.write_nums}}}'
        for name, t in b.topics.items()
    )
    mapping = ",".join(
        f'{js(name)}:{{"bname":{js(b.name)},"epoch":0,"hostedQueues":{{}},"scope":"__global__",'
        f'"topic":{js(name)},"totalQueues":{len(t.queues)}}}'
        for name, t in b.topics.items()
        if t.static
    )
    return _ok(
        f'{{"dataVersion":{DATA_VERSION},"mappingDataVersion":{DATA_VERSION},"topicConfigTable":{{{table}}},'
        f'"topicQueueMappingDetailMap":{{{mapping}}},"topicQueueMappingInfoMap":{{}}}}'
    )


# --- offset writes (remoting.md: QUERY_CONSUMER_OFFSET 14, UPDATE_CONSUMER_OFFSET 15,
# INVOKE_BROKER_TO_RESET_OFFSET 222 with an explicit queue and offset: the 5.x server-side reset)


def _query_offset(cluster: Cluster, b: Broker, f: Mapping[str, str]) -> Reply:
    committed = b.offsets.get(f.get("consumerGroup", ""), {}).get(f.get("topic", ""), {})
    qid = _int(f, "queueId", -1)
    if qid not in committed:
        return Reply(22, "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first")
    return Reply(ext={"offset": str(committed[qid])})


def _store_offset(b: Broker, group: str, topic: str, qid: int, offset: int) -> None:
    if not b.drop_writes:
        b.offsets.setdefault(group, {}).setdefault(topic, {})[qid] = offset


def _update_offset(cluster: Cluster, b: Broker, f: Mapping[str, str]) -> Reply:
    _store_offset(
        b, f.get("consumerGroup", ""), f.get("topic", ""), _int(f, "queueId", -1), _int(f, "commitOffset")
    )
    return Reply()


def _reset_offset(cluster: Cluster, b: Broker, f: Mapping[str, str]) -> Reply:
    group, q = f.get("group", ""), _queue(b, f)
    if not b.server_side_reset or q is None:
        online = cluster.online.get(group)
        if online is None or not online.clients:
            return Reply(
                206, f"Consumer not online, so can not reset offset, Group: {group} Topic: {f.get('topic')}"
            )
        return Reply(1, "the fake resets by time through clients only on the server side")
    offset = _int(f, "offset", -1)
    if offset == -1:  # no offset: by time (the fake's messages are stored at their minutes)
        offset = q.search_lower(_int(f, "timestamp"))
    if offset < q.min_offset or offset > q.max_offset + 1:  # 5.3.3 resetOffsetInner's check
        return Reply(1, f"Target offset {offset} not in consume queue range [{q.min_offset}-{q.max_offset}]")
    _store_offset(b, group, f.get("topic", ""), _int(f, "queueId", -1), offset)
    return Reply()


def _broker_config(cluster: Cluster, b: Broker, f: Mapping[str, str]) -> Reply:
    """GET_BROKER_CONFIG: properties lines (MixAll.properties2String), a few of a real broker's."""
    side = "true" if b.server_side_reset else "false"
    return _ok(f"brokerName={b.name}\nuseServerSideResetOffset={side}\ntimerWheelEnable=true\n")


def _query_subscription(cluster: Cluster, b: Broker, f: Mapping[str, str]) -> Reply:
    """QUERY_SUBSCRIPTION_BY_CONSUMER: the compensation table's entry; fastjson leaves a null out."""
    group, topic = f.get("group", ""), f.get("topic", "")
    expr = b.compensated.get((group, topic))
    data = "" if expr is None else f',"subscriptionData":{_subscription(topic, expr)}'
    return _ok(f'{{"group":{js(group)}{data},"topic":{js(topic)}}}')
