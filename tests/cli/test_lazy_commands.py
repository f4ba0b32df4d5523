"""Commands load lazily: `mqctl --version` and `mqctl --help` import no command module, a command
imports its own, and what they print is what the eagerly built command tree prints."""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer
import typer.main
from typer.testing import CliRunner

from mqctl.cli.app import COMMANDS, app

MODULES = sorted({c.module for c in COMMANDS.values()})


def _loaded_after(*argv: str) -> list[str]:
    probe = (
        "import sys\nfrom mqctl.cli.app import main\n"
        f"sys.argv = ['mqctl', *{list(argv)!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"sys.stderr.write('LOADED=' + ','.join(m for m in {MODULES!r} if m in sys.modules))\n"
    )
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    loaded = r.stderr.rsplit("LOADED=", 1)[1].strip()
    return loaded.split(",") if loaded else []


def _probe(argv: list[str], report: str, patch: str = "") -> str:
    """stderr of a fresh Python that runs ``patch`` (lines), then mqctl on ``argv`` (asserting
    it succeeds), then ``report`` (lines that write what they find to stderr)."""
    probe = (
        "import sys\nfrom mqctl.cli.app import main\n"
        f"{patch}sys.argv = ['mqctl', *{argv!r}]\n"
        "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        f"{report}"
    )
    return subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stderr


@pytest.mark.parametrize("argv", [("--version",), ("--help",), ()])
def test_version_and_help_import_no_command(argv: tuple[str, ...]) -> None:
    assert _loaded_after(*argv) == []


def test_a_command_imports_its_own_module_only() -> None:
    assert _loaded_after("consumerConnection", "--help") == ["mqctl.cli.connection"]
    assert _loaded_after("ALLOCATEmq", "-h") == ["mqctl.cli.allocate"]


def _eager_app() -> typer.Typer:
    """The command tree as app.py built it before: every command registered at import."""
    import importlib

    from mqctl.cli import app as app_module

    eager = typer.Typer(
        name="mqctl",
        help=app.info.help,
        context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110},
        add_completion=False,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
    )
    eager.callback()(app_module._main)
    for name, c in COMMANDS.items():
        eager.command(name)(getattr(importlib.import_module(c.module), c.function))
    return eager


@pytest.mark.parametrize("width", [80, 110, 60])
def test_help_lists_the_commands_as_the_eager_tree_does(width: int) -> None:
    runner = CliRunner(env={"COLUMNS": str(width)})
    ours = runner.invoke(app, ["--help"], terminal_width=width)
    theirs = runner.invoke(_eager_app(), ["--help"], terminal_width=width)
    assert ours.exit_code == theirs.exit_code == 0
    assert "consumerProgress" in ours.stdout
    assert ours.stdout == theirs.stdout


@pytest.mark.parametrize("name", list(COMMANDS))
def test_summary_is_the_first_paragraph_of_the_commands_help(name: str) -> None:
    # click's short help reads the first paragraph word by word: line breaks do not matter.
    root = typer.main.get_command(app)
    ctx = root.make_context("mqctl", [], resilient_parsing=True)
    cmd = root.get_command(ctx, name)  # type: ignore[attr-defined]
    first = " ".join(cmd.help.split("\n\n")[0].split())
    assert first == " ".join(COMMANDS[name].summary.split()), f"cli/app.py: COMMANDS[{name!r}].summary"


_NEEDLESS_FOR_G = (
    "json",
    "json.decoder",
    "json.encoder",
    "mqctl.fastjson",
    "mqctl.backends.base",
    "mqctl.render.progressbar",
)


def test_a_live_read_of_mqadmins_columns_loads_only_the_model_it_uses() -> None:
    """consumerProgress -g -o plain -n: routes, consume stats and rows; nothing of --watch, the
    overview's groups, positions in queues (lag time, --tags) or offset writes."""
    from mqctl_testkit.fakecluster import FakeCluster
    from mqctl_testkit.live_scenario import build_model

    cluster = FakeCluster(build_model())
    try:
        stderr = _probe(
            ["consumerProgress", "-g", "G1", "-n", cluster.ns, "-o", "plain"],
            f"sys.stderr.write('NEEDLESS=' + ','.join(m for m in {_NEEDLESS_FOR_G!r} if m in sys.modules) + '\\n')\n"
            "sys.stderr.write('LOADED=' + ','.join(sorted(m for m in sys.modules if m.startswith('mqctl.model.'))))\n",
        )
    finally:
        cluster.close()
    assert "LOADED=" in stderr, stderr
    # Each of these cost a plain -g time for nothing: json's Python modules (mqctl.cjson reads
    # the answers), fastjson's reader (a -g's answers are standard JSON), the Backend Protocol
    # (annotations only), the progress bar (stderr is no tty).
    assert stderr.split("NEEDLESS=", 1)[1].split("\n", 1)[0] == ""
    loaded = stderr.rsplit("LOADED=", 1)[1].strip().split(",")
    # A -g read decides what kind of group it reads (a broadcasting group's progress is on its
    # clients; a POP group's numbers mean something else): model.broadcast, .clients and .pop are
    # that question's. Nothing of --watch, positions (lag time, --tags), plans or offset writes.
    assert sorted(set(loaded) - {"mqctl.model.broadcast", "mqctl.model.clients", "mqctl.model.pop"}) == [
        "mqctl.model.queues",
        "mqctl.model.results",
        "mqctl.model.versions",
    ], loaded


