"""The failures a user of -n meets, through the CLI against the fake cluster: name servers and
brokers down, silent, slow, refusing, speaking garbage, asking for ACL signatures. Every failure
is one ``mqctl: error:`` line (plus an optional hint and warnings), no traceback, and the exit
status of the README's table: 3 not found, 4 unreachable / timed out, 5 refused, 8 denied."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest
from mqctl_testkit.fakecluster import FakeCluster, signature_ok
from mqctl_testkit.live_scenario import ACCESS_KEY, SECRET, Run, build_model, cli_env, run_here, with_twins

PLAIN = ["consumerProgress", "-g", "G1", "-o", "plain"]


@pytest.fixture(scope="module")
def shared() -> Iterator[FakeCluster]:
    c = FakeCluster(build_model(), namesrvs=2)
    yield c
    c.close()


@pytest.fixture
def cluster(shared: FakeCluster) -> Iterator[FakeCluster]:
    shared.reset()
    yield shared
    shared.reset()


def brokers_of_rows(out: str) -> set[str]:
    """The broker column of consumerProgress's plain rows."""
    lines = out.split("\n\n")[0].splitlines()[1:]
    return {line[66:98].strip() for line in lines}


# --- name servers ----------------------------------------------------------------------------


def test_name_server_port_closed(cluster: FakeCluster) -> None:
    ns = cluster.namesrvs[0]
    ns.down()
    run = run_here(*PLAIN, "-n", ns.addr, "--timeout", "60")
    assert run.code == 4
    line = run.error_line()
    assert ns.addr in line and "refused" in line.lower()
    assert run.elapsed < 10  # a refused connect fails at once: no waiting for any timeout


def test_name_server_that_never_answers_times_out(cluster: FakeCluster) -> None:
    ns = cluster.namesrvs[0]
    ns.mode = "silent"
    run = run_here(*PLAIN, "-n", ns.addr, "--timeout", "1")
    assert run.code == 4
    line = run.error_line()
    assert ns.addr in line and "no response" in line
    # from its request to giving up (it closes the connection then): the --timeout, not the 5 s
    # request timeout; measured on the server, so interpreter start-up and exit do not count.
    # The server's thread sees the close on its own time: on a busy machine after mqctl has exited.
    end = time.monotonic() + 5
    while ns.closed_at is None and time.monotonic() < end:
        time.sleep(0.01)
    assert ns.first_request_at is not None and ns.closed_at is not None
    assert 0.5 <= ns.closed_at - ns.first_request_at <= 1.5, ns.closed_at - ns.first_request_at


def test_the_next_name_server_is_used_when_the_first_is_down(cluster: FakeCluster) -> None:
    first, second = cluster.namesrvs
    first.down()
    run = run_here(*PLAIN, "-n", f"{first.addr};{second.addr}")
    assert run.code == 0, run.err
    assert brokers_of_rows(run.out) == {"broker-a", "broker-b"}
    assert "Consume Diff Total: 33" in run.out
    assert 105 in second.codes()


# --- brokers ---------------------------------------------------------------------------------


