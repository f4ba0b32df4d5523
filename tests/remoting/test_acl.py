"""ACL refusals in words (remoting/acl.py), from the remarks real brokers answered with (collected
by tests/compat/test_compat_secure.py: 4.9.7 plain ACL, 5.3.3 ACL 2.0), each to the reason a user
reads and the remark without Java around it."""

from __future__ import annotations

import pytest

from mqctl.errors import ExitStatus
from mqctl.remoting.acl import clean_remark, denied, is_denial

ACL4 = (
    "org.apache.rocketmq.acl.common.AclException: {}, org.apache.rocketmq.acl.plain.PlainPermissionManager.{}"
)
REAL = [
    # (code, remark, the reason mqctl gives, the remark as quoted)
    (1, ACL4.format("Check signature failed for accessKey=rocketmq2", "validate(PlainPermissionManager.java:683)"),
     "signature check failed — wrong secret?", "Check signature failed for accessKey=rocketmq2"),
    (1, ACL4.format("No acl config for ghostuser", "validate(PlainPermissionManager.java:667)"),
     "unknown access key", "No acl config for ghostuser"),
    (1, ACL4.format("No accessKey is configured", "validate(PlainPermissionManager.java:663)"),
     "the request is not signed", "No accessKey is configured"),
    (1, ACL4.format("No default permission for group:GroupSecure", "checkPerm(PlainPermissionManager.java:605)"),
     "no permission on group GroupSecure", "No default permission for group:GroupSecure"),
    (1, ACL4.format("No default permission for topic:TopicSecure", "checkPerm(PlainPermissionManager.java:605)"),
     "no permission on topic TopicSecure", "No default permission for topic:TopicSecure"),
    (1, ACL4.format("Need admin permission for request code=200, but accessKey=appuser1 is not",
                    "checkPerm(PlainPermissionManager.java:580)"),
     "an admin request, and K is not an admin account",
     "Need admin permission for request code=200, but accessKey=appuser1 is not"),
    (16, "check signature failed.", "signature check failed — wrong secret?", "check signature failed."),
    (16, "User:ghostuser is not found.", "unknown access key", "User:ghostuser is not found."),
    (16, "username cannot be null.", "the request is not signed", "username cannot be null."),
    (16, "User:outsider1 has no permission to access Group:GroupSecure from 127.0.0.1, no matched policies.",
     "no permission on group GroupSecure", None),
    (16, "User:stranger1 has no permission to access Topic:TopicSecure from 127.0.0.1, no matched policies.",
     "no permission on topic TopicSecure", None),
    (16, "User:appuser1 has no permission to access Cluster:SecureCluster from 127.0.0.1, no matched policies.",
     "an admin request: K has no permission on the cluster SecureCluster", None),
]  # fmt: skip


@pytest.mark.parametrize(("code", "remark", "reason", "quoted"), REAL)
def test_real_refusals_in_words(code: int, remark: str, reason: str, quoted: str | None) -> None:
    assert is_denial(code, remark)
    err = denied(code, remark, who="broker-a", request="GET_CONSUME_STATS", fields={"consumerGroup": "G"},
                 access_key="K")  # fmt: skip
    quoted = quoted or remark
    assert (
        err.message
        == f"broker-a denied GET_CONSUME_STATS on group G for access key K: {reason} (broker: {quoted})"
    )
    assert err.exit_status == ExitStatus.DENIED and err.hint
    assert "org.apache" not in err.message and ".java" not in err.message


@pytest.mark.parametrize(
    ("code", "remark"),
    [
        (1, "THe consumer group <GroupSecure> not exist"),  # 4.9.7 reset of a group without offsets
        # the 5.5.1 broker on rocketmq-auth 5.5.0 (matrix_secure.py): broken, not a refusal
        (1, "java.lang.NoSuchMethodError: 'void org.apache.rocketmq.auth.authorization.AuthorizationEvaluator."
            "evaluate(org.apache.rocketmq.remoting.protocol.RemotingCommand, java.util.List)', "
            "org.apache.rocketmq.broker.auth.pipeline.AuthorizationPipeline.execute(AuthorizationPipeline.java:53)"),
        (17, "Topic T does not exist"),
        (0, ""),
    ],
)  # fmt: skip
def test_other_answers_are_not_refusals(code: int, remark: str) -> None:
    assert not is_denial(code, remark)


def test_the_request_and_its_resources_are_named() -> None:
    fields = {"topic": "T", "group": "G", "queueId": "0"}
    err = denied(16, "check signature failed.", who="broker-b", request="INVOKE_BROKER_TO_RESET_OFFSET",
                 fields=fields, access_key=None)  # fmt: skip
    assert err.message.startswith(
        "broker-b denied INVOKE_BROKER_TO_RESET_OFFSET on group G, topic T to an unsigned request:"
    )
    ns = denied(16, "username cannot be null.", who="name server 10.0.0.1:9876", request="GET_ROUTEINFO_BY_TOPIC",
                fields=None, access_key=None)  # fmt: skip
    assert ns.message.endswith("(name server: username cannot be null.)")


def test_an_unknown_refusal_keeps_the_brokers_words() -> None:
    err = denied(
        16, "the broker[b] sending message is forbidden", who="b", request="X", fields={}, access_key="K"
    )
    assert (
        err.message
        == "b denied X for access key K: access denied (broker: the broker[b] sending message is forbidden)"
    )


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("java.lang.IllegalStateException: x, a.b.C.d(C.java:1)", "x"),
        ("AclException without a package stays", "AclException without a package stays"),
        ("", "no remark"),
        (None, "no remark"),
        ("two frames, a.b.C.d(C.java:1), e.f.G.h(G.java:2)", "two frames"),
    ],
)
def test_clean_remark(raw: str | None, clean: str) -> None:
    assert clean_remark(raw) == clean
