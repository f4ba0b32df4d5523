"""mqctl's command list — mqadmin's names, registered in one place.

Each command's module is imported only when that command runs or its help is asked for: ``mqctl
--version``, ``mqctl --help`` and every command pay for their own flags and nothing else's (the
flags of six commands built at every start cost more than a live read itself).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import typer
from typer.core import TyperCommand

from mqctl import __version__
from mqctl.cli.command import MqctlCommand, MqctlGroup
from mqctl.cli.errors import set_debug
from mqctl.errors import ExitStatus


class Command:
    """A command: the function typer turns into it, and its summary, the first paragraph of its help
    (what ``mqctl --help`` lists without importing the command; a test holds the two equal)."""

    __slots__ = ("module", "function", "summary")

    def __init__(self, module: str, function: str, summary: str) -> None:
        self.module, self.function, self.summary = module, function, summary

    def load(self, name: str) -> Any:
        """The click command typer builds for the function (as ``app.command(name)`` would)."""
        fn = getattr(importlib.import_module(self.module), self.function)
        one = typer.Typer(add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False)
        one.command(name, cls=MqctlCommand)(fn)  # the checks every command line shares
        return typer.main.get_command(one)


COMMANDS: dict[str, Command] = {
    "consumerProgress": Command(
        "mqctl.cli.progress",
        "consumer_progress",
        "Query a consumer group's progress: per queue the broker offset (max), the committed consumer "
        "offset, the diff, and the store time of the last consumed message — the numbers mqadmin prints, "
        "computed from the broker's store files.",
    ),
    "allocateMQ": Command(
        "mqctl.cli.allocate",
        "allocate_mq",
        "Show how a topic's read-permitted queues (on every broker) are allocated to a list of consumer "
        "client ids, as a consumer group's rebalance would do it.",
    ),
    "resetOffsetByTime": Command(
        "mqctl.cli.reset",
        "reset_offset_by_time",
        "Reset a consumer group's committed offsets to a point in time (or earliest, latest, an offset, a "
        "shift). DRY RUN BY DEFAULT: prints the plan and writes nothing; --execute applies it. The first "
        "output line says which one happened.",
    ),
    "consumerConnection": Command(
        "mqctl.cli.connection",
        "consumer_connection",
        "Query a consumer group's connections: per client its id, address, language and version; the "
        "group's subscriptions (topic, expression); consume type, message model, consume-from-where.",
    ),
    "lagReport": Command(
        "mqctl.cli.lagreport",
        "lag_report",
        "Fleet-wide lag as a dataset, computed by Apache Spark: one row per (group, topic, broker, queue) "
        "with minOffset, brokerOffset, consumerOffset, diff, matchedDiff, lastTimestamp, "
        "oldestUnconsumedTimestamp, lagMs and the noCommittedOffset / belowMin / aboveMax flags — the "
        "numbers consumerProgress prints, for every group at once — from store directories (-S) or a "
        "live cluster (-n: plus consumeTps, pullOffset and inflight; matchedDiff is null, lag time only "
        "with --lag-time).",
    ),
    "demo": Command(
        "mqctl.cli.demo",
        "demo",
        "Write a realistic RocketMQ store (the broker's own file formats) into PATH: several topics and "
        "groups, tags, a retry topic, partial consumption, and a queue whose oldest files were deleted. It "
        "prints commands to try next, written the way mqctl was started here, so they run as printed.",
    ),
    "exporter": Command(
        "mqctl.cli.exporter",
        "exporter",
        "Serve every consumer group's lag on an HTTP endpoint for Prometheus (/metrics: the text format, "
        "or OpenMetrics when asked), and push alerts to Alertmanager (--alertmanager URL).",
    ),
}


class _LazyCommands(Mapping[str, Any]):
    """The group's command table: names known at once, each click command built on first use."""

    def __init__(self, commands: Mapping[str, Command]) -> None:
        self._commands = commands
        self._built: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            self._built[name] = self._commands[name].load(name)
        return self._built[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._commands)

    def __len__(self) -> int:
        return len(self._commands)


class CaseInsensitiveGroup(MqctlGroup):
    """mqadmin matches command names case-insensitively (`consumerprogress` works); so do we.

    Also the one place click's own errors are printed: a usage error is one ``mqctl: error:``
    line plus a hint, exit 2, like every error mqctl raises itself (click's default is a
    three-line Usage/Try/Error block)."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = _LazyCommands(COMMANDS)  # type: ignore[assignment]

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):  # type: ignore[no-untyped-def,override]
        from mqctl.cli import streams
        from mqctl.cli.errors import report_click_error

        args = list(sys.argv[1:] if args is None else args)
        if "-w" in args or "--watch" in args:
            # consumerProgress -w takes an optional interval, which click cannot parse by itself.
            from mqctl.cli.progress import normalise_argv

            args = normalise_argv(args)
        streams.prepare_stdout()
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except typer.Abort:
            sys.stderr.write("mqctl: interrupted\n")
            rv = 130
        except Exception as e:
            # click's exceptions (typer vendors its own copy in newer versions): duck-typed.
            if not (hasattr(e, "format_message") and hasattr(e, "exit_code")):
                raise
            rv = report_click_error(e)
        try:
            streams.flush_stdout()  # what a command left buffered, while a closed pipe can be caught
        except BrokenPipeError:
            streams.quiet_stdout()
            rv = int(ExitStatus.BROKEN_PIPE)
        streams.warn_if_escaped()
        if not standalone_mode:
            return rv
        sys.exit(rv if isinstance(rv, int) else 0)

    def list_commands(self, ctx):  # type: ignore[no-untyped-def]
        return list(self.commands)  # the names, without building the commands

    def get_command(self, ctx, cmd_name):  # type: ignore[no-untyped-def]
        if cmd_name not in self.commands:
            cmd_name = next((n for n in self.commands if n.lower() == cmd_name.lower()), cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx, formatter):  # type: ignore[no-untyped-def]
        """click's command list, drawn from the summaries: ``mqctl --help`` imports no command."""
        real = self.commands
        self.commands = {n: TyperCommand(name=n, help=c.summary) for n, c in COMMANDS.items()}  # type: ignore[assignment]
        try:
            super().format_commands(ctx, formatter)
        finally:
            self.commands = real


app = typer.Typer(
    name="mqctl",
    cls=CaseInsensitiveGroup,
    help="Operations CLI for Apache RocketMQ consumer offsets: mqadmin's consumerProgress, allocateMQ, "
    "resetOffsetByTime and consumerConnection, fast, scriptable, and safe on broker store files.",
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110},
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"mqctl {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    debug: bool = typer.Option(
        False, "--debug", envvar="MQCTL_DEBUG", help="Print tracebacks too (same exit code)."
    ),
) -> None:
    set_debug(debug)


def main() -> None:
    app(prog_name="mqctl")
