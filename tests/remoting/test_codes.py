"""Codes against remoting.md 3.1/5/6 and MQVersion names against mqadmin.md 6."""

from __future__ import annotations

import pytest

from mqctl.remoting.codes import (
    CURRENT_VERSION,
    LANGUAGE_CODES,
    LANGUAGE_NAMES,
    LanguageCode,
    RequestCode,
    ResponseCode,
    SerializeType,
    language_name,
    request_name,
    response_name,
    version_name,
)

# remoting.md 5, plus the extra codes the brief names (checked in RequestCode.java).
SPEC_REQUEST_CODES = {
    "GET_ROUTEINFO_BY_TOPIC": 105,
    "GET_BROKER_CLUSTER_INFO": 106,
    "GET_ALL_TOPIC_LIST_FROM_NAMESERVER": 206,
    "GET_CONSUMER_LIST_BY_GROUP": 38,
    "GET_CONSUMER_CONNECTION_LIST": 203,
    "GET_CONSUME_STATS": 208,
    "QUERY_CONSUMER_OFFSET": 14,
    "UPDATE_CONSUMER_OFFSET": 15,
    "SEARCH_OFFSET_BY_TIMESTAMP": 29,
    "GET_MAX_OFFSET": 30,
    "GET_MIN_OFFSET": 31,
    "GET_EARLIEST_MSG_STORETIME": 32,
    "VIEW_MESSAGE_BY_ID": 33,
    "INVOKE_BROKER_TO_RESET_OFFSET": 222,
    "GET_ALL_CONSUMER_OFFSET": 43,
    "GET_ALL_TOPIC_CONFIG": 21,
    "GET_ALL_SUBSCRIPTIONGROUP_CONFIG": 201,
    "QUERY_TOPIC_CONSUME_BY_WHO": 300,
    "GET_CONSUMER_RUNNING_INFO": 307,
    "GET_TOPIC_STATS_INFO": 202,
    "GET_TOPIC_CONFIG": 351,
    "RESET_CONSUMER_CLIENT_OFFSET": 220,
    "NOTIFY_CONSUMER_IDS_CHANGED": 40,
    "QUERY_CONSUME_QUEUE": 321,
    "QUERY_MESSAGE": 12,
    "UPDATE_AND_CREATE_TOPIC": 17,
    "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP": 200,
    "DELETE_SUBSCRIPTIONGROUP": 207,
    "GET_BROKER_RUNTIME_INFO": 28,
    "HEART_BEAT": 34,
}

# remoting.md 6.
SPEC_RESPONSE_CODES = {
    "SUCCESS": 0,
    "SYSTEM_ERROR": 1,
    "SYSTEM_BUSY": 2,
    "REQUEST_CODE_NOT_SUPPORTED": 3,
    "SERVICE_NOT_AVAILABLE": 14,
    "NO_PERMISSION": 16,
    "TOPIC_NOT_EXIST": 17,
    "QUERY_NOT_FOUND": 22,
    "SUBSCRIPTION_NOT_EXIST": 24,
    "SUBSCRIPTION_GROUP_NOT_EXIST": 26,
    "INVALID_PARAMETER": 29,
    "CONSUMER_NOT_ONLINE": 206,
    "CONSUME_MSG_TIMEOUT": 207,
    "BROADCAST_CONSUMPTION": 213,
    "FLOW_CONTROL": 215,
    "NOT_LEADER_FOR_QUEUE": 501,
    "GO_AWAY": 1500,
}

# remoting.md 3.1, in code order.
SPEC_LANGUAGES = "JAVA CPP DOTNET PYTHON DELPHI ERLANG RUBY OTHER HTTP GO PHP OMS RUST NODE_JS".split()


@pytest.mark.parametrize(("name", "code"), sorted(SPEC_REQUEST_CODES.items()))
def test_request_codes_match_the_spec(name: str, code: int) -> None:
    assert getattr(RequestCode, name) == code
    assert request_name(code) == name


