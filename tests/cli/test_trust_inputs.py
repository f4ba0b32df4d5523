"""Inputs mqctl used to accept although it should not (issue 16): one table per class.

- an empty or blank value, for every command and every option that takes one;
- true|false options take exactly true or false; --timeout a real number of seconds;
- a stdout whose encoding lacks a name's characters; a stdout nobody reads any more;
- the README's and --help's examples, as a shell runs them.

The demo store (tests/conftest.py) is the cluster: its facts (group order-analytics on
OrderEvents, 7 groups) are written down in mqctl/store/demo.py.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from mqctl.cli.app import app
from mqctl.store.writer import StoreWriter

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()
ENV = {"MQCTL_CONFIG": os.devnull, "NAMESRV_ADDR": "", "MQCTL_PROFILE": ""}


def mqctl(*args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), env={**ENV, **(env or {})})


def one_error(result) -> str:  # type: ignore[no-untyped-def]
    lines = [x for x in result.stderr.splitlines() if not x.startswith("mqctl: warning: ")]
    assert len(lines) >= 1 and lines[0].startswith("mqctl: error: "), result.stderr
    assert all(x.startswith("hint: ") for x in lines[1:]), result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


@pytest.fixture(scope="module")
def store(demo_store) -> list[str]:  # type: ignore[no-untyped-def]
    return ["--store", f"broker-a={demo_store.root}"]


# ------------------------------------------------------------------ empty values name nothing

G, T = "order-analytics", "OrderEvents"
EMPTY = [
    # (command line before the store flags, the flag the error names)
    (["consumerProgress", "-g", ""], "-g/--groupName"),
    (["consumerProgress", "-g", "   "], "-g/--groupName"),
    (["consumerProgress", "--groupName="], "-g/--groupName"),
    (["consumerProgress", "-g", G, "-t", ""], "-t/--topicName"),
    (["consumerProgress", "-g", G, "--tags", ""], "--tags"),
    (["consumerProgress", "-g", G, "--tags", " \t"], "--tags"),
    (["consumerProgress", "-g", G, "--max-lag-time", ""], "--max-lag-time"),
    (["consumerProgress", "-g", G, "--why", ""], "--why"),
    (["consumerProgress", "-g", G, "--history", ""], "--history"),
    (["consumerProgress", "-g", G, "-c", ""], "-c/--cluster"),
    (["allocateMQ", "-t", "", "-i", "a"], "-t/--topic"),
    (["allocateMQ", "-t", T, "-i", " "], "-i/--ipList"),
    (["allocateMQ", "-t", T, "-i", "a", "--compare-with", ""], "--compare-with"),
    (["resetOffsetByTime", "-g", "", "-t", T, "-s", "now"], "-g/--group"),
    (["resetOffsetByTime", "-g", G, "-t", " ", "-s", "now"], "-t/--topic"),
    (["resetOffsetByTime", "-g", G, "-t", T, "-s", ""], "-s/--timestamp"),
    (["resetOffsetByTime", "-g", G, "-t", T, "-s", "now", "-b", "", "-q", "0"], "-b/--broker"),
    (["resetOffsetByTime", "-g", G, "-t", T, "-s", "now", "--export", ""], "--export"),
    (["resetOffsetByTime", "--from-file", ""], "--from-file"),
    (["resetOffsetByTime", "--undo", " "], "--undo"),
    (["consumerConnection", "-g", ""], "-g/--consumerGroup"),
    (["lagReport", "--out", ""], "--out"),
    (["lagReport", "--subscriptions", ""], "--subscriptions"),
    (["consumerProgress", "--profile", ""], "--profile"),
    (["consumerProgress", "-S", ""], "-S/--store"),
    (["demo", ""], "PATH"),
]


@pytest.mark.parametrize(("args", "flag"), EMPTY, ids=[" ".join(a) + f" [{f}]" for a, f in EMPTY])
def test_an_empty_value_is_a_usage_error(store: list[str], args: list[str], flag: str) -> None:
    cluster = [] if args[0] == "demo" or "-S" in args else store
    r = mqctl(*args, *cluster)
    assert r.exit_code == 2, (r.exit_code, r.stdout[:300], r.stderr)
    assert one_error(r) == f"mqctl: error: {flag} is empty: give a value, or leave the option out"
    assert r.stdout == ""  # not the fleet overview, not a plan


@pytest.mark.parametrize("value", ["", " "])
def test_namesrv_empty_is_a_usage_error(value: str) -> None:
    r = mqctl("consumerProgress", "-g", G, "-n", value)
    assert r.exit_code == 2 and "-n/--namesrvAddr is empty" in one_error(r)


def test_a_blank_environment_value_is_a_usage_error(store: list[str]) -> None:
    r = mqctl("consumerProgress", "-g", G, *store, env={"MQCTL_PROFILE": "   "})
    assert (
        r.exit_code == 2 and one_error(r) == "mqctl: error: $MQCTL_PROFILE is blank: set a value, or unset it"
    )


def test_every_command_checks_every_option() -> None:
    """The check lives in the command class, so no command and no option is left out."""
    from mqctl.cli.command import MqctlCommand

    root = typer.main.get_command(app)
    ctx = root.make_context("mqctl", [], resilient_parsing=True)
    names = root.list_commands(ctx)  # type: ignore[attr-defined]
    assert names and all(isinstance(root.get_command(ctx, n), MqctlCommand) for n in names)  # type: ignore[attr-defined]


# ------------------------------------------------------------------ true|false, --timeout

TRUE_FALSE = [
    # (value of consumerProgress -s, exit code, Client IP column shown)
    ("maybe", 2, None),
    ("yes", 2, None),
    ("1", 2, None),
    ("true", 0, True),
    ("TRUE", 0, True),
    (" false ", 0, False),
    ("False", 0, False),
]


@pytest.mark.parametrize(("value", "code", "column"), TRUE_FALSE, ids=[repr(v[0]) for v in TRUE_FALSE])
def test_show_client_ip_takes_true_or_false(
    store: list[str], value: str, code: int, column: bool | None
) -> None:
    r = mqctl("consumerProgress", "-g", G, "-s", value, "-o", "plain", *store)
    assert r.exit_code == code, r.stderr
    if code:
        assert one_error(r) == f"mqctl: error: -s/--showClientIP: expected true or false, got {value!r}"
    else:
        assert ("#Client IP" in r.stdout.splitlines()[0]) is column


def test_force_takes_true_or_false_the_same_way(store: list[str]) -> None:
    r = mqctl("resetOffsetByTime", "-g", G, "-t", T, "-s", "now", "-f", "maybe", *store)
    assert (
        r.exit_code == 2 and one_error(r) == "mqctl: error: -f/--force: expected true or false, got 'maybe'"
    )


TIMEOUTS = ["nan", "NaN", "inf", "-inf", "0", "-1", "1e300", "86401"]
COMMANDS = [
    ["consumerProgress", "-g", G],
    ["consumerProgress"],
    ["allocateMQ", "-t", T, "-i", "a,b"],
    ["resetOffsetByTime", "-g", G, "-t", T, "-s", "now"],
    ["consumerConnection", "-g", G],
    ["lagReport", "--status", "--history", "nowhere"],
]


@pytest.mark.parametrize("value", TIMEOUTS)
@pytest.mark.parametrize("args", COMMANDS, ids=[a[0] + ("-g" if "-g" in a else "") for a in COMMANDS])
def test_timeout_is_a_real_number_of_seconds(store: list[str], args: list[str], value: str) -> None:
    r = mqctl(*args, "--timeout", value, *store)
    assert r.exit_code == 2, (r.exit_code, r.stderr)
    assert "'--timeout'" in one_error(r) and "at most 86400" in r.stderr


@pytest.mark.parametrize("value", ["0.5", "86400"])
def test_timeout_in_range_is_accepted(store: list[str], value: str) -> None:
    assert mqctl("consumerProgress", "-g", G, "--timeout", value, *store).exit_code == 0


# ------------------------------------------------------------------ numbers Java would not parse

# '\u00b2' (SUPERSCRIPT TWO) passes Python's str.isdigit() but not int(): it used to end as
# "internal error: ValueError" (exit 1). 2^63 and 2^31 are what Java 17's Long.parseLong /
# Integer.parseInt refuse (tests/ops/test_reset_intflags.py): a --shift-by beyond a long used to
# be planned, clamped, and printed as a JSON number no Java or Go reader takes.
SUP2 = "\u00b2"
NOT_NUMBERS = [
    (
        ["resetOffsetByTime", "-g", G, "-t", T, "--to-offset", SUP2],
        f"--to-offset: expected an integer, got '{SUP2}'",
    ),
    (
        ["resetOffsetByTime", "-g", G, "-t", T, "--shift-by", str(2**63)],
        "--shift-by: 9223372036854775808 does not fit",
    ),
    (
        ["resetOffsetByTime", "-g", G, "-t", T, "-b", "broker-a", "-q", str(2**31), "-o", "1"],
        "-q/--queue: 2147483648",
    ),
    (["consumerProgress", "-g", G, "--watch", SUP2], f"malformed duration '{SUP2}'"),
    (["consumerProgress", "-g", G, "--why", f"broker-a:{SUP2}"], "expected BROKER:QID or TOPIC/BROKER/QID"),
    (["exporter", "--listen", f":{SUP2}"], "--listen"),
]


@pytest.mark.parametrize(("args", "needle"), NOT_NUMBERS, ids=[n[:32] for _, n in NOT_NUMBERS])
def test_a_number_java_would_not_parse_is_a_usage_error(
    store: list[str], args: list[str], needle: str
) -> None:
    r = mqctl(*args, *store)
    assert r.exit_code == 2, (r.exit_code, r.stderr)
    assert needle in one_error(r) and "internal error" not in r.stderr
    assert r.stdout == ""


def test_a_plan_row_with_a_superscript_queue_id_names_the_file(store: list[str], tmp_path: Path) -> None:
    plan = tmp_path / "plan.csv"
    assert (
        mqctl("resetOffsetByTime", "-g", G, "-t", T, "--to-earliest", "--export", str(plan), *store).exit_code
        == 0
    )
    lines = plan.read_text().splitlines()
    head, row = lines[0].split(","), lines[1].split(",")
    row[head.index("queueId")] = SUP2
    plan.write_text("\n".join([lines[0], ",".join(row), *lines[2:]]) + "\n")
    r = mqctl("resetOffsetByTime", "--from-file", str(plan), *store)
    assert r.exit_code == 2, (r.exit_code, r.stderr)
    assert one_error(r).startswith(
        f"mqctl: error: plan file {plan}: row 1: queueId is missing or not an integer"
    )


# ------------------------------------------------------------------ options that would do nothing

# Each was accepted and ignored (lagReport's after a Spark job of half a minute); kafka-consumer-groups
# refuses an option its action does not take, and so does mqctl now. An option left at its default
# is never refused (every other test runs without these flags); the second table gives the same
# options where they do apply.
IDLE = [
    (
        ["consumerProgress", "-g", G, "--window", "5"],
        "--window needs --watch, --history PATH or --status-from PATH",
    ),
    (["consumerProgress", "--window", "5"], "--window needs --watch"),
    (["consumerProgress", "-g", G, "--why", "broker-a:0", "--window", "5"], "--window needs --watch"),
    (["consumerProgress", "-g", G, "--retry-scan", "5"], "--retry-scan needs --why, or --watch"),
    (["consumerProgress", "-g", G, "--sort", "name"], "--sort orders the groups overview"),
    (
        ["allocateMQ", "-t", T, "-i", "a,b", "--virtual-nodes", "5"],
        "--virtual-nodes is a CONSISTENT_HASH setting",
    ),
    (
        ["allocateMQ", "-t", T, "-i", "a,b", "--delegate", "avg"],
        "--delegate is a MACHINE_ROOM_NEARBY setting",
    ),
    (
        ["allocateMQ", "-t", T, "-i", "a,b", "--consumer-idcs", "x"],
        "--consumer-idcs is a MACHINE_ROOM setting",
    ),
    (
        ["allocateMQ", "-t", T, "-i", "a,b", "--strategy", "avg", "--config-queues", "broker-a:0"],
        "--config-queues",
    ),
    (
        ["allocateMQ", "-t", T, "-i", "a@x,b@x", "--consumer-rooms", "a=x"],
        "--consumer-rooms is a MACHINE_ROOM_NEARBY",
    ),
    (
        ["resetOffsetByTime", "-g", G, "-t", T, "-s", "now", "--overwrite"],
        "--overwrite lets --export replace a file",
    ),
    (["lagReport", "--window", "1h"], "--window is the span --status judges; there is no --status"),
    (["lagReport", "--format", "csv"], "--format applies to the dataset --out writes"),
    (["lagReport", "--format", "json", "--overwrite"], "--format and --overwrite apply to the dataset --out"),
]


@pytest.mark.parametrize(("args", "needle"), IDLE, ids=[n[:40] for _, n in IDLE])
def test_an_option_that_would_do_nothing_is_a_usage_error(
    store: list[str], args: list[str], needle: str
) -> None:
    r = mqctl(*args, *store)
    assert r.exit_code == 2, (r.exit_code, r.stderr)
    assert one_error(r).startswith(f"mqctl: error: {needle}") and r.stdout == ""


IDLE_OK = [
    ["consumerProgress", "--sort", "name"],
    ["consumerProgress", "-g", G, "--why", "broker-a:0", "--retry-scan", "5"],
    ["allocateMQ", "-t", T, "-i", "a,b", "--strategy", "consistent_hash", "--virtual-nodes", "5"],
    ["allocateMQ", "-t", T, "-i", "a,b", "--strategy", "config", "--config-queues", "broker-a:0"],
    [
        *("allocateMQ", "-t", T, "-i", "a@x,b@x", "--strategy", "machine_room_nearby", "--delegate"),
        *("consistent_hash", "--virtual-nodes", "3", "--broker-rooms", "broker-a=x"),
    ],
]


@pytest.mark.parametrize("args", IDLE_OK, ids=[" ".join(a[3:7]) for a in IDLE_OK])
def test_the_same_options_where_they_apply(store: list[str], args: list[str]) -> None:
    r = mqctl(*args, *store)
    assert r.exit_code == 0, (r.exit_code, r.stderr)


def test_the_window_from_history_is_accepted(store: list[str], tmp_path: Path) -> None:
    history = str(tmp_path / "h.jsonl")
    assert mqctl("consumerProgress", "-g", G, "--history", history, "--window", "3", *store).exit_code == 0
    r = mqctl("consumerProgress", "-g", G, "--status-from", history, "--window", "3", "-o", "json")
    assert r.exit_code == 0, r.stderr


def test_lagreport_status_refuses_a_missing_history_before_spark(tmp_path: Path) -> None:
    """Before: Spark started (10 s here) and then said the directory is missing."""
    env = {**os.environ, **ENV}
    cmd = [sys.executable, "-m", "mqctl", "lagReport", "--status", "--history", str(tmp_path / "none")]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 2, r.stderr
    assert r.stderr.splitlines()[0] == f"mqctl: error: --history {tmp_path / 'none'}: no such directory"
    assert "Spark log" not in r.stderr and "pyspark" not in r.stderr


# ------------------------------------------------------------------ one store under two names

# Before: read twice. consumerProgress -g doubled every row (and --max-lag judged the double), a
# reset planned each queue twice over the same files.
TWICE = [
    ["consumerProgress", "-g", G, "--max-lag", "500"],
    ["consumerProgress"],
    ["resetOffsetByTime", "-g", G, "-t", T, "--to-earliest", "--execute"],
    ["allocateMQ", "-t", T, "-i", "a,b"],
    ["lagReport"],
]


@pytest.mark.parametrize("args", TWICE, ids=[a[0] + (" -g" if "-g" in a else "") for a in TWICE])
def test_one_store_root_under_two_broker_names_is_refused(
    demo_store, tmp_path: Path, args: list[str]
) -> None:  # type: ignore[no-untyped-def]
    root = demo_store.root
    link = tmp_path / "same-store"
    link.symlink_to(root)
    before = {p: p.read_bytes() for p in (root / "config").iterdir()}
    for second in (str(root), str(link)):
        r = mqctl(*args, "-S", f"broker-a={root}", "-S", f"broker-b={second}")
        assert r.exit_code == 2, (r.exit_code, r.stderr)
        same = str(root) if second == str(root) else f"{root} and {link}"
        assert (
            one_error(r) == f"mqctl: error: --store: broker-a and broker-b name the same store root ({same})"
        )
        assert r.stdout == ""
    assert {p: p.read_bytes() for p in (root / "config").iterdir()} == before


def test_a_profile_naming_one_store_twice_is_refused(demo_store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "config.toml"
    config.write_text(
        f'[profiles.p.stores]\nbroker-a = "{demo_store.root}"\nbroker-b = "{demo_store.root}"\n'
    )
    r = mqctl("consumerProgress", "--profile", "p", env={"MQCTL_CONFIG": str(config)})
    assert r.exit_code == 2, r.stderr
    assert one_error(r).startswith(
        "mqctl: error: profile 'p': broker-a and broker-b name the same store root"
    )


# ------------------------------------------------------------------ stdout's encoding

GROUP = "grüppe-订单"  # Latin-1 has the ü, not the CJK characters; ASCII has neither


@pytest.fixture(scope="module")
def unicode_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("unicode") / "store"
    w = StoreWriter(root, broker_name="broker-ü", commitlog_file_size=4096, cq_file_size=100)
    w.create_topic("订单-Töpic", queues=1)
    w.create_topic(f"%RETRY%{GROUP}", queues=1)  # so that mqadmin's overview (plain) lists it
    w.create_group(GROUP)
    for ts in (1000, 2000, 3000):
        w.put("订单-Töpic", 0, b"x", tags="Täg", store_timestamp=ts)
    w.commit_offset(GROUP, "订单-Töpic", 0, 1)  # max 3: diff 2
    w.close()
    return root


def _run(args: list[str], encoding: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, **ENV, "PYTHONIOENCODING": encoding, "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "mqctl", *args], capture_output=True, env=env, cwd=ROOT)


ENCODINGS = [
    # (PYTHONIOENCODING, command beyond the store flags)
    ("ascii", ["consumerProgress", "-g", GROUP, "-o", "plain"]),
    ("ascii", ["consumerProgress", "-g", GROUP, "-o", "table"]),
    ("ascii", ["consumerProgress", "-g", GROUP, "-o", "csv"]),
    ("ascii", ["consumerProgress", "-o", "plain"]),
    ("ascii", ["resetOffsetByTime", "-g", GROUP, "-t", "订单-Töpic", "-s", "now", "--output", "plain"]),
    ("latin-1", ["consumerProgress", "-g", GROUP, "-o", "plain"]),
]


@pytest.mark.parametrize(
    ("encoding", "args"), ENCODINGS, ids=[f"{e}-{' '.join(a[:4])}" for e, a in ENCODINGS]
)
def test_names_stdout_cannot_encode_are_escaped_not_an_error(
    unicode_store: Path, encoding: str, args: list[str]
) -> None:
    r = _run([*args, "--store", f"broker-ü={unicode_store}"], encoding)
    err = r.stderr.decode(encoding, errors="backslashreplace")
    assert r.returncode == 0, err
    assert "internal error" not in err and "Traceback" not in err
    out = r.stdout.decode(encoding)  # strict: what was written is in the stream's encoding
    assert "\\u8ba2\\u5355" in out  # 订单, as JSON escapes
    assert err.count("cannot show some characters") == 1


def test_json_stays_valid_and_exact_under_ascii(unicode_store: Path) -> None:
    r = _run(["consumerProgress", "-g", GROUP, "-o", "json", "--store", f"broker-ü={unicode_store}"], "ascii")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout.decode("ascii"))
    assert doc["group"] == GROUP
    assert (doc["rows"][0]["topic"], doc["rows"][0]["brokerName"], doc["rows"][0]["diff"]) == (
        "订单-Töpic",
        "broker-ü",
        2,
    )


def test_utf8_output_is_untouched(unicode_store: Path) -> None:
    r = _run(
        ["consumerProgress", "-g", GROUP, "-o", "plain", "--store", f"broker-ü={unicode_store}"], "utf-8"
    )
    assert r.returncode == 0 and "订单-Töpic" in r.stdout.decode() and b"warning" not in r.stderr


# ------------------------------------------------------------------ a reader that went away

CLOSED_PIPE = [
    # (arguments, exit status): --help and --version are done once printed; a command's output
    # that cannot be written ends as a Unix tool killed by SIGPIPE does (128 + 13).
    (["--help"], 0),
    (["--version"], 0),
    (["consumerProgress", "--help"], 0),
    (["resetOffsetByTime", "-h"], 0),
    (["consumerProgress", "{store}"], 141),
    (["consumerProgress", "-g", G, "-o", "json", "{store}"], 141),
    (["consumerProgress", "-g", G, "-o", "table", "{store}"], 141),
    (["allocateMQ", "-t", T, "-i", "a,b", "{store}"], 141),
    (["resetOffsetByTime", "-g", G, "-t", T, "-s", "now", "{store}"], 141),
    (["resetOffsetByTime", "-g", G, "-t", T, "-s", "now", "--export", "-", "{store}"], 141),
]


@pytest.mark.parametrize(("args", "status"), CLOSED_PIPE, ids=[" ".join(a[:3]) for a, _ in CLOSED_PIPE])
def test_closed_stdout_ends_quietly(demo_store, args: list[str], status: int) -> None:  # type: ignore[no-untyped-def]
    argv = [a for x in args for a in (["--store", f"broker-a={demo_store.root}"] if x == "{store}" else [x])]
    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody will read: every write is EPIPE
    try:
        env = {**os.environ, **ENV}
        r = subprocess.run(
            [sys.executable, "-m", "mqctl", *argv], stdout=write_end, stderr=subprocess.PIPE, env=env
        )
    finally:
        os.close(write_end)
    assert r.returncode == status, r.stderr
    # No message, no traceback, no 'Exception ignored' (a reset's DRY RUN line goes to stderr
    # with -o plain, before the plan that could not be written).
    assert [x for x in r.stderr.decode().splitlines() if not x.startswith("DRY RUN: ")] == []


# ------------------------------------------------------------------ examples, as a shell runs them

# A stand-in `mqctl` counts its calls; any other word run as a command is reported. Both write
# to a log of their own, so an example that redirects mqctl's output (`> rules.yml`) is counted too.
_SHELL_PROBE = """
mqctl() { echo MQCTL-CALLED >> "$PROBE_LOG"; }
command_not_found_handle() { echo "NOT-A-COMMAND: $1" >> "$PROBE_LOG"; return 127; }
"""


def _readme_examples() -> list[str]:
    """Lines of the README's sh blocks that run mqctl (continuations joined), except synopses
    (brackets, '...'), which show a command's shape rather than one to paste."""
    text = (ROOT / "README.md").read_text()
    lines = []
    for block in re.findall(r"^```(?:sh|bash)\n(.*?)^```", text, re.M | re.S):
        for line in block.replace("\\\n", " ").splitlines():
            words = [w for w in line.split() if not re.fullmatch(r"[A-Z_]+=\S*", w)]  # VAR=value prefixes
            if words[:1] == ["mqctl"] and not re.search(r"\[|\.\.\.", line):
                lines.append(line.strip())
    return lines


