"""A broker's ACL refusals, told as a person would: which request, on which group or topic, for
which access key, why — and the broker's own remark after it, without the Java class and stack
frame it comes wrapped in.

What the brokers answer (seen on real brokers, tests/compat/test_compat_secure.py):

- 4.x ACL 1.0 (``aclEnable``): code 1 SYSTEM_ERROR, the remark is the exception and its first
  frame: ``org.apache.rocketmq.acl.common.AclException: Check signature failed for
  accessKey=rocketmq2, org.apache.rocketmq.acl.plain.PlainPermissionManager.validate(PlainPermissionManager.java:683)``;
- 5.x ACL 2.0: code 16 NO_PERMISSION with the message alone: ``check signature failed.``,
  ``User:ghost is not found.``, ``User:app has no permission to access Group:G from 127.0.0.1,
  no matched policies.``
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from mqctl.errors import AccessDeniedError
from mqctl.records import record
from mqctl.remoting.codes import ResponseCode

# ", org.apache.rocketmq.acl.plain.PlainPermissionManager.validate(PlainPermissionManager.java:683)"
_FRAME = re.compile(r",?\s*(?:[\w$]+\.)+[\w$<>]+\((?:[\w$]+\.java:\d+|Native Method|Unknown Source)\)\s*$")
# "org.apache.rocketmq.acl.common.AclException: " (any Java exception class name, package and all)
_CLASS = re.compile(r"^\s*(?:[a-z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error):\s*")
# 4.x wraps ACL failures in AclException (code 1); 5.x auth failures carry these class names too
# when they travel as a remark.
_ACL_CLASSES = ("AclException", "AuthenticationException", "AuthorizationException")


@record(frozen=True)
class _Reason:
    pattern: re.Pattern[str]
    reason: str  # may use {kind} and {name} from the pattern's groups
    hint: str


def _r(pattern: str, reason: str, hint: str) -> _Reason:
    return _Reason(re.compile(pattern, re.IGNORECASE), reason, hint)


_SECRET_HINT = (
    "check the secret key of access key {key} ($MQCTL_SECRET_KEY, --secret-key or the profile's secret_key)"
)
_REASONS = (
    _r(r"check signature failed", "signature check failed — wrong secret?", _SECRET_HINT),
    _r(r"no accessKey is configured|username cannot be null|no accesskey",
       "the request is not signed",
       "this cluster checks ACL: pass --access-key KEY with its secret in $MQCTL_SECRET_KEY (or a profile)"),
    _r(r"no acl config for|no PlainAccessResource for|User:\S* is not found",
       "unknown access key", "the cluster has no account {key}: check --access-key"),
    _r(r"User:\S* is disabled", "the account is disabled", "ask the cluster's administrators to enable {key}"),
    _r(r"need admin permission",
       "an admin request, and {key} is not an admin account", "use an admin account (admin: true in plain_acl.yml)"),
    _r(r"no permission to access (?P<kind>Cluster):(?P<name>\S+)",
       "an admin request: {key} has no permission on the cluster {name}",
       "use an account with a rule on Cluster:{name} (a SUPER user, or mqadmin createAcl)"),
    _r(r"no (?:default )?permission (?:to access |for )(?P<kind>group|topic):(?P<name>[^\s,]+)",
       "no permission on {kind} {name}",
       "ask for a grant of {key} on {kind} {name} (4.x: topicPerms/groupPerms in plain_acl.yml; "
       "5.x: mqadmin createAcl)"),
)  # fmt: skip


def clean_remark(remark: str | None) -> str:
    """The broker's remark without the Java exception class in front and stack frames behind."""
    text = " ".join((remark or "").split())
    while True:
        stripped = _FRAME.sub("", text)
        if stripped == text:
            break
        text = stripped
    return _CLASS.sub("", text).strip() or "no remark"


def is_denial(code: int, remark: str | None) -> bool:
    """Whether an answer refuses who is asking: NO_PERMISSION (5.x), or an ACL exception (4.x's
    plain ACL answers SYSTEM_ERROR with the AclException as remark)."""
    if code == ResponseCode.NO_PERMISSION:
        return True
    return code == ResponseCode.SYSTEM_ERROR and any(c in (remark or "") for c in _ACL_CLASSES)


def _resource(fields: Mapping[str, object] | None) -> str:
    if not fields:
        return ""
    group = fields.get("consumerGroup") or fields.get("group")
    topic = fields.get("topic")
    named = [f"group {group}" if group else "", f"topic {topic}" if topic else ""]
    text = ", ".join(n for n in named if n)
    return f" on {text}" if text else ""


def denied(
    code: int,
    remark: str | None,
    *,
    who: str,
    request: str,
    fields: Mapping[str, object] | None,
    access_key: str | None,
) -> AccessDeniedError:
    """The one-line error of a refusal: ``broker-a denied GET_CONSUME_STATS on group G for access
    key K: <why> (broker: <its remark>)``, exit 8."""
    said = clean_remark(remark)
    key = access_key or "(none)"
    reason, hint = "access denied", "check the access key and its grants"
    for r in _REASONS:
        m = r.pattern.search(said)
        if m:
            names = {k: v for k, v in m.groupdict().items() if v}
            kind = names.get("kind", "").lower()
            reason = r.reason.format(key=key, kind=kind, name=names.get("name", ""))
            hint = r.hint.format(key=key, kind=kind, name=names.get("name", ""))
            break
    whom = f"for access key {access_key}" if access_key else "to an unsigned request"
    server = "name server" if who.startswith("name server") else "broker"
    message = f"{who} denied {request}{_resource(fields)} {whom}: {reason} ({server}: {said})"
    return AccessDeniedError(message, hint, code=code, remark=remark, addr=who)
