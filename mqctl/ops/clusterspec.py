"""Which cluster a command line names and how to talk to it: the cluster flags' values (and the
config file's profile, ``$NAMESRV_ADDR``) resolved into the ``BackendTarget`` and
``BackendOptions`` that ``backends.open`` opens. cli/cluster.py declares the flags."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mqctl.errors import UsageError
from mqctl.records import field, record

if TYPE_CHECKING:
    from mqctl.backends.base import Backend
    from mqctl.backends.open import BackendOptions
    from mqctl.config import Profile
    from mqctl.model import BackendTarget


def parse_store_specs(specs: list[str]) -> dict[str, Path]:
    stores: dict[str, Path] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        name, path = name.strip(), path.strip()
        if not sep or not name or not path:
            raise UsageError(f"--store {spec!r}: expected NAME=PATH, e.g. --store broker-a=/data/store")
        if name in stores:
            raise UsageError(f"--store: broker name {name!r} given twice")
        stores[name] = Path(path).expanduser()
    return stores


def _one_name_each(stores: tuple[tuple[str, str], ...], where: str) -> tuple[tuple[str, str], ...]:
    """One store root under two broker names would be read twice (its lag counted twice, every
    gate judging the double) and written twice by a reset: refused, both names said."""
    seen: dict[str, tuple[str, str]] = {}
    for name, path in stores:
        real = os.path.realpath(path)
        if real in seen:
            first, first_path = seen[real]
            same = path if first_path == path else f"{first_path} and {path}"
            raise UsageError(
                f"{where}: {first} and {name} name the same store root ({same})",
                "each broker has a store of its own: give each broker's root once",
            )
        seen[real] = (name, path)
    return stores


def _profile(profile: str | None) -> Profile:
    from mqctl.config import default_profile_name, load_profile

    name = profile or default_profile_name()
    if not name:
        raise UsageError(
            "no cluster given",
            "pass --store NAME=PATH (repeatable), -n HOST:9876, or --profile NAME (see `mqctl --help`)",
        )
    return load_profile(name)


@record(frozen=True)
class ClusterSpec:
    """The cluster flags of one command line (cli/cluster.Cluster is this with the flags declared)."""

    store: list[str] | None = None
    profile: str | None = None
    namesrv: str | None = None
    timeout: float = 10.0
    access_key: str | None = field(default=None, repr=False)
    secret_key: str | None = field(default=None, repr=False)
    tls: bool = False
    tls_insecure: bool = False
    tls_ca: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    mqadmin_version: str | None = None
    name: str | None = None  # mqadmin's -c: accepted, not used

    def target(self) -> BackendTarget:
        """The cluster the user named: --store, else -n, else --profile, else $NAMESRV_ADDR (as
        mqadmin reads it), else the config file's default profile."""
        from mqctl.model import BackendKind, BackendTarget

        if self.store and self.namesrv:
            raise UsageError("-n/--namesrvAddr and --store name two different clusters: give one of them")
        if self.store:
            stores = tuple((n, str(p)) for n, p in parse_store_specs(self.store).items())
            return BackendTarget(BackendKind.STORE, _one_name_each(stores, "--store"))
        if self.namesrv:
            return BackendTarget(BackendKind.LIVE, namesrv=self.namesrv.strip())
        if not self.profile and os.environ.get("NAMESRV_ADDR", "").strip():
            return BackendTarget(BackendKind.LIVE, namesrv=os.environ["NAMESRV_ADDR"].strip())
        prof = _profile(self.profile)
        if prof.stores:
            stores = tuple((n, str(p)) for n, p in prof.stores.items())
            return BackendTarget(BackendKind.STORE, _one_name_each(stores, f"profile {prof.name!r}"))
        if prof.namesrv:
            return BackendTarget(BackendKind.LIVE, namesrv=prof.namesrv)
        raise UsageError(
            f"profile {prof.name!r} names no cluster",
            'add a [profiles.NAME.stores] table or namesrv = "host:9876"',
        )

    def options(self, *, ignore_abort_file: bool = False) -> BackendOptions:
        """Flags first, then the profile's keys and TLS switch (a profile keeps a secret out of ps)."""
        from mqctl.backends.open import BackendOptions

        version = None
        if self.mqadmin_version:
            from mqctl.model.versions import version_ordinal

            try:
                version = version_ordinal(self.mqadmin_version)
            except ValueError as exc:
                raise UsageError(f"--mqadmin-version: {exc}") from None
        prof = _profile(self.profile) if self.profile else None
        access, secret = self.access_key, self.secret_key
        if prof is not None and not (access and secret):
            access, secret = access or prof.access_key, secret or prof.secret_key
        tls = _tls(self, prof)
        return BackendOptions(
            ignore_abort_file=ignore_abort_file,
            timeout=self.timeout,
            access_key=access,
            secret_key=secret,
            version=version,
            **tls,
        )

    def open(self, *, ignore_abort_file: bool = False) -> Backend:
        """The backend of ``target()``, opened by the one shared opener (undo reopens the same way)."""
        from mqctl.backends.open import open_backend

        return open_backend(self.target(), self.options(ignore_abort_file=ignore_abort_file))


def _tls(flags: ClusterSpec, prof: Profile | None) -> dict[str, Any]:
    """The TLS options: each flag, else the profile's key; any of them turns TLS on."""
    pick = {
        "tls_insecure": flags.tls_insecure or (prof is not None and prof.tls_insecure),
        "tls_ca": flags.tls_ca or (prof.tls_ca if prof else None),
        "tls_cert": flags.tls_cert or (prof.tls_cert if prof else None),
        "tls_key": flags.tls_key or (prof.tls_key if prof else None),
    }
    on = flags.tls or (prof is not None and prof.tls) or any(pick.values())
    return {"tls": bool(on), **pick}