def test_a_kept_backend_goes_on_with_what_it_learnt_while_no_name_server_answers(
    cluster: FakeCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--watch and the exporter keep one backend and ask its routes again every ROUTE_TTL_S
    (here: every round). Both name servers away must not end them while the brokers answer: a
    Java client keeps its route table then. (Before: exit 4 at the first route refresh.)"""
    from mqctl.backends import live
    from mqctl.errors import UnreachableError
    from mqctl.ops.progress import group_progress

    monkeypatch.setattr(live, "ROUTE_TTL_S", 0.0)
    addrs = ";".join(s.addr for s in cluster.namesrvs)

    def rows(result: object) -> list[tuple[str, int, int, int]]:
        return [(r.broker_name, r.queue_id, r.broker_offset, r.consumer_offset) for r in result.rows]  # type: ignore[attr-defined]

    def said(result: object) -> list[str]:
        return [w for w in result.warnings if "name server" in w]  # type: ignore[attr-defined]

    with live.LiveBackend(addrs, timeout=3) as b:
        before = group_progress(b, "G1")
        assert rows(before) and not said(before)
        for s in cluster.namesrvs:
            s.down()
        b.refresh()
        during = group_progress(b, "G1")
        assert rows(during) == rows(before) and not during.failures
        [note] = said(during)
        assert re.fullmatch(
            r".*Connection refused.* \(since \d\d:\d\d:\d\d\); the routes and brokers learnt "
            r"before are used until a name server answers",
            note,
        ), note
        b.refresh()
        assert not said(group_progress(b, "G1"))  # said once, not once per round
        for s in cluster.namesrvs:
            s.reset()
        b.refresh()
        back = group_progress(b, "G1")
        assert [re.sub(r"\d\d:\d\d:\d\d", "T", w) for w in said(back)] == [
            "a name server answers again (none did since T)"
        ]
        assert rows(back) == rows(before)
    # a command that never learnt a route still fails: exit 4, as before
    for s in cluster.namesrvs:
        s.down()
    with live.LiveBackend(addrs, timeout=3) as fresh, pytest.raises(UnreachableError):
        group_progress(fresh, "G1")


def test_a_kept_backend_keeps_its_route_while_a_restarted_name_server_knows_none(
    cluster: FakeCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A name server just restarted answers TOPIC_NOT_EXIST until the brokers register again (4-8 s
    on a real 5.3.3 cluster). A sampler asking then keeps the route it had, as a Java client
    does; a command that never had one still gets the name server's answer."""
    from mqctl.backends import live
    from mqctl.errors import NotFoundError
    from mqctl.ops.progress import group_progress

    monkeypatch.setattr(live, "ROUTE_TTL_S", 0.0)
    with live.LiveBackend(cluster.ns, timeout=3) as b:
        before = group_progress(b, "G1")
        for s in cluster.namesrvs:
            s.errors[105] = (17, "No topic route info in name server for the topic: %RETRY%G1")
        b.refresh()
        during = group_progress(b, "G1", now_ms=before.now_ms)  # lag_ms is counted from now
        assert during.rows == before.rows and not during.failures
        assert [w for w in during.warnings if "no route" in w] == [
            f"name server {cluster.ns} has no route for %RETRY%G1 (restarted, the brokers not registered "
            "again yet?): the route learnt before is used"
        ]
    with live.LiveBackend(cluster.ns, timeout=3) as fresh:  # nothing learnt before: nothing kept
        with pytest.raises(NotFoundError, match="No topic route"):
            fresh.net.route("%RETRY%G1")
        assert not fresh.take_warnings()


def test_one_broker_of_two_down_prints_the_others_rows(cluster: FakeCluster) -> None:
    dead = cluster.broker("broker-b")
    dead.down()
    run = run_here(*PLAIN, "-n", cluster.ns)
    assert run.code == 4
    assert brokers_of_rows(run.out) == {"broker-a"}
    line = run.error_line()
    assert "broker-b" in line and dead.addr in line and "broker-a" not in line


# bad broker -> (its fault, a word of the reason mqctl gives)
PROTOCOL_FAULTS = {
    "bad-garbage": ("garbage", "JSON"),
    "bad-oversized": ("oversized", "exceeds"),
    "bad-truncated": ("truncated", "header length"),
    "bad-close": ("close_mid_frame", "middle of a frame"),
}


def test_brokers_breaking_the_protocol_each_fail_alone() -> None:
    """Four copies of broker-b, each misbehaving its own way, in one pipelined command: the
    healthy brokers' rows print, the one error line names each broken broker and why."""
    cluster = FakeCluster(with_twins(build_model(), list(PROTOCOL_FAULTS)))
    try:
        for name, (mode, _why) in PROTOCOL_FAULTS.items():
            cluster.broker(name).mode = mode
        run = run_here(*PLAIN, "-n", cluster.ns)
    finally:
        cluster.close()
    assert run.code == 4
    assert brokers_of_rows(run.out) == {"broker-a", "broker-b"}
    line = run.error_line()
    assert "4 broker(s) did not answer" in line
    for part, (name, (_mode, why)) in zip(line.split("; "), PROTOCOL_FAULTS.items()):
        assert name in part and cluster.broker(name).addr in part and why in part, part


def test_a_broker_answering_system_error_is_named_with_its_code_and_remark(cluster: FakeCluster) -> None:
    cluster.broker("broker-b").errors = {208: (1, "java.lang.NullPointerException: stats failed")}
    run = run_here(*PLAIN, "-n", cluster.ns)
    assert run.code == 5  # an error code other than the README's not-found/unreachable ones
    assert brokers_of_rows(run.out) == {"broker-a"}
    line = run.error_line()
    assert "code 1" in line and "java.lang.NullPointerException: stats failed" in line and "broker-b" in line


def test_unknown_group(cluster: FakeCluster) -> None:
    run = run_here("consumerProgress", "-g", "nope", "-n", cluster.ns)
    assert run.code == 3
    assert "'nope' not found" in run.error_line()


def test_unknown_topic_carries_the_name_servers_remark(cluster: FakeCluster) -> None:
    run = run_here("consumerProgress", "-g", "G1", "-t", "NoSuchTopic", "-n", cluster.ns)
    assert run.code == 3
    assert run.error_line() == "mqctl: error: No topic route info in name server for the topic: NoSuchTopic"


def test_consumer_connection_with_nobody_online(cluster: FakeCluster) -> None:
    run = run_here("consumerConnection", "-g", "G2", "-n", cluster.ns)
    assert run.code == 3
    line = run.error_line()
    assert "'G2'" in line and "no consumer online" in line and "the consumer group[G2] not online" in line


# --- ACL -------------------------------------------------------------------------------------


def assert_signed_only(cluster: FakeCluster) -> None:
    requests = [r for s in cluster.servers() for r in s.requests]
    assert requests and not any(s.rejected for s in cluster.servers())
    for r in requests:
        fields = dict(r.ext_fields)
        assert signature_ok(fields, r.body, ACCESS_KEY, SECRET)
        assert not any(SECRET in v for v in fields.values())  # the secret signs, it never travels


def assert_secret_not_shown(run: Run, *secrets: str) -> None:
    for s in secrets:
        assert s not in run.out and s not in run.err


def test_acl_keys_from_flags_sign_every_request(cluster: FakeCluster) -> None:
    cluster.set_acl(ACCESS_KEY, SECRET)
    run = run_here(*PLAIN, "-n", cluster.ns, "--access-key", ACCESS_KEY, "--secret-key", SECRET)
    assert run.code == 0, run.err
    assert "Consume Diff Total: 33" in run.out
    assert_signed_only(cluster)
    assert_secret_not_shown(run, SECRET)


def test_acl_keys_from_the_environment(cluster: FakeCluster) -> None:
    cluster.set_acl(ACCESS_KEY, SECRET)
    env = cli_env(MQCTL_ACCESS_KEY=ACCESS_KEY, MQCTL_SECRET_KEY=SECRET)
    run = run_here("consumerConnection", "-g", "G1", "-n", cluster.ns, "-o", "plain", env=env)
    assert run.code == 0, run.err
    assert "10.0.0.5@1111" in run.out
    assert_signed_only(cluster)
    assert_secret_not_shown(run, SECRET)


def test_acl_without_keys_is_denied(cluster: FakeCluster) -> None:
    cluster.set_acl(ACCESS_KEY, SECRET)
    run = run_here(*PLAIN, "-n", cluster.ns)
    assert run.code == 8  # today: 5, shared with every other refusal
    assert run.error_line() == (
        f"mqctl: error: name server {cluster.ns} denied GET_ROUTEINFO_BY_TOPIC on topic %RETRY%G1 to "
        "an unsigned request: the request is not signed (name server: username cannot be null.)"
    )
    assert "--access-key" in run.err.splitlines()[-1]  # the hint says what to pass


def test_acl_with_a_wrong_secret_is_denied_and_no_secret_is_shown(cluster: FakeCluster) -> None:
    cluster.set_acl(ACCESS_KEY, SECRET, namesrv=False)
    cluster.broker("broker-a").acl = None  # broker-b alone checks: its line is the whole error
    wrong = "Wr0ng-secret-value"
    run = run_here(*PLAIN, "-n", cluster.ns, "--access-key", ACCESS_KEY, "--secret-key", wrong)
    assert run.code == 8
    assert brokers_of_rows(run.out) == {"broker-a"}  # what could be read is printed first
    assert (
        f"broker-b denied GET_CONSUME_STATS on group G1 for access key {ACCESS_KEY}: signature check "
        "failed — wrong secret? (broker: check signature failed.)"
    ) in run.error_line()
    assert_secret_not_shown(run, wrong, SECRET)


@pytest.mark.parametrize(
    ("key", "secret", "why", "remark"),
    [
        (ACCESS_KEY, "Wr0ng-secret-value", "signature check failed — wrong secret?",
         f"Check signature failed for accessKey={ACCESS_KEY}"),
        ("ghostuser", SECRET, "unknown access key", "No acl config for ghostuser"),
    ],
)  # fmt: skip
def test_a_4x_acl_refusal_reads_without_java(
    cluster: FakeCluster, key: str, secret: str, why: str, remark: str
) -> None:
    """4.x answers code 1 with 'org.apache...AclException: <why>, <a stack frame>' (a real 4.9.7
    broker's words): one line per broker without the class and the frame, exit 8 (today: 5)."""
    cluster.set_acl(ACCESS_KEY, SECRET, namesrv=False, style="4.x")  # a 4.x name server has no ACL
    run = run_here(*PLAIN, "-n", cluster.ns, env=cli_env(MQCTL_ACCESS_KEY=key, MQCTL_SECRET_KEY=secret))
    assert run.code == 8
    line = run.error_line()
    for broker in ("broker-a", "broker-b"):
        assert (
            f"{broker} denied GET_CONSUME_STATS on group G1 for access key {key}: {why} (broker: {remark})"
            in line
        )
    assert "org.apache" not in run.err and ".java:" not in run.err and "AclException" not in run.err
    assert_secret_not_shown(run, secret)


def test_a_group_without_a_grant_is_named(cluster: FakeCluster) -> None:
    cluster.set_acl(ACCESS_KEY, SECRET, namesrv=False)
    cluster.broker("broker-a").denied_groups = {"G1"}
    cluster.broker("broker-b").acl = None
    env = cli_env(MQCTL_ACCESS_KEY=ACCESS_KEY, MQCTL_SECRET_KEY=SECRET)
    run = run_here(*PLAIN, "-n", cluster.ns, env=env)
    assert run.code == 8
    assert brokers_of_rows(run.out) == {"broker-b"}
    assert (
        f"broker-a denied GET_CONSUME_STATS on group G1 for access key {ACCESS_KEY}: no permission on "
        f"group G1 (broker: User:{ACCESS_KEY} has no permission to access Group:G1 from 127.0.0.1, no "
        "matched policies.)"
    ) in run.error_line()


def test_debug_adds_a_traceback_and_keeps_the_exit_status(cluster: FakeCluster) -> None:
    cluster.set_acl(ACCESS_KEY, SECRET)
    wrong = "Wr0ng-secret-value"
    plain = run_here(*PLAIN, "-n", cluster.ns, "--access-key", ACCESS_KEY, "--secret-key", wrong)
    debug = run_here("--debug", *PLAIN, "-n", cluster.ns, "--access-key", ACCESS_KEY, "--secret-key", wrong)
    assert plain.code == debug.code == 8  # today: 1 with --debug (an uncaught exception)
    assert "Traceback (most recent call last)" in debug.err and "AccessDeniedError" in debug.err
    assert debug.err.splitlines()[-2:] == plain.err.splitlines()[-2:]  # the same line and hint last
    assert_secret_not_shown(debug, wrong, SECRET)


def test_debug_keeps_the_exit_status_of_an_unreachable_cluster(cluster: FakeCluster) -> None:
    ns = cluster.namesrvs[0]
    ns.down()
    run = run_here("--debug", *PLAIN, "-n", ns.addr)
    assert run.code == 4 and "Traceback" in run.err


# --- bugs these tests found (fixed; kept as regressions) ---------------------------------------


def test_overview_with_a_broker_down_is_not_a_silent_success(cluster: FakeCluster) -> None:
    dead = cluster.broker("broker-b")
    dead.down()
    run = run_here("consumerProgress", "-n", cluster.ns, "-o", "plain")
    assert run.code == 4, run.out  # today: 0, G2's diff total 5 instead of 17, G4 missing
    assert "broker-b" in run.error_line()
