"""RocketMQ remoting codes: request and response codes, languages, serialize types, MQVersion names.

Numbers from apache/rocketmq ``RequestCode``, ``ResponseCode``, ``RemotingSysResponseCode``,
``LanguageCode``, ``SerializeType`` and ``MQVersion`` (remoting.md 3.1, 5, 6; mqadmin.md 6).
"""

from __future__ import annotations

# Plain classes of int constants, not IntEnums: an IntEnum of ~100 members costs every command's
# start-up ~1.5 ms; the names are looked up in the tables below (request_name, response_name).


class RequestCode:
    QUERY_MESSAGE = 12
    QUERY_CONSUMER_OFFSET = 14
    UPDATE_CONSUMER_OFFSET = 15
    UPDATE_AND_CREATE_TOPIC = 17
    GET_ALL_TOPIC_CONFIG = 21
    GET_BROKER_CONFIG = 26
    GET_BROKER_RUNTIME_INFO = 28
    SEARCH_OFFSET_BY_TIMESTAMP = 29
    GET_MAX_OFFSET = 30
    GET_MIN_OFFSET = 31
    GET_EARLIEST_MSG_STORETIME = 32
    VIEW_MESSAGE_BY_ID = 33
    HEART_BEAT = 34
    GET_CONSUMER_LIST_BY_GROUP = 38
    NOTIFY_CONSUMER_IDS_CHANGED = 40
    GET_ALL_CONSUMER_OFFSET = 43
    GET_ROUTEINFO_BY_TOPIC = 105
    GET_BROKER_CLUSTER_INFO = 106
    UPDATE_AND_CREATE_SUBSCRIPTIONGROUP = 200
    GET_ALL_SUBSCRIPTIONGROUP_CONFIG = 201
    GET_TOPIC_STATS_INFO = 202
    GET_CONSUMER_CONNECTION_LIST = 203
    GET_ALL_TOPIC_LIST_FROM_NAMESERVER = 206
    DELETE_SUBSCRIPTIONGROUP = 207
    GET_CONSUME_STATS = 208
    RESET_CONSUMER_CLIENT_OFFSET = 220
    INVOKE_BROKER_TO_RESET_OFFSET = 222
    QUERY_TOPIC_CONSUME_BY_WHO = 300
    GET_CONSUMER_RUNNING_INFO = 307
    QUERY_CONSUME_QUEUE = 321
    QUERY_SUBSCRIPTION_BY_CONSUMER = 345
    GET_TOPIC_CONFIG = 351


class ResponseCode:
    SUCCESS = 0
    SYSTEM_ERROR = 1
    SYSTEM_BUSY = 2
    REQUEST_CODE_NOT_SUPPORTED = 3
    TRANSACTION_FAILED = 4
    FLUSH_DISK_TIMEOUT = 10
    SLAVE_NOT_AVAILABLE = 11
    FLUSH_SLAVE_TIMEOUT = 12
    MESSAGE_ILLEGAL = 13
    SERVICE_NOT_AVAILABLE = 14
    VERSION_NOT_SUPPORTED = 15
    NO_PERMISSION = 16
    TOPIC_NOT_EXIST = 17
    TOPIC_EXIST_ALREADY = 18
    PULL_NOT_FOUND = 19
    PULL_RETRY_IMMEDIATELY = 20
    PULL_OFFSET_MOVED = 21
    QUERY_NOT_FOUND = 22
    SUBSCRIPTION_PARSE_FAILED = 23
    SUBSCRIPTION_NOT_EXIST = 24
    SUBSCRIPTION_NOT_LATEST = 25
    SUBSCRIPTION_GROUP_NOT_EXIST = 26
    FILTER_DATA_NOT_EXIST = 27
    FILTER_DATA_NOT_LATEST = 28
    INVALID_PARAMETER = 29
    TRANSACTION_SHOULD_COMMIT = 200
    TRANSACTION_SHOULD_ROLLBACK = 201
    TRANSACTION_STATE_UNKNOW = 202
    TRANSACTION_STATE_GROUP_WRONG = 203
    NO_BUYER_ID = 204
    NOT_IN_CURRENT_UNIT = 205
    CONSUMER_NOT_ONLINE = 206
    CONSUME_MSG_TIMEOUT = 207
    NO_MESSAGE = 208
    POLLING_FULL = 209
    POLLING_TIMEOUT = 210
    BROKER_NOT_EXIST = 211
    BROKER_DISPATCH_NOT_COMPLETE = 212
    BROADCAST_CONSUMPTION = 213
    FLOW_CONTROL = 215
    NOT_LEADER_FOR_QUEUE = 501
    ILLEGAL_OPERATION = 604
    GO_AWAY = 1500
    USER_NOT_EXIST = 3001
    POLICY_NOT_EXIST = 3002


class LanguageCode:
    JAVA = 0
    CPP = 1
    DOTNET = 2
    PYTHON = 3
    DELPHI = 4
    ERLANG = 5
    RUBY = 6
    OTHER = 7
    HTTP = 8
    GO = 9
    PHP = 10
    OMS = 11
    RUST = 12
    NODE_JS = 13


class SerializeType:
    JSON = 0
    ROCKETMQ = 1


def _names(codes: type) -> dict[int, str]:
    return {v: k for k, v in vars(codes).items() if not k.startswith("_")}


_REQUEST_NAMES = _names(RequestCode)
_RESPONSE_NAMES = _names(ResponseCode)
LANGUAGE_NAMES = _names(LanguageCode)  # code -> name, as the ROCKETMQ header writes the byte
LANGUAGE_CODES = {name: code for code, name in LANGUAGE_NAMES.items()}


def response_name(code: int) -> str:
    """The ResponseCode name of ``code``; ``UNKNOWN_<code>`` for a code this table lacks."""
    return _RESPONSE_NAMES.get(code) or f"UNKNOWN_{code}"


def request_name(code: int) -> str:
    """The RequestCode name of ``code``; ``UNKNOWN_<code>`` for a code this table lacks."""
    return _REQUEST_NAMES.get(code) or f"UNKNOWN_{code}"


def language_name(code: int) -> str:
    """The LanguageCode name of ``code``; ``UNKNOWN_<code>`` for a code this table lacks."""
    return LANGUAGE_NAMES.get(code) or f"UNKNOWN_{code}"


# MQVersion.Version.V5_3_3.ordinal(): the release mqctl mirrors; >= 401 keeps route data standard JSON.
CURRENT_VERSION = 479


# MQVersion names live with the model (render prints them): re-exported here.
from mqctl.model.versions import version_name as version_name  # noqa: E402
