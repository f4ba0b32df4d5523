"""Open the backend a target names: the one function the CLI and an undo (from its journal) use."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mqctl.errors import NotAvailableError
from mqctl.model import BackendTarget

if TYPE_CHECKING:
    from mqctl.backends.base import Backend


@dataclass(frozen=True)
class BackendOptions:
    """Options only one kind of backend understands, handed to its constructor."""

    ignore_abort_file: bool = False  # store: write although an abort file exists


def open_backend(target: BackendTarget, options: BackendOptions | None = None) -> Backend:
    opts = options or BackendOptions()
    if target.kind == "store":
        from mqctl.backends.store import StoreBackend

        return StoreBackend(
            {name: Path(root) for name, root in target.stores}, ignore_abort_file=opts.ignore_abort_file
        )
    raise NotAvailableError(
        f"the live-cluster backend ({target.describe()}) is not available in this version",
        "point mqctl at the broker's store directory with --store NAME=PATH",
    )
