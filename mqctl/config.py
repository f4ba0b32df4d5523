"""Named clusters from a TOML file: $MQCTL_CONFIG or ~/.config/mqctl/config.toml.

default = "prod"            # optional: profile used when no --store/--profile is given

[profiles.prod.stores]      # broker name = store root
broker-a = "/data/rocketmq/a/store"
broker-b = "/data/rocketmq/b/store"

[profiles.live]             # a running cluster instead
namesrv = "10.0.0.1:9876;10.0.0.2:9876"
access_key = "ops"          # ACL signing (keep the file private: chmod 600)
secret_key = "..."
tls = true
tls_ca = "~/certs/rocketmq-ca.pem"      # optional: the CA to verify servers against
tls_cert = "~/certs/mqctl.pem"          # optional: mutual TLS, with tls_key
tls_key = "~/certs/mqctl.key"
# tls_insecure = true                   # test clusters only: no verification
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from mqctl.errors import UsageError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


@dataclass(frozen=True)
class Profile:
    name: str
    stores: dict[str, Path] = field(default_factory=dict)
    namesrv: str | None = None
    access_key: str | None = field(default=None, repr=False)
    secret_key: str | None = field(default=None, repr=False)
    tls: bool = False
    tls_insecure: bool = False
    tls_ca: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None


def config_path() -> Path:
    env = os.environ.get("MQCTL_CONFIG")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "mqctl" / "config.toml"


def _load() -> dict:
    path = config_path()
    if not path.exists():
        return {}
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise UsageError(f"cannot read config file {path}: {e}") from None


def default_profile_name() -> str | None:
    value = _load().get("default")
    return value if isinstance(value, str) else None


def load_profile(name: str) -> Profile:
    data = _load()
    profiles = data.get("profiles", {})
    if name not in profiles:
        known = ", ".join(sorted(profiles)) or "none"
        raise UsageError(f"unknown profile {name!r} in {config_path()} (known: {known})")
    raw = profiles[name]
    stores_raw = raw.get("stores", {})
    if not isinstance(stores_raw, dict):
        raise UsageError(f"profile {name!r}: 'stores' must be a table of broker name = store path")
    stores = {str(k): Path(str(v)).expanduser() for k, v in stores_raw.items()}

    def text(key: str) -> str | None:
        value = raw.get(key)
        if value is not None and not isinstance(value, str):
            raise UsageError(f"profile {name!r}: {key!r} must be a string")
        return value

    def path(key: str) -> str | None:
        value = text(key)
        return str(Path(value).expanduser()) if value else None

    for key in ("tls", "tls_insecure"):
        if key in raw and not isinstance(raw[key], bool):
            raise UsageError(f"profile {name!r}: {key!r} must be true or false")
    return Profile(
        name=name,
        stores=stores,
        namesrv=text("namesrv"),
        access_key=text("access_key"),
        secret_key=text("secret_key"),
        tls=raw.get("tls") is True,
        tls_insecure=raw.get("tls_insecure") is True,
        tls_ca=path("tls_ca"),
        tls_cert=path("tls_cert"),
        tls_key=path("tls_key"),
    )
