"""Broadcasting clients' offsets, read from the ``offsets.json`` files they keep (LocalFileOffsetStore).

Not a cluster backend: a source of committed offsets beside the broker's (DESIGN.md). A PATH is
one of

* a client's file: ``<dir>/<clientId>/<group>/offsets.json`` (a copy elsewhere is taken as given);
* a client's offsets directory (``rocketmq.client.localOffsetStoreDir``, by default
  ``~/.rocketmq_offsets``), holding ``<clientId>/<group>/offsets.json`` per client instance;
* a directory of copies gathered from many hosts, e.g. ``HOST/.rocketmq_offsets/<clientId>/...``:
  the first directory below PATH on the way to a file (``.rocketmq_offsets`` itself skipped) is
  the file's host.

Each file is loaded with the client's own rule (the file, else its ``.bak``); a file that cannot
be read is a ``StoreCorruptError`` naming it (exit 6), never "no offsets". A group directory that
holds only ``offsets.json.bak`` is a client whose last write was cut short: the client reads the
``.bak``, so does mqctl.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from mqctl.errors import NotFoundError, StoreCorruptError, StoreError
from mqctl.model.broadcast import CLIENT_ID_SEPARATOR, ClientOffsets
from mqctl.records import record
from mqctl.store.clientoffsets import BAK_SUFFIX, CLIENT_OFFSETS_FILE, DEFAULT_STORE_DIR, load_client_offsets
from mqctl.store.configread import DENIED_HINT

__all__ = ["ClientFile", "client_groups", "find_client_files", "load", "read_client_offsets"]

# <clientId>/<group>/offsets.json under HOST/<store dir>/ under PATH: 5 levels; a little room for
# deeper gatherings (DATE/HOST/...), never an unbounded walk.
MAX_DEPTH = 8


@record(frozen=True)
class ClientFile:
    """Where one client instance's file for a group was found."""

    path: Path  # the offsets.json (it may be missing when only its .bak is there)
    group: str | None
    client_id: str | None
    host: str | None


def _looks_like_client_id(name: str) -> bool:
    # ClientConfig.buildMQClientId: clientIP@instanceName[@unitName][@STREAM]
    ip, sep, rest = name.partition(CLIENT_ID_SEPARATOR)
    return bool(ip and sep and rest)


def _host(rel_parts: Sequence[str]) -> str | None:
    # rel_parts: the directories between PATH and <clientId>
    return next((p for p in rel_parts if p != DEFAULT_STORE_DIR), None)


def _given_file(path: Path, group: str) -> ClientFile:
    parent, grand = path.parent.name, path.parent.parent.name
    if not _looks_like_client_id(grand):
        return ClientFile(path, None, None, None)  # a copy outside the client's layout: as given
    if parent != group:
        raise StoreCorruptError(
            f"{path} is group {parent}'s offsets.json (client {grand}), not {group}'s",
            hint=f"give the files under <clientId>/{group}/, or the directory that holds them",
        )
    return ClientFile(path, parent, grand, None)


def _walk_error(exc: OSError) -> None:
    raise StoreError(f"cannot read {exc.filename}: {exc.strerror or exc}", hint=DENIED_HINT)


def _walk(root: Path) -> Iterable[tuple[Path, tuple[str, ...]]]:
    """(group directory, its relative parts) for every directory under ``root`` that holds an
    offsets.json or its .bak, ``MAX_DEPTH`` deep at most, symlinked directories not followed."""
    base = len(root.parts)
    for dirpath, dirnames, filenames in os.walk(root, onerror=_walk_error):
        here = Path(dirpath)
        if len(here.parts) - base >= MAX_DEPTH:
            dirnames.clear()
        dirnames.sort()
        if CLIENT_OFFSETS_FILE in filenames or CLIENT_OFFSETS_FILE + BAK_SUFFIX in filenames:
            yield here, here.parts[base:]


def _found_in(root: Path, skipped: list[Path]) -> list[ClientFile]:
    """The client files under ``root``; an offsets.json outside the ``<clientId>/<group>/``
    layout names no group: it goes to ``skipped`` (given by name, it is read as given)."""
    found = []
    for group_dir, rel in _walk(root):
        if len(rel) < 2 or not _looks_like_client_id(rel[-2]):
            skipped.append(group_dir / CLIENT_OFFSETS_FILE)
            continue
        found.append(ClientFile(group_dir / CLIENT_OFFSETS_FILE, rel[-1], rel[-2], _host(rel[:-2])))
    return found


