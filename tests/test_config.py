"""The profile file (mqctl/config.py): checked whole, once; every fault is exit 2 naming the file
and the key, never an internal error, never a silent choice."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mqctl.cli.app import app

runner = CliRunner()

BAD = [
    # (case, file bytes, the message after 'config file PATH: ')
    (
        "tls-string",
        b'[profiles.p]\nnamesrv = "h:9876"\ntls = "yes"\n',
        "profiles.p.tls: expected true or false, got 'yes'",
    ),
    (
        "tls-number",
        b'[profiles.p]\nnamesrv = "h:9876"\ntls = 1\n',
        "profiles.p.tls: expected true or false, got a number",
    ),
    (
        "stores-and-namesrv",
        b'[profiles.p]\nnamesrv = "h:9876"\n[profiles.p.stores]\nbroker-a = "/data/a"\n',
        "profiles.p: names two clusters: give stores or namesrv, not both",
    ),
    ("profiles-array", b"profiles = [1, 2]\n", "profiles: expected tables [profiles.NAME], got an array"),
    ("profiles-string", b'profiles = "p"\n', "profiles: expected tables [profiles.NAME], got 'p'"),
    ("profile-not-table", b"[profiles]\np = 3\n", "profiles.p: expected a table, got a number"),
    (
        "not-utf8",
        b'[profiles.p]\nnamesrv = "h\xff:9876"\n',
        "not UTF-8 text (byte 25); TOML files are UTF-8",
    ),  # \xff: 13 bytes of "[profiles.p]\n" + 12 of 'namesrv = "h'
    (
        "utf16",
        '[profiles.p]\nnamesrv = "h:9876"\n'.encode("utf-16"),
        "not UTF-8 text (byte 0); TOML files are UTF-8",
    ),
    (
        "not-toml",
        b"[profiles.p\n",
        "not valid TOML: Expected ']' at the end of a table declaration (at line 1, column 12)",
    ),
    (
        "typo-key",
        b'[profiles.p]\nnamesvr = "h:9876"\n',
        "profiles.p.namesvr: unknown key (known: stores, namesrv, access_key, secret_key, tls, tls_insecure, tls_ca, tls_cert, tls_key, exporter)",
    ),
    ("typo-top", b'defualt = "p"\n', "defualt: unknown key (known: default, profiles)"),
    (
        "namesrv-number",
        b"[profiles.p]\nnamesrv = 9876\n",
        "profiles.p.namesrv: expected a non-empty string, got a number",
    ),
    (
        "namesrv-blank",
        b'[profiles.p]\nnamesrv = "  "\n',
        "profiles.p.namesrv: expected a non-empty string, got '  '",
    ),
    (
        "store-path-number",
        b"[profiles.p.stores]\nbroker-a = 1\n",
        "profiles.p.stores.broker-a: expected a non-empty string, got a number",
    ),
    (
        "stores-empty",
        b"[profiles.p.stores]\n",
        "profiles.p.stores: expected a table of broker name = store path",
    ),
    (
        "stores-string",
        b'[profiles.p]\nstores = "/data"\n',
        "profiles.p.stores: expected a table of broker name = store path",
    ),
    (
        "default-missing",
        b'default = "q"\n[profiles.p]\nnamesrv = "h:1"\n',
        "default: names no profile: 'q' (profiles: p)",
    ),
    ("default-number", b"default = 1\n", "default: expected a non-empty string, got a number"),
    # the secret itself is never printed, only its kind
    (
        "secret-number",
        b'[profiles.p]\nnamesrv = "h:1"\nsecret_key = 271828\n',
        "profiles.p.secret_key: expected a non-empty string, got a number",
    ),
]


def run(config: str, *args: str):  # type: ignore[no-untyped-def]
    env = {"MQCTL_CONFIG": config, "NAMESRV_ADDR": "", "MQCTL_PROFILE": ""}
    return runner.invoke(app, ["consumerProgress", *args], env=env)


def error_line(result) -> str:  # type: ignore[no-untyped-def]
    lines = result.stderr.splitlines()
    assert lines and lines[0].startswith("mqctl: error: ") and "Traceback" not in result.stderr, result.stderr
    assert all(x.startswith("hint: ") for x in lines[1:]), result.stderr
    return lines[0].removeprefix("mqctl: error: ")


@pytest.mark.parametrize(("case", "data", "message"), BAD, ids=[c[0] for c in BAD])
@pytest.mark.parametrize("args", [["--profile", "p"], []], ids=["--profile", "default"])
def test_a_bad_profile_file_is_exit_2_naming_file_and_key(tmp_path: Path, case, data, message, args) -> None:  # type: ignore[no-untyped-def]
    cfg = tmp_path / "config.toml"
    cfg.write_bytes(data)
    r = run(str(cfg), *args)
    assert r.exit_code == 2, r.stderr
    assert error_line(r) == f"config file {cfg}: {message}"
    assert "271828" not in r.stderr


def test_the_whole_file_is_checked_whichever_profile_is_asked(tmp_path: Path, demo_store) -> None:  # type: ignore[no-untyped-def]
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        f'[profiles.ok.stores]\nbroker-a = "{demo_store.root}"\n[profiles.bad]\nnamesrv = "h:1"\ntls = "no"\n'
    )
    r = run(str(cfg), "--profile", "ok", "-g", "order-analytics")
    assert r.exit_code == 2 and error_line(r).endswith("profiles.bad.tls: expected true or false, got 'no'")


def test_a_good_file_still_works(tmp_path: Path, demo_store) -> None:  # type: ignore[no-untyped-def]
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        f'default = "demo"\n[profiles.demo.stores]\nbroker-a = "{demo_store.root}"\n'
        '[profiles.live]\nnamesrv = "10.0.0.1:9876;10.0.0.2:9876"\naccess_key = "ops"\nsecret_key = "s"\ntls = true\n'
    )
    for args in (["--profile", "demo"], []):
        r = run(str(cfg), *args, "-g", "order-analytics", "-o", "json")
        assert r.exit_code == 0, r.stderr
        assert '"group": "order-analytics"' in r.stdout


FILES = [
    # (case, what $MQCTL_CONFIG names, --profile, expected message (PATH = that name))
    ("missing-named", "{tmp}/nope.toml", "p", "config file PATH ($MQCTL_CONFIG) does not exist"),
    ("missing-named-no-profile", "{tmp}/nope.toml", None, "config file PATH ($MQCTL_CONFIG) does not exist"),
    ("a-directory", "{tmp}", "p", "config file PATH: cannot read it: Is a directory"),
    ("dev-zero", "/dev/zero", "p", "config file PATH: larger than 1048576 bytes, not a profile file"),
]


@pytest.mark.parametrize(("case", "name", "profile", "message"), FILES, ids=[c[0] for c in FILES])
def test_config_file_that_cannot_be_read(
    tmp_path: Path, case: str, name: str, profile: str | None, message: str
) -> None:
    path = name.format(tmp=tmp_path)
    r = run(path, *(["--profile", profile] if profile else []))
    assert r.exit_code == 2, r.stderr
    assert error_line(r) == message.replace("PATH", path)


def test_unknown_profile_without_a_file_says_there_is_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    r = runner.invoke(
        app, ["consumerProgress", "--profile", "p"], env={"MQCTL_CONFIG": "", "NAMESRV_ADDR": ""}
    )
    assert r.exit_code == 2
    assert (
        error_line(r) == f"unknown profile 'p': there is no config file {tmp_path / 'mqctl' / 'config.toml'}"
    )


def test_unknown_profile_lists_the_profiles(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text('[profiles.b]\nnamesrv = "h:1"\n[profiles.a]\nnamesrv = "h:2"\n')
    r = run(str(cfg), "--profile", "zz")
    assert r.exit_code == 2 and error_line(r) == f"unknown profile 'zz' in {cfg} (profiles: a, b)"


def test_store_and_namesrv_flags_never_read_the_file(tmp_path: Path, demo_store) -> None:  # type: ignore[no-untyped-def]
    cfg = tmp_path / "config.toml"
    cfg.write_bytes(b"profiles = [1, 2]\n")
    r = run(str(cfg), "-g", "order-analytics", "--store", f"broker-a={demo_store.root}")
    assert r.exit_code == 0, r.stderr
    assert os.path.exists(cfg)
