"""Open the backend a target names: the one function the CLI and an undo (from its journal) use."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from mqctl.errors import NotAvailableError, UsageError
from mqctl.model import BackendKind, BackendTarget
from mqctl.records import field, record

if TYPE_CHECKING:
    from mqctl.backends.base import Backend


@record(frozen=True)
class BackendOptions:
    """Options only one kind of backend understands, handed to its constructor."""

    ignore_abort_file: bool = False  # store: write although an abort file exists
    timeout: float = 10.0  # live: the whole command's deadline, seconds
    request_timeout: float = 5.0  # live: each request's
    access_key: str | None = field(default=None, repr=False)  # live: ACL signing
    secret_key: str | None = field(default=None, repr=False)
    tls: bool = False
    tls_insecure: bool = False
    tls_ca: str | None = None  # PEM bundle to verify servers against (else the system store)
    tls_cert: str | None = None  # client certificate (PEM) for mutual TLS
    tls_key: str | None = None  # its unencrypted private key (PEM)
    version: int | None = None  # --mqadmin-version: the RocketMQ release to follow (else detected)
    lock_timeout: float = 30.0  # store: seconds a write waits for another mqctl reset's lock
    on_lock_wait: Callable[[str], None] | None = field(default=None, compare=False, repr=False)


def open_backend(target: BackendTarget, options: BackendOptions | None = None) -> Backend:
    opts = options or BackendOptions()
    if target.kind is BackendKind.STORE:
        from mqctl.backends.store import StoreBackend

        return StoreBackend(
            {name: Path(root) for name, root in target.stores},
            ignore_abort_file=opts.ignore_abort_file,
            version=opts.version,
            lock_timeout=opts.lock_timeout,
            on_lock_wait=opts.on_lock_wait,
        )
    if target.kind is BackendKind.LIVE and target.namesrv:
        from mqctl.backends.live import LiveBackend

        creds = None
        if opts.access_key or opts.secret_key:
            from mqctl.remoting.signing import Credentials

            if not (opts.access_key and opts.secret_key):
                raise UsageError("request signing needs both an access key and a secret key")
            creds = Credentials(opts.access_key, opts.secret_key)
        tls = None
        if opts.tls or opts.tls_insecure or opts.tls_ca or opts.tls_cert or opts.tls_key:
            from mqctl.remoting.tls import TlsSettings

            tls = TlsSettings(opts.tls_insecure, opts.tls_ca, opts.tls_cert, opts.tls_key)
        return LiveBackend(
            target.namesrv,
            timeout=opts.timeout,
            request_timeout=min(opts.request_timeout, opts.timeout),
            credentials=creds,
            tls=tls or False,
            version=opts.version,
        )
    raise NotAvailableError(f"cannot open a {target.kind!r} backend ({target.describe()})")
