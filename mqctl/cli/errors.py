"""The one place that turns exceptions into a one-line error, a hint and an exit status."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterable
from typing import Any, NoReturn, TypeVar

import typer

from mqctl.cli import streams
from mqctl.errors import ExitStatus, MqctlError, os_error_message

F = TypeVar("F", bound=Callable[..., Any])

_debug = False


def set_debug(flag: bool) -> None:
    global _debug
    _debug = flag


def debug_enabled() -> bool:
    return _debug or os.environ.get("MQCTL_DEBUG", "") not in ("", "0")


def report(message: str, hint: str | None = None) -> None:
    sys.stderr.write(f"mqctl: error: {message}\n")
    if hint:
        sys.stderr.write(f"hint: {hint}\n")
    sys.stderr.flush()


def report_click_error(e: Any) -> int:
    """click's parse errors (a ClickException) in mqctl's one-line format; returns the exit status."""
    if type(e).__name__ == "NoArgsIsHelpError":  # `mqctl` alone: the help itself, as click does
        sys.stderr.write(str(e.format_message()) + "\n")
        return int(e.exit_code)
    possibilities = getattr(e, "possibilities", None)
    # NoSuchOption's formatted text repeats the possibilities the hint gives; typer's coercion
    # prefixes pydantic's "Value error, ".
    text = str(e.message if possibilities else e.format_message()).replace("Value error, ", "")
    message = " ".join(text.split())
    ctx = getattr(e, "ctx", None)
    path = ctx.command_path if ctx is not None else "mqctl"
    hint = f"see '{path} --help'"
    if possibilities:
        hint = f"did you mean {' or '.join(sorted(possibilities))}? " + hint
    report(message, hint)
    return int(e.exit_code)


def warn(message: str) -> None:
    sys.stderr.write(f"mqctl: warning: {message}\n")
    sys.stderr.flush()


def warn_all(messages: Iterable[object]) -> None:
    """``warn`` each message (typed warnings as their text)."""
    for m in messages:
        warn(str(m))


def _traceback() -> None:
    """--debug: the traceback of the exception being handled, before its one-line error. Frames
    and messages only (no local variables: a secret must not reach a terminal or a log)."""
    if debug_enabled():
        import traceback

        traceback.print_exc(file=sys.stderr)
        sys.stderr.flush()


def _os_error(e: OSError) -> NoReturn:
    """A read-only filesystem, a full disk, a permission: the path and the reason, not a bug."""
    _traceback()
    report(os_error_message(e), "check the path, its permissions and free space")
    raise typer.Exit(int(ExitStatus.ERROR)) from None


def handle_errors(fn: F) -> F:
    """Wrap a command: typed errors become one line on stderr and their exit status. --debug adds
    the traceback first and changes nothing else (the exit status is the same)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            rv = fn(*args, **kwargs)
            streams.flush_stdout()  # a closed pipe surfaces here, not in Python's exit
            return rv
        except typer.Exit:
            raise
        except MqctlError as e:
            _traceback()
            report(e.message, e.hint)
            raise typer.Exit(int(e.exit_status)) from None
        except KeyboardInterrupt:
            _traceback()
            sys.stderr.write("mqctl: interrupted\n")
            raise typer.Exit(int(ExitStatus.INTERRUPTED)) from None
        except BrokenPipeError as e:
            if not streams.stdout_broken():
                return _os_error(e)
            # Output piped into `head`, which has read enough: no message; 141 = 128 + SIGPIPE,
            # what a Unix tool killed by the signal returns, so `set -o pipefail` still sees it.
            streams.quiet_stdout()
            raise typer.Exit(int(ExitStatus.BROKEN_PIPE)) from None
        except SystemExit as e:
            # rich's Console.on_broken_pipe exits 1 from inside its `except BrokenPipeError`:
            # the same closed pipe as above, so the same quiet 141.
            if not isinstance(e.__context__, BrokenPipeError):
                raise
            streams.quiet_stdout()
            raise typer.Exit(int(ExitStatus.BROKEN_PIPE)) from None
        except OSError as e:
            return _os_error(e)
        except Exception as e:  # noqa: BLE001 - last line of defence: never a traceback by default
            _traceback()
            report(f"internal error: {type(e).__name__}: {e}", "run again with --debug for the traceback")
            raise typer.Exit(int(ExitStatus.ERROR)) from None

    return wrapper  # type: ignore[return-value]