def test_a_group_without_offsets_asks_if_it_is_broadcasting_without_the_overviews_modules() -> None:
    """-g of an offline group with a retry topic and no committed offset: the broadcast question
    (the connection, then the brokers' pull offsets) loads neither the client records and their
    decoder (no client answered) nor the groups overview."""
    from mqctl_testkit.fakecluster import FakeCluster
    from mqctl_testkit.live_scenario import Queue, Topic, build_model

    model = build_model()
    for broker in model.brokers:
        broker.topics["%RETRY%G5"] = Topic([Queue()])
        broker.groups.append("G5")
    cluster = FakeCluster(model)
    needless = ("mqctl.model.clients", "mqctl.remoting.bodies_client", "mqctl.backends.live_groups")
    try:
        stderr = _probe(
            ["consumerProgress", "-g", "G5", "-n", cluster.ns, "-o", "plain"],
            "sys.stderr.write('ASKED=' + str('mqctl.backends.live_pulls' in sys.modules) + '\\n')\n"
            f"sys.stderr.write('NEEDLESS=' + ','.join(m for m in {needless!r} if m in sys.modules) + '\\n')\n",
        )
    finally:
        cluster.close()
    assert "has no committed offsets on any broker" in stderr, stderr
    assert "ASKED=True" in stderr, stderr  # the pull offsets were asked for
    assert stderr.split("NEEDLESS=", 1)[1].split("\n", 1)[0] == "", stderr


def _handed_while_waiting(args: list[str], watched: tuple[str, ...]) -> dict[str, str]:
    """A live read on the fake cluster: what it hands to ``LiveBackend.when_idle`` (HANDED, module
    or function names), which of ``watched`` were imported when its first request went out
    (AT_FIRST) and at the end (AT_END)."""
    from mqctl_testkit.fakecluster import FakeCluster
    from mqctl_testkit.live_scenario import build_model

    cluster = FakeCluster(build_model())
    try:
        stderr = _probe(
            ["consumerProgress", "-n", cluster.ns, *args],
            "sys.stderr.write('HANDED=' + ','.join(handed) + '\\n')\n"
            "sys.stderr.write('AT_FIRST=' + ','.join(first[0]) + '\\n')\n"
            f"sys.stderr.write('AT_END=' + ','.join(m for m in {watched!r} if m in sys.modules) + '\\n')\n",
            patch="from mqctl.backends.live import LiveBackend\nfrom mqctl.remoting.client import RemotingClient\n"
            "handed, first = [], []\n"
            "hand, ask = LiveBackend.when_idle, RemotingClient.call_many\n"
            "def when_idle(self, work):\n"
            "    handed.append(work.args[0] if hasattr(work, 'args') else work.__name__)\n"
            "    hand(self, work)\n"
            "def call_many(self, calls, on_answer=None):\n"
            f"    first.append(first or [m for m in {watched!r} if m in sys.modules])\n"
            "    return ask(self, calls, on_answer)\n"
            "LiveBackend.when_idle, RemotingClient.call_many = when_idle, call_many\n",
        )
    finally:
        cluster.close()
    assert "AT_END=" in stderr, stderr
    return dict(line.split("=", 1) for line in stderr.splitlines() if "=" in line)


@pytest.mark.parametrize(("fmt", "writer"), [("plain", []), ("json", ["mqctl.render.jsonout"])])
def test_a_live_read_imports_what_draws_its_answers_while_it_waits(fmt: str, writer: list[str]) -> None:
    """-g -n: what turns the answers into rows and draws them is not imported before the first
    request goes out; it is handed to the backend (``Backend.when_idle``), which imports it while
    the brokers take their time to answer."""
    watched = ("mqctl.render.progress", "mqctl.model.results", "mqctl.ops.pop", *writer)
    said = _handed_while_waiting(["-g", "G1", "-o", fmt], watched)
    assert said["HANDED"].split(",") == [
        "mqctl.render.progress",
        *writer,
        "mqctl.model.results",
        "mqctl.ops.pop",
        "_prepare_stats_decoder",  # the consume stats' patterns (backends.live)
    ]
    assert said["AT_FIRST"] == ""
    assert said["AT_END"].split(",") == list(watched)


def test_the_live_overview_imports_its_drawing_while_it_waits() -> None:
    said = _handed_while_waiting(["-o", "plain"], ("mqctl.render.overview",))
    assert said["HANDED"] == "mqctl.render.overview"
    assert said["AT_FIRST"] == ""
    assert said["AT_END"] == "mqctl.render.overview"
