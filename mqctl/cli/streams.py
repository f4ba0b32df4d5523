"""stdout as a script and a terminal meet it: an encoding that cannot show a name, a reader that
went away.

- Encoding: with ``PYTHONIOENCODING=ascii`` or a Latin-1 locale, a group named ``gröup`` cannot be
  written as is. Instead of an internal error, each character stdout's encoding lacks is written as
  its JSON escape (``\\u00f6``; astral characters as a surrogate pair), which keeps JSON output
  valid and lossless and the table and plain output readable; one warning on stderr says so and
  how to get the characters themselves.
- A closed pipe (``mqctl ... | head -1``): fd 1 is pointed at /dev/null so nothing complains when
  Python flushes at exit; the caller decides the exit status (0 for --help/--version, 141 for a
  command, as a Unix tool killed by SIGPIPE).
"""

from __future__ import annotations

import codecs
import os
import sys

ERRORS = "mqctl-json-escape"

_escaped = False


def _json_escape(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    global _escaped
    _escaped = True
    parts = []
    for ch in exc.object[exc.start : exc.end]:
        cp = ord(ch)
        if cp > 0xFFFF:
            cp -= 0x10000
            parts.append(f"\\u{0xD800 + (cp >> 10):04x}\\u{0xDC00 + (cp & 0x3FF):04x}")
        else:
            parts.append(f"\\u{cp:04x}")
    return "".join(parts), exc.end


def prepare_stdout() -> None:
    """Write what stdout's encoding lacks as JSON escapes (see the module's doc)."""
    try:
        codecs.lookup_error(ERRORS)
    except LookupError:
        codecs.register_error(ERRORS, _json_escape)
    stream = sys.stdout
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        "\U0010ffff".encode(encoding)
        return  # a UTF encoding: every character can be written
    except (UnicodeError, LookupError):
        pass
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None and getattr(stream, "errors", None) == "strict":
        reconfigure(errors=ERRORS)


def warn_if_escaped() -> None:
    """After the command: one warning when some character had to be escaped."""
    if not _escaped:
        return
    encoding = getattr(sys.stdout, "encoding", None) or "?"
    sys.stderr.write(
        f"mqctl: warning: stdout's encoding ({encoding}) cannot show some characters: they are "
        "written as \\uXXXX escapes; for the characters themselves set PYTHONIOENCODING=utf-8 "
        "or a UTF-8 locale\n"
    )
    sys.stderr.flush()


def quiet_stdout() -> None:
    """stdout's reader went away: point fd 1 at /dev/null, so that Python's flush at exit (and
    anything still buffered) goes nowhere instead of raising again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.stdout.fileno())
        finally:
            os.close(devnull)
    except (OSError, ValueError, AttributeError):  # not a real file (a test runner's buffer)
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115


def stdout_broken() -> bool:
    """Whether stdout is a pipe nobody reads any more (a BrokenPipeError from elsewhere, a
    socket say, is an error to report, not a reader that is done)."""
    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError, AttributeError):
        return True  # not a real file: the error can only have come from writing to it
    import select

    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(ev & (select.POLLERR | select.POLLHUP) for _fd, ev in poller.poll(0))


def flush_stdout() -> None:
    """Flush stdout now, where a closed pipe can still be caught (not in Python's exit)."""
    sys.stdout.flush()
