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

The whole file is checked once, when it is first needed (``load_config``): every key's type, no
unknown key (a typo such as ``namesvr`` would otherwise be ignored), one cluster per profile
(``stores`` or ``namesrv``, not both), a ``default`` that names a profile. Any fault is a usage
error (exit 2) naming the file and the key. A file named by $MQCTL_CONFIG must exist; the default
path may be absent (no profiles).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mqctl.errors import UsageError
from mqctl.records import field, record

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

MAX_CONFIG_BYTES = 1 << 20  # a profile file is a few hundred bytes; /dev/zero is not one
PROFILE_KEYS = (
    "stores",
    "namesrv",
    "access_key",
    "secret_key",
    "tls",
    "tls_insecure",
    "tls_ca",
    "tls_cert",
    "tls_key",
    "exporter",
)
# Tables of a profile that their own module checks (the exporter's thresholds: ops/alertrules.py).
SECTION_KEYS = ("exporter",)
_HINT = "fix the file; its format is in the README, 'Pointing mqctl at a cluster'"


@record(frozen=True)
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
    sections: dict[str, dict[str, Any]] = field(default_factory=dict)  # SECTION_KEYS' tables


@record(frozen=True)
class Config:
    path: Path
    default: str | None = None
    profiles: dict[str, Profile] = field(default_factory=dict)
    exists: bool = True


def config_path() -> Path:
    env = os.environ.get("MQCTL_CONFIG")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "mqctl" / "config.toml"


def load_config() -> Config:
    """The config file, read and checked whole (see the module's doc)."""
    path = config_path()
    named = bool(os.environ.get("MQCTL_CONFIG"))
    if not path.exists():
        if named:
            raise UsageError(
                f"config file {path} ($MQCTL_CONFIG) does not exist",
                "check $MQCTL_CONFIG, or unset it to use ~/.config/mqctl/config.toml",
            )
        return Config(path, exists=False)
    return _validate(path, _read(path))


def _read(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_CONFIG_BYTES + 1)
    except OSError as e:
        raise UsageError(f"config file {path}: cannot read it: {e.strerror or e}", _HINT) from None
    if len(data) > MAX_CONFIG_BYTES:
        raise UsageError(
            f"config file {path}: larger than {MAX_CONFIG_BYTES} bytes, not a profile file", _HINT
        )
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise UsageError(
            f"config file {path}: not UTF-8 text (byte {e.start}); TOML files are UTF-8", _HINT
        ) from None
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"config file {path}: not valid TOML: {e}", _HINT) from None


def _fail(path: Path, key: str, problem: str) -> UsageError:
    return UsageError(f"config file {path}: {key}: {problem}", _HINT)


def _text(path: Path, key: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _fail(path, key, f"expected a non-empty string, got {_shown(value)}")
    return value.strip()


def _shown(value: Any) -> str:
    """A wrong value as the message shows it: a string quoted, anything else by its TOML kind
    (never its value: the key may be secret_key)."""
    if isinstance(value, str):
        return repr(value)
    kinds = {bool: "a boolean", int: "a number", float: "a number", list: "an array", dict: "a table"}
    return kinds.get(type(value), "a date or time")


def _validate(path: Path, data: Mapping[str, Any]) -> Config:
    unknown = sorted(set(data) - {"default", "profiles"})
    if unknown:
        raise _fail(path, unknown[0], "unknown key (known: default, profiles)")
    raw_profiles = data.get("profiles", {})
    if not isinstance(raw_profiles, dict):
        raise _fail(path, "profiles", f"expected tables [profiles.NAME], got {_shown(raw_profiles)}")
    profiles = {name: _profile(path, name, raw) for name, raw in raw_profiles.items()}
    default = None
    if "default" in data:
        default = _text(path, "default", data["default"])
        if default not in profiles:
            known = ", ".join(sorted(profiles)) or "none"
            raise _fail(path, "default", f"names no profile: {default!r} (profiles: {known})")
    return Config(path, default, profiles)


def _profile(path: Path, name: str, raw: Any) -> Profile:
    key = f"profiles.{name}"
    if not name.strip():
        raise _fail(path, key, "a profile needs a name")
    if not isinstance(raw, dict):
        raise _fail(path, key, f"expected a table, got {_shown(raw)}")
    unknown = sorted(set(raw) - set(PROFILE_KEYS))
    if unknown:
        raise _fail(path, f"{key}.{unknown[0]}", f"unknown key (known: {', '.join(PROFILE_KEYS)})")
    if "stores" in raw and "namesrv" in raw:
        raise _fail(path, key, "names two clusters: give stores or namesrv, not both")
    stores: dict[str, Path] = {}
    if "stores" in raw:
        table = raw["stores"]
        if not isinstance(table, dict) or not table:
            raise _fail(path, f"{key}.stores", "expected a table of broker name = store path")
        for broker, root in table.items():
            if not broker.strip():
                raise _fail(path, f"{key}.stores", "a broker needs a name")
            stores[broker.strip()] = Path(_text(path, f"{key}.stores.{broker}", root)).expanduser()
    flags = {k: raw.get(k, False) for k in ("tls", "tls_insecure")}
    for k, v in flags.items():
        if not isinstance(v, bool):
            raise _fail(path, f"{key}.{k}", f"expected true or false, got {_shown(v)}")

    def text(k: str) -> str | None:
        return _text(path, f"{key}.{k}", raw[k]) if k in raw else None

    sections = {}
    for k in SECTION_KEYS:
        if k in raw and not isinstance(raw[k], dict):
            raise _fail(path, f"{key}.{k}", f"expected a table [{key}.{k}], got {_shown(raw[k])}")
        if k in raw:
            sections[k] = raw[k]

    def file(k: str) -> str | None:
        value = text(k)
        return str(Path(value).expanduser()) if value else None

    return Profile(
        name,
        stores,
        text("namesrv"),
        text("access_key"),
        text("secret_key"),
        flags["tls"],
        sections=sections,
        tls_insecure=flags["tls_insecure"],
        tls_ca=file("tls_ca"),
        tls_cert=file("tls_cert"),
        tls_key=file("tls_key"),
    )


def default_profile_name() -> str | None:
    return load_config().default


def load_profile(name: str) -> Profile:
    config = load_config()
    if name in config.profiles:
        return config.profiles[name]
    if not config.exists:
        raise UsageError(
            f"unknown profile {name!r}: there is no config file {config.path}",
            "create it (see the README, 'Pointing mqctl at a cluster') or point $MQCTL_CONFIG at one",
        )
    known = ", ".join(sorted(config.profiles)) or "none"
    raise UsageError(f"unknown profile {name!r} in {config.path} (profiles: {known})")


def profile_section(name: str, key: str) -> dict[str, Any] | None:
    """A table of profile ``name`` that its own module checks (``exporter``: the exporter's
    thresholds, ops/alertrules.py); None when the profile has none."""
    return load_profile(name).sections.get(key)
