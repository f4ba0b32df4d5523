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

    return Profile(
        name=name,
        stores=stores,
        namesrv=text("namesrv"),
        access_key=text("access_key"),
        secret_key=text("secret_key"),
        tls=raw.get("tls") is True,
    )


def profile_section(name: str, key: str) -> dict | None:
    """A table of profile ``name`` that its own module reads (e.g. ``exporter``: the exporter's
    thresholds, ops/alertrules.py); None when the profile has none."""
    raw = _load().get("profiles", {}).get(name)
    if raw is None:
        load_profile(name)  # the unknown-profile error, with the known names
    value = (raw or {}).get(key)
    if value is not None and not isinstance(value, dict):
        raise UsageError(f"profile {name!r}: {key!r} must be a table ([profiles.{name}.{key}])")
    return value