@pytest.mark.parametrize("line", _readme_examples())
def test_readme_examples_run_one_mqctl_command(line: str, tmp_path: Path) -> None:
    log = tmp_path / "probe.log"
    env = {**os.environ, "PROBE_LOG": str(log)}
    r = subprocess.run(
        ["bash", "-c", _SHELL_PROBE + line], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    calls = log.read_text() if log.exists() else ""
    assert calls.split("\n").count("MQCTL-CALLED") == 1 and "NOT-A-COMMAND" not in calls, (line, calls)
    assert r.returncode == 0 and r.stderr == "", (line, r.stderr)


def test_readme_has_a_quoted_namesrv_example() -> None:
    assert any("-n '10.0.0.1:9876;10.0.0.2:9876'" in line for line in _readme_examples())


@pytest.mark.parametrize(
    "command",
    ["consumerProgress", "allocateMQ", "resetOffsetByTime", "consumerConnection", "lagReport", "demo"],
)
def test_help_names_values_not_types(command: str) -> None:
    """`demo --help` showed `{path}`; options showed `<str>`: a value's name, as mqadmin writes it."""
    r = mqctl(command, "--help")
    assert r.exit_code == 0
    usage_and_options = [x for x in r.stdout.splitlines() if x.startswith(("Usage:", "  -"))]
    assert usage_and_options
    for line in usage_and_options:
        assert not re.search(r"\{[a-zA-Z_]+\}|<[a-z]+>", line), line
    if command == "demo":
        assert r.stdout.splitlines()[0] == "Usage: mqctl demo [OPTIONS] PATH"