@pytest.mark.parametrize(("name", "code"), sorted(SPEC_RESPONSE_CODES.items()))
def test_response_codes_match_the_spec(name: str, code: int) -> None:
    assert getattr(ResponseCode, name) == code
    assert response_name(code) == name


def test_request_and_response_codes_are_separate_spaces() -> None:
    assert request_name(206) == "GET_ALL_TOPIC_LIST_FROM_NAMESERVER"
    assert response_name(206) == "CONSUMER_NOT_ONLINE"


@pytest.mark.parametrize("code", [5, 9999, -1, 2**31 - 1, -(2**31)])
def test_names_of_unknown_codes_survive(code: int) -> None:
    assert response_name(code) == f"UNKNOWN_{code}"
    assert request_name(code) == f"UNKNOWN_{code}"


def test_language_and_serialize_type_codes() -> None:
    assert [LANGUAGE_NAMES[code] for code in sorted(LANGUAGE_NAMES)] == SPEC_LANGUAGES
    assert sorted(LANGUAGE_NAMES) == list(range(14))
    assert all(getattr(LanguageCode, name) == code for name, code in LANGUAGE_CODES.items())
    assert language_name(12) == "RUST" and language_name(14) == "UNKNOWN_14"
    assert (SerializeType.JSON, SerializeType.ROCKETMQ) == (0, 1)


# mqadmin.md 6 landmarks.
LANDMARKS = {
    28: "V3_0_7_SNAPSHOT",
    62: "V3_1_8_SNAPSHOT",
    212: "V4_0_0_SNAPSHOT",
    401: "V4_9_4",
    409: "V4_9_8",
    413: "V5_0_0",
    441: "V5_1_4",
    453: "V5_2_0",
    473: "V5_3_0",
    477: "V5_3_2",
    479: "V5_3_3",
}

# Worked by hand from the table, one or two per range and at each range's edges:
#   0..15 literal list; 17: o=1 -> V3_0_{0+1}, odd -> release; 45: o=29 -> V3_0_15;
#   46: o=0 -> V3_1_0_SNAPSHOT; 85: o=39 -> V3_{1+1}_{19//2=9} = V3_2_9;
#   86: o=0 -> V3_3_1_SNAPSHOT; 211: o=125 -> V3_{3+6}_{1+17//2} = V3_9_9;
#   232: o=20 -> V4_{0}_{1}_{0} snapshot; 611: o=399 -> V5_{199//20}_{19//2} = V5_9_9.
BY_HAND = {
    0: "V3_0_0_SNAPSHOT",
    7: "V3_0_0_BETA6_SNAPSHOT",
    15: "V3_0_0_FINAL",
    16: "V3_0_1_SNAPSHOT",
    17: "V3_0_1",
    45: "V3_0_15",
    46: "V3_1_0_SNAPSHOT",
    85: "V3_2_9",
    86: "V3_3_1_SNAPSHOT",
    211: "V3_9_9",
    213: "V4_0_0",
    232: "V4_1_0_SNAPSHOT",
    412: "V5_0_0_SNAPSHOT",
    611: "V5_9_9",
    612: "HIGHER_VERSION",
    613: "HIGHER_VERSION",
    32767: "HIGHER_VERSION",
}


@pytest.mark.parametrize(("ordinal", "name"), sorted({**LANDMARKS, **BY_HAND}.items()))
def test_version_name(ordinal: int, name: str) -> None:
    assert version_name(ordinal) == name


def test_current_version_is_5_3_3() -> None:
    assert CURRENT_VERSION == 479
    assert version_name(CURRENT_VERSION) == "V5_3_3"


def test_version_names_are_distinct_below_higher_version() -> None:
    names = [version_name(v) for v in range(613)]
    assert len(set(names)) == 613
    assert all(n.startswith("V") for n in names[:612])


def test_negative_version_does_not_raise() -> None:
    assert version_name(-1) == "UNKNOWN_VERSION_-1"
