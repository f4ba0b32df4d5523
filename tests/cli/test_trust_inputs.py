"""Inputs mqctl used to accept although it should not (issue 16): one table per class.

- an empty or blank value, for every command and every option that takes one;
- true|false options take exactly true or false; --timeout a real number of seconds;
- the README's and --help's examples, as a shell runs them.

The demo store (tests/conftest.py) is the cluster: its facts (group order-analytics on
OrderEvents, 7 groups) are written down in mqctl/store/demo.py.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from mqctl.cli.app import app

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


# ------------------------------------------------------------------ examples, as a shell runs them

# A stand-in `mqctl` counts its calls; any other word run as a command is reported.
_SHELL_PROBE = """
mqctl() { echo MQCTL-CALLED; }
command_not_found_handle() { echo "NOT-A-COMMAND: $1"; return 127; }
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
def test_readme_examples_run_one_mqctl_command(line: str) -> None:
    r = subprocess.run(["bash", "-c", _SHELL_PROBE + line], capture_output=True, text=True)
    assert r.stdout.split("\n").count("MQCTL-CALLED") == 1 and "NOT-A-COMMAND" not in r.stdout, (
        line,
        r.stdout,
    )
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
