"""Generated code compiled once per machine instead of once per process, as Python keeps a
module's bytecode in ``__pycache__``.

``@record`` writes each class's ``__init__`` as text and compiles it. Compiling costs ~0.1 ms a
class (~1 ms for the first, while the compiler warms up), and a live ``consumerProgress -g``
defines 28 records: ~4 ms of every call, for code that is the same in every call. The compiled
code objects are kept in ``mqctl/__pycache__/generated.<cache tag>.marshal``, keyed by their
source text (a changed class is a new key: nothing can be stale), and read with ``marshal`` like
a ``.pyc`` (~7 us a function).

The file is written at exit by a process that compiled something new (an exit handler, so that
run ends through Python's normal exit), atomically, and never when Python is told not to write
bytecode (``PYTHONDONTWRITEBYTECODE``, ``-B``) or cannot (a read-only install: every process then
compiles, as before). An unreadable or foreign file is ignored and replaced.
"""

from __future__ import annotations

import marshal
import os
import sys
from types import CodeType

# More entries than mqctl has generated functions (~60): past it the file starts again, so
# edits during development cannot grow it without bound.
MAX_ENTRIES = 512

_loaded: dict[str, CodeType] | None = None
_added: dict[str, CodeType] = {}


def _path() -> str:
    tag = sys.implementation.cache_tag or "nocache"
    return os.path.join(os.path.dirname(__file__), "__pycache__", f"generated.{tag}.marshal")


def _load() -> dict[str, CodeType]:
    try:
        with open(_path(), "rb") as f:
            table = marshal.load(f)
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(table, dict) or not all(
        isinstance(k, str) and isinstance(v, CodeType) for k, v in table.items()
    ):
        return {}
    return table


def compiled(source: str) -> CodeType:
    """``compile(source, "<string>", "exec")``, from the machine's cache when it is there."""
    global _loaded
    if _loaded is None:
        _loaded = _load()
    code = _loaded.get(source)
    if code is None:
        code = compile(source, "<string>", "exec")
        _loaded[source] = code
        if not _added and not sys.dont_write_bytecode and sys.implementation.cache_tag:
            import atexit

            atexit.register(_save)
        _added[source] = code
    return code


def _save() -> None:
    """Write the table (what was read plus what this process compiled) in one rename."""
    table = _load()
    if len(table) + len(_added) > MAX_ENTRIES:
        table = {}
    table.update(_added)
    path = _path()
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as f:
            marshal.dump(table, f)
        os.replace(tmp, path)
    except OSError:  # a read-only install: compile in every process, as without the cache
        try:
            os.unlink(tmp)
        except OSError:
            pass