def _files_under(raw: Path, group: str | None, skipped: list[Path] | None = None) -> list[ClientFile]:
    path = Path(raw)
    try:
        is_dir = path.is_dir()
        exists = is_dir or path.exists()
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}", hint=DENIED_HINT) from None
    if not exists:
        raise StoreError(
            f"{path}: no such file or directory", hint="give a client's offsets.json or its directory"
        )
    if is_dir:
        return _found_in(path, [] if skipped is None else skipped)
    if group is None:  # the overview: a file's group is the directory it sits in, if laid out so
        parent, grand = path.parent.name, path.parent.parent.name
        return [
            ClientFile(path, parent, grand, None)
            if _looks_like_client_id(grand)
            else ClientFile(path, None, None, None)
        ]
    return [_given_file(path, group)]


def client_groups(paths: Sequence[Path]) -> dict[str, list[ClientFile]]:
    """Every group's client files under ``paths`` (the overview), each file once, groups by name;
    a file not laid out as ``<clientId>/<group>/offsets.json`` names no group and is left out."""
    seen: set[str] = set()
    out: dict[str, list[ClientFile]] = {}
    for raw in paths:
        for f in _files_under(raw, None):
            real = os.path.realpath(f.path)
            if f.group is None or real in seen:
                continue
            seen.add(real)
            out.setdefault(f.group, []).append(f)
    return {
        g: sorted(fs, key=lambda f: (f.host or "", f.client_id or "", str(f.path)))
        for g, fs in sorted(out.items())
    }


def find_client_files(paths: Sequence[Path], group: str) -> list[ClientFile]:
    """Every client file of ``group`` under ``paths``, each once, ordered by host, clientId, path.

    A PATH that does not exist is a ``StoreError``; a file given by name that sits in another
    group's directory is a ``StoreCorruptError``; nothing of ``group`` anywhere is a
    ``NotFoundError`` naming the groups that were found.
    """
    out: dict[str, ClientFile] = {}
    others: set[str] = set()
    skipped: list[Path] = []
    for raw in paths:
        for f in _files_under(raw, group, skipped):
            if f.group is not None and f.group != group:
                others.add(f.group)
                continue
            out.setdefault(os.path.realpath(f.path), f)
    if not out:
        seen = f" (found groups: {', '.join(sorted(others))})" if others else ""
        where = ", ".join(str(p) for p in paths)
        hint = "a broadcasting client keeps <dir>/<clientId>/<group>/offsets.json (dir: ~/.rocketmq_offsets)"
        if skipped:
            more = f" and {len(skipped) - 1} more lie" if len(skipped) > 1 else " lies"
            hint += f"; {skipped[0]}{more} outside that layout: give such a file by name"
        raise NotFoundError(f"no offsets.json of group {group} under {where}{seen}", hint=hint)
    return sorted(out.values(), key=lambda f: (f.host or "", f.client_id or "", str(f.path)))


def _mtime_ms(path: Path) -> int | None:
    for p in (path, path.with_name(path.name + BAK_SUFFIX)):
        try:
            return os.stat(p).st_mtime_ns // 1_000_000
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise StoreError(f"cannot read {p}: {exc.strerror or exc}", hint=DENIED_HINT) from None
    return None


def read_client_offsets(
    paths: Sequence[Path], group: str, *, retries: int = 3, retry_delay: float = 0.05
) -> list[ClientOffsets]:
    """Each client instance's offsets for ``group`` found under ``paths`` (:func:`find_client_files`),
    loaded as the client would load them."""
    return [load(f, retries=retries, retry_delay=retry_delay) for f in find_client_files(paths, group)]


def load(f: ClientFile, *, retries: int = 3, retry_delay: float = 0.05) -> ClientOffsets:
    """One found file loaded as its client would load it (the file, else its ``.bak``)."""
    mtime = _mtime_ms(f.path)
    loaded = load_client_offsets(f.path, retries=retries, retry_delay=retry_delay)
    table = loaded.value
    return ClientOffsets(
        group=f.group,
        client_id=f.client_id,
        host=f.host,
        path=str(f.path),
        read_from=str(loaded.path) if loaded.path is not None else None,
        mtime_ms=mtime,
        offsets=table.entries if table is not None else (),
        dialect=table.dialect if table is not None else None,
        warning=loaded.warning,
    )
